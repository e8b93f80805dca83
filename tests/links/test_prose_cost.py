"""Pathological prose costs linear work: markdown-it tries a link label at every `[`, and one that never closes used
to scan to the end of the paragraph each time."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import helpers

from cost import calls, growth
from flopkb.links import prose


@pytest.mark.parametrize(
    "unit",
    [
        lambda n: "[[a|" * n,  # no `]` at all
        lambda n: "[[a|" * n + "]",  # one `]` at the end
        lambda n: "[" * n + "]",
        lambda n: "[a](" * n,
        lambda n: "[x] [[a|b] " * n,
    ],
)
def test_brackets_that_never_close_cost_linear_work(unit: Callable[[int], str]) -> None:
    def parse(size: int) -> Callable[[], object]:
        text = unit(size)
        return lambda: prose.render(prose.parse(text), lambda link: "#")

    assert growth(parse, 500) < 2.3


def test_the_600_kb_bomb_costs_what_plain_text_with_links_costs() -> None:
    """`[[a|` repeated: markdown-it's label parser made about 110 calls a character, plain prose makes about 2."""
    bomb = "[[a|" * 2000
    assert calls(lambda: prose.parse(bomb)) < 12 * len(bomb)


def render(text: str) -> str:
    return prose.render(prose.parse(text), lambda target, anchor: f"/{target}/")


def markdown_its_own(text: str) -> str:
    """The page markdown-it's own label parser would give."""
    md = prose._markdown()
    mine = prose._parse_link_label
    original = md.helpers
    try:
        md.helpers = helpers  # type: ignore[assignment]
        prose._parse_link_label = helpers.parseLinkLabel  # type: ignore[assignment]
        return render(text)
    finally:
        md.helpers = original
        prose._parse_link_label = mine  # type: ignore[assignment]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[]()|#a \\`<>*\n", max_size=60))
def test_links_are_read_as_markdown_its_own_label_parser_reads_them(text: str) -> None:
    assert render(text) == markdown_its_own(text)


@pytest.mark.parametrize(
    "text", ["[](u)", "[[]](u)", "[a] [](v) [b]", "[[x]", "[[r][[a]]", "[x][]", "[\\]](u)", "[`]`](u)"]
)
def test_labels_that_close_at_once_or_late_are_read_as_markdown_it_reads_them(text: str) -> None:
    assert render(text) == markdown_its_own(text)

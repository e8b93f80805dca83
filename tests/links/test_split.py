"""`split-link`: a link broken over two lines, as prose wrapped at a fixed width breaks one, is told where its `[[`
stands, with the link as it reads on one line; a `[[` in code, or one that no joining makes a link, is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.links.prose import parse
from flopkb.links.split import split_links
from kbfixture import compile_kb, write_kb

_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
_ID = st.lists(_SEGMENT, min_size=2, max_size=4).map("-".join)
_WORDS = st.lists(_SEGMENT, min_size=2, max_size=4).map(" ".join)


@st.composite
def wrapped_link(draw: st.DrawFn) -> tuple[str, str, int]:
    """(prose holding one link broken at a `-` of its target or a space of its label, the link as written, the
    offset of its `[[`)."""
    target, label = draw(_ID), draw(st.one_of(st.none(), _WORDS))
    link = f"[[{target}|{label}]]" if label else f"[[{target}]]"
    breaks = [i + 1 for i, char in enumerate(link) if char == "-" or (char == " " and label)]
    at = draw(st.sampled_from(breaks))
    before, indent = draw(_WORDS) + " ", draw(st.sampled_from(["", "  ", "   "]))
    broken = link[:at].rstrip(" ") + "\n" + indent + link[at:].lstrip(" ")
    return f"{before}{broken} ends it.\n", link, len(before)


@settings(max_examples=150, deadline=None)
@given(wrapped_link())
def test_a_link_broken_at_a_hyphen_or_a_space_is_told_at_its_brackets_with_itself_joined(
    case: tuple[str, str, int],
) -> None:
    text, link, offset = case
    assert parse(text).links == ()  # the page shows it as text
    [split] = split_links(text, ())
    assert (split.offset, split.joined) == (offset, link)
    assert text.startswith(split.first, offset)


@settings(max_examples=100, deadline=None)
@given(wrapped_link(), st.sampled_from(["`{}`", "```\n{}```\n", "    {}"]))
def test_a_link_broken_in_code_is_code_and_never_told(case: tuple[str, str, int], code: str) -> None:
    text = code.format(case[0].replace("\n", "\n    ") if code.startswith(" ") else case[0])
    assert split_links(text, parse(text).links) == []


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("See [[facts/ridge-\n  point#ridge]].\n", "[[facts/ridge-point#ridge]]"),
        ("See [[a#b.\nc]].\n", "[[a#b.c]]"),
        ("See [[a|the well-\nknown one]].\n", "[[a|the well-known one]]"),
        ("See [[a|what e.g.\nfoo says]].\n", "[[a|what e.g. foo says]]"),
    ],
)
def test_a_break_inside_an_id_joins_without_a_space_and_one_in_a_label_as_words_do(text: str, joined: str) -> None:
    [split] = split_links(text, ())
    assert split.joined == joined


@pytest.mark.parametrize(
    "text",
    [
        "[[a]] on one line\nand [[b]] on the next\n",  # links, whole
        "a list [[1, 2],\n[3, 4]] of lists\n",  # no target: joined, still no link
        "[[a\n\nb]]\n",  # a blank line between: two paragraphs, however joined
    ],
)
def test_what_joining_cannot_make_a_link_is_not_told(text: str) -> None:
    assert split_links(text, parse(text).links) == []


def test_check_warns_at_the_brackets_in_the_file_and_the_rest_of_the_record_is_checked(tmp_path: Path) -> None:
    record = (
        "id: facts/a\nkind: fact\nstatement: |\n  The cost grows, as [[facts/b-\n  c]] shows, and [[nowhere]] too.\n"
    )
    write_kb(
        tmp_path,
        {
            "records/facts/a.yaml": record,
            "records/facts/b-c.yaml": "id: facts/b-c\nkind: fact\nstatement: Links to [[facts/a]].\n",
        },
    )
    found = [(d.code, d.line, d.column, d.message, d.hint) for d in compile_kb(tmp_path).diagnostics]
    assert (
        "split-link",
        4,
        22,
        "`[[facts/b-` goes on to the next line, but a link stands on one line: the page shows text",
        "join the two lines, so that the link reads `[[facts/b-c]]`",
    ) in found
    assert ("dangling-link", 5) in [(code, line) for code, line, *_ in found]

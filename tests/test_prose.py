"""flopkb.prose: one parse of a markdown field gives the links the checker reports and the HTML the page shows."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flopkb.prose import UNRESOLVED, Link, Prose, Scan, _crlf, _offset, _plain, ambiguous_emphasis, parse, render, scan


def links(text: str) -> list[tuple[str, str | None, str | None]]:
    return [(link.target, link.anchor, link.label) for link in parse(text).links]


def written(text: str) -> list[str]:
    return [text[link.offset : link.end] for link in parse(text).links]


def html(text: str) -> str:
    return render(parse(text), lambda target, anchor: f"/r/{target}" + (f"#{anchor}" if anchor else ""))


# ---------------------------------------------------------------------------
# The grammar


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[a]]", ("a", None, None)),
        ("[[a|the label]]", ("a", None, "the label")),
        ("[[a#f]]", ("a", "f", None)),
        ("[[a#f|label]]", ("a", "f", "label")),
        ("[[ a # f | label ]]", ("a", "f", "label")),
        ("[[a#|]]", ("a", None, None)),
        ("[[flops/x-y|a | b]]", ("flops/x-y", None, "a | b")),
        ("[[a\\|label]]", ("a", None, "label")),
        ("[[a\\#f\\|label]]", ("a", "f", "label")),
        ("[[a\\b]]", ("a\\b", None, None)),
        ("[[a|the `x` part]]", ("a", None, "the `x` part")),
        ("[[[a]]]", ("a", None, None)),
        ("![[a]]", ("a", None, None)),
    ],
)
def test_link_forms(text: str, expected: tuple[str, str | None, str | None]) -> None:
    assert links(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "[[ ]]", "[[#f]]", "[[a\\]]", "[[a|b\\]]", "[[a\\\\|b]]", "[[a\nb]]", "[[a]b]]", "[a]]",
        "`[[a]]`", "`` x [[a]] ``", "```\n[[a]]\n```", "~~~\n[[a]]\n~~~", "    [[a]]", "\t[[a]]",
        "- a\n\n      [[a]]", "> ```\n> [[a]]", "\\[[a]]", "[x]([[a]])", "[x](u \"[[a]]\")", "[x](<[[a]]>)",
        "[r]: [[a]]", "[r]: /u \"[[a]]\"", "[r]:\n  /u\n  '[[a]]'", "<http://x.y/[[a]]>", "[x [[a]]](u)",
        "[[a|b`]]`", "[[a|<http://x]]>", "| [[a|b]] |\n| --- | --- |",
    ],
)
def test_not_links(text: str) -> None:
    assert links(text) == []


def test_raw_html_is_text_so_code_after_it_is_code() -> None:
    """The old checker read CommonMark with raw HTML on: after `<div>` or `<img>`, code was a link to it."""
    assert links("<div>\n`[[a]]`\n</div>") == []
    assert links("<img src=x>\n```\n[[a]]\n```") == []
    assert links("<div>[[a]]</div>") == [("a", None, None)]
    assert "&lt;div&gt;" in html("<div>[[a]]</div>")


def test_table_cells() -> None:
    text = "| a | b |\n| --- | --- |\n| [[x\\|label]] | `[[y]]` |\n| `c | [[z]] | d` |"
    assert links(text) == [("x", None, "label"), ("z", None, None)]  # backticks never pair across cells
    assert written(text) == ["[[x\\|label]]", "[[z]]"]
    assert '<td><a href="/r/x">label</a></td>' in html(text)


# ---------------------------------------------------------------------------
# Positions


@pytest.mark.parametrize(
    "text",
    [
        "# [[a]] and [[b]] #",
        "Title [[a]]\n=====",
        "- one\n  - two [[a]]\n    - three [[b]]",
        "> quote\n> > inner [[a]]\nlazy [[b]]",
        "1. x\n\n   > [[a]]",
        "-\t[[a]]\n\t[[b]]",
        ">\t[[a]]",
        "a\r\n\r\n> b [[a]]\r\n> [[b]]",
        "\u2000\n[[a]]",
        "| h | [[a]] |\n|---|:-:|\n|  [[b\\|x]] | y \\| [[c]] |",
        "> | h |\n> | - |\n> | [[a]] |",
        "  para\n   [[a]] [[b|c]]  \n[[d]]",
    ],
)
def test_offsets_are_at_the_brackets(text: str) -> None:
    found = parse(text).links
    assert found
    for link in found:
        assert text[link.offset : link.offset + 2] == "[[" and text[link.end - 2 : link.end] == "]]"


def test_offsets_and_ends() -> None:
    text = "> a [[x|y]]\n> - [[z]]"
    assert parse(text).links == (Link("x", None, "y", 4, 11), Link("z", None, None, 16, 21))


# ---------------------------------------------------------------------------
# Emphasis that is a multiplication


SEED = "A_be = T_spec/(k*T_base) memory-bound, A_be = 1 + P_d/(B*P_t)"


def test_the_seed_formula_is_reported_at_both_stars() -> None:
    found = ambiguous_emphasis(parse(SEED))
    assert [(item.offset, item.marker) for item in found] == [(16, "*"), (56, "*")]
    assert "`k*T`" in found[0].hint and "\\*" in found[0].hint and "×" in found[0].hint
    assert "<em>" in html(SEED)


@pytest.mark.parametrize(
    ("text", "stars"),
    [
        ("*emphasis* and **strong**", []),
        ("a * b * c", []),
        ("`k*T` and `B*P`", []),
        ("k\\*T and B\\*P", []),
        ("2*3*4", [1, 3]),
        ("x**y**z", [1, 4]),
        ("f(a)*(b) g(c)*(d)", [4, 13]),
        ("- k*T_a\n- B*P", []),
        ("> k*T and\n> B*P", [3, 13]),
        ("_a_b_c_", []),
    ],
)
def test_ambiguous_emphasis(text: str, stars: list[int]) -> None:
    assert [item.offset for item in ambiguous_emphasis(parse(text))] == stars


# ---------------------------------------------------------------------------
# Rendering


def test_render_shapes() -> None:
    prose = parse("see [[a]], [[b#f|the b]] and [[gone]]")
    hrefs = {"a": "../a.html", "b": "../b.html#f"}
    titles = {"a": "The <A> record"}
    out = render(prose, lambda target, anchor: hrefs.get(target), lambda target, anchor: titles.get(target))
    assert out == (
        '<p>see <a href="../a.html">The &lt;A&gt; record</a>, <a href="../b.html#f">the b</a> and '
        + UNRESOLVED.format("gone")
        + "</p>\n"
    )


def test_an_unsafe_href_is_unresolved() -> None:
    assert render(parse("[[a]]"), lambda target, anchor: "javascript:alert(1)") == f"<p>{UNRESOLVED.format('a')}</p>\n"


def test_raw_html_and_images_are_text() -> None:
    assert html('<img src=x onerror="y"> ![a](b.png)') == (
        '<p>&lt;img src=x onerror=&quot;y&quot;&gt; !<a href="b.png">a</a></p>\n'
    )


# ---------------------------------------------------------------------------
# The fast path


def test_deep_nesting_is_not_plain() -> None:
    """markdown-it drops what is nested 20 deep: the fast path must not report a link there."""
    text = ">" * 21 + " [[a]]"
    assert parse(text).links == () and scan(text).links == ()
    assert not _plain("- " * 10 + "[[a]]")


@pytest.mark.parametrize("text", ["a [[x]] b", "# [[x]]\n\n- [[y|z]]\n> *[[w]]*", "a | [[x]]\n--|--"])
def test_scan_equals_parse(text: str) -> None:
    prose = parse(text)
    assert scan(text) == Scan(prose.links, tuple(ambiguous_emphasis(prose)))

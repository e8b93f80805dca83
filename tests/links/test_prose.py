"""flopkb.links.prose: one parse of a markdown field gives the links the checker reports and the HTML the page shows."""

from __future__ import annotations

import re
from bisect import bisect_left

import pytest
from hypothesis import HealthCheck, event, given, settings
from markdown_it.common.utils import escapeHtml

from flopkb.links.prose import (
    _WIKILINK,
    UNRESOLVED,
    Link,
    Scan,
    _crlf,
    _offset,
    _parts,
    _plain,
    ambiguous_emphasis,
    parse,
    render,
    scan,
)
from prose_markdown import texts as _texts


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
        "[[ ]]",
        "[[#f]]",
        "[[a\\]]",
        "[[a|b\\]]",
        "[[a\\\\|b]]",
        "[[a\nb]]",
        "[[a]b]]",
        "[a]]",
        "`[[a]]`",
        "`` x [[a]] ``",
        "```\n[[a]]\n```",
        "~~~\n[[a]]\n~~~",
        "    [[a]]",
        "\t[[a]]",
        "- a\n\n      [[a]]",
        "> ```\n> [[a]]",
        "\\[[a]]",
        "[x]([[a]])",
        '[x](u "[[a]]")',
        "[x](<[[a]]>)",
        "[r]: [[a]]",
        '[r]: /u "[[a]]"',
        "[r]:\n  /u\n  '[[a]]'",
        "<http://x.y/[[a]]>",
        "[x [[a]]](u)",
        "[[a|b`]]`",
        "[[a|<http://x]]>",
        "| [[a|b]] |\n| --- | --- |",
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


# ---------------------------------------------------------------------------
# Properties, on markdown generated from the constructs that decide what is a link (`prose_markdown`)

_PROPERTY = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(_texts)
def test_every_link_and_star_is_located_in_the_text(text: str) -> None:
    """Each link's offsets hold it as written; each reported `*` run is there."""
    prose = parse(text)
    for link in prose.links:
        raw = text[link.offset : link.end]
        assert raw.startswith("[[") and raw.endswith("]]")
        # In a table cell GFM drops the backslash of `\\|` before the cell is parsed.
        readings = [_parts(match) for match in map(_WIKILINK.fullmatch, (raw, raw.replace("\\|", "|"))) if match]
        assert (link.target, link.anchor, link.label) in readings
    for item in ambiguous_emphasis(prose):
        assert text[item.offset : item.offset + len(item.marker)] == item.marker


@_PROPERTY
@given(_texts)
def test_inline_content_maps_back_to_the_source(text: str) -> None:
    """Every character markdown-it parses inline comes from the source offset it is mapped to."""
    prose = parse(text)
    crlf = _crlf(text)
    normalised = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    for inline in prose.tokens:
        if inline.type != "inline":
            continue
        for at, char in enumerate(inline.content):
            if not char.isspace():
                source = _offset(inline, at, crlf)
                assert text[source] == char or normalised[source - bisect_left(crlf, source)] == char


@_PROPERTY
@given(_texts)
def test_scan_equals_the_full_parse(text: str) -> None:
    """The checker's fast path reports what the full parse reports."""
    event("fast" if "[[" in text and _plain(text) else "parsed")
    prose = parse(text)
    assert scan(text) == Scan(prose.links, tuple(ambiguous_emphasis(prose)))


_UNRESOLVED_RE = re.escape(UNRESOLVED).replace(r"\{\}", "([^<]*)")
_WIKI = re.compile(r'<a href="https://wiki\.test/[^"]*">([^<]*)</a>|' + _UNRESOLVED_RE)


def _href(target: str, anchor: str | None) -> str | None:
    return None if target.startswith("x") else f"https://wiki.test/{target}"


@_PROPERTY
@given(_texts)
def test_the_page_shows_exactly_the_reported_links_and_the_text_around_them_unchanged(text: str) -> None:
    prose = parse(text)
    page = render(prose, _href)
    shown = [match.group(1) if match.group(1) is not None else match.group(2) for match in _WIKI.finditer(page)]
    assert shown == [escapeHtml(link.label or link.written) for link in prose.links]
    resolved = [match.group(1) is not None for match in _WIKI.finditer(page)]
    assert resolved == [_href(link.target, link.anchor) is not None for link in prose.links]
    # Each link replaced by a neutral atom: punctuation at both ends (as `[[` and `]]` are, for emphasis),
    # a space (no link URL holds one), a lone `]` (no link text or reference label holds one), and the
    # link's own pipes (GFM counts them, escaped or not, in deciding whether a line heads a table).
    pieces, shown_as, pos = [], [], 0
    for index, link in enumerate(prose.links):
        pipes = re.findall(r"\\?\|", text[link.offset : link.end])
        pieces += [text[pos : link.offset], f",Z{index}" + "".join(" " + pipe for pipe in pipes) + " ],"]
        shown_as.append(f",Z{index}" + " |" * len(pipes) + " ],")
        pos = link.end
    expected = render(parse("".join(pieces) + text[pos:]), _href)
    replaced = iter(shown_as)
    assert _WIKI.sub(lambda match: next(replaced), page) == expected

"""flopkb.links.prose: one parse of a markdown field gives the links the checker reports and the HTML the page shows."""

from __future__ import annotations

import re
from bisect import bisect_left

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from markdown_it.common.utils import escapeHtml

from flopkb.links.prose import (
    _WIKILINK,
    NESTED,
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
from prose_markdown import inside_a
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
        "[[a|b`]]`",
        "[[a|<http://x]]>",
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


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("[x [[a]]](u)", '<a href="u">x <span class="flopkb-nested-link">a</span></a>'),
        ("![alt [[a|A]]](u)", '!<a href="u">alt <span class="flopkb-nested-link">A</span></a>'),
        ("[[[a]]](u)", '<a href="u"><span class="flopkb-nested-link">a</span></a>'),
    ],
)
def test_a_link_in_a_markdown_links_text_is_checked_and_shown_as_its_label_there(text: str, shown: str) -> None:
    """Links do not nest: the markdown link stays, and the wikilink in its text (or in an image's alt text, as
    images are off) shows as its label, not as `[[...]]`; the checker reports it like any other."""
    assert [target for target, _, _ in links(text)] == ["a"]
    assert html(text) == f"<p>{shown}</p>\n"


def test_an_unescaped_pipe_in_a_link_in_a_table_does_not_end_the_cell() -> None:
    text = "| a | b |\n| --- | --- |\n| [[x|label]] | [[y#f|z]] w |"
    assert links(text) == [("x", None, "label"), ("y", "f", "z")]
    assert '<td><a href="/r/x">label</a></td>' in html(text)
    assert '<td><a href="/r/y#f">z</a> w</td>' in html(text)
    # The header row counts its cells the same way: one cell here, so no table but a paragraph, link and all.
    assert links("| [[a|b]] |\n| --- | --- |") == [("a", None, "b")]


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
@example("[[\0]]")
def test_every_link_and_star_is_located_in_the_text(text: str) -> None:
    """Each link's offsets hold it as written; each reported `*` run is there. A NUL is read as U+FFFD, as CommonMark
    asks and as the page shows it."""
    prose = parse(text)
    for link in prose.links:
        raw = text[link.offset : link.end].replace("\0", "\ufffd")
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
_NESTED_RE = re.escape(NESTED).replace(r"\{\}", "([^<]*)")
_WIKI = re.compile(r'<a href="https://wiki\.test/[^"]*">([^<]*)</a>|' + _UNRESOLVED_RE + "|" + _NESTED_RE)


def _href(target: str, anchor: str | None) -> str | None:
    return None if target.startswith("x") else f"https://wiki.test/{target}"


@_PROPERTY
@given(_texts)
def test_the_page_shows_exactly_the_reported_links_and_the_text_around_them_unchanged(text: str) -> None:
    prose = parse(text)
    page = render(prose, _href)
    matches = list(_WIKI.finditer(page))
    shown = [next(group for group in match.groups() if group is not None) for match in matches]
    assert shown == [escapeHtml(link.label or link.written) for link in prose.links]
    resolved = [match.group(2) is None for match in matches]
    assert resolved == [_href(link.target, link.anchor) is not None for link in prose.links]
    # Each link replaced by a neutral atom: punctuation at both ends (as `[[` and `]]` are, for emphasis),
    # a space (no link URL holds one), a lone `]` (no link text or reference label holds one) unless the link
    # stands in a link's text, and the link's escaped pipes (GFM counts them in deciding whether a line heads a
    # table; a pipe inside a wikilink, unescaped, ends no cell and counts for nothing).
    pieces, shown_as, pos = [], [], 0
    for index, (link, match) in enumerate(zip(prose.links, matches, strict=True)):
        pipes = re.findall(r"\\\|", text[link.offset : link.end])
        end = " ,," if match.group(3) is not None or inside_a(page, match.start()) else " ],"
        pieces += [text[pos : link.offset], f",Z{index}" + "".join(" " + pipe for pipe in pipes) + end]
        shown_as.append(f",Z{index}" + " |" * len(pipes) + end)
        pos = link.end
    expected = render(parse("".join(pieces) + text[pos:]), _href)
    replaced = iter(shown_as)
    assert _WIKI.sub(lambda match: next(replaced), page) == expected

"""Record text made safe: prose to sanitised HTML, text for markdown headings, URLs."""

from __future__ import annotations

import random

import markdown
import pytest

from flopkb.links.wikilinks import find_wikilinks
from flopkb.site.sanitize import (
    _is_plain,
    _markdown_html,
    _plain_html,
    clean_html,
    inline_html,
    markdown_escape,
    markdown_text,
    prose_html,
    safe_url,
)
from html_safety import scan_html


def resolve(link):
    if link.target == "missing":
        return None, link.label or link.target
    return f"../{link.target}.html" + (f"#{link.anchor}" if link.anchor else ""), link.label or link.target.upper()


HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "<javascript:alert(1)>",
    "<a href='javascript:alert(1)' onclick=alert(1)>x</a>",
    '<iframe src="javascript:alert(1)"></iframe>',
    "<svg><script>alert(1)</script></svg>",
    "<svg onload=alert(1)>",
    "<details open ontoggle=alert(1)>",
    "<style>*{background:url(javascript:alert(1))}</style>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<form action="javascript:alert(1)"><button>x</button></form>',
    "[[target|<script>alert(1)</script>]]",
    "[[target|<img src=x onerror=alert(1)>]]",
    "[[missing|<script>alert(1)</script>]]",
    "![x](javascript:alert(1))",
    "![x](https://tracker.invalid/pixel.png)",
    "[x](<javascript:alert(1)>)",
    "| a |\n|---|\n| <script>alert(1)</script> |",
    "```\n<script>alert(1)</script>\n```",
    '<a href="&#x6A;avascript:alert(1)">x</a>',
    "\ue000<script>alert(1)</script>\ue001",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_prose_renders_nothing_executable(text: str) -> None:
    rendered = prose_html(text, resolve)
    assert scan_html(rendered) == []
    for tag in ("<script", "<img", "<iframe", "<svg", "<style", "<form", "<details", "<math"):
        assert tag not in rendered  # shown as text (&lt;...) if at all


def test_raw_html_is_shown_as_text() -> None:
    assert (
        prose_html("a <b>bold</b> <script>x</script>")
        == "<p>a &lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;</p>"
    )


def test_markdown_still_works() -> None:
    rendered = prose_html("**bold**, `code`, [a link](https://example.org/x) and\n\n- one\n- two")
    assert "<strong>bold</strong>" in rendered
    assert "<code>code</code>" in rendered
    assert '<a href="https://example.org/x" rel="noopener noreferrer">a link</a>' in rendered
    assert "<ul>\n<li>one</li>" in rendered


def test_images_become_links_so_nothing_is_loaded() -> None:
    rendered = prose_html("![alt](https://example.org/x.png)")
    assert "<img" not in rendered
    assert 'href="https://example.org/x.png"' in rendered


def test_only_http_https_mailto_and_relative_links_survive() -> None:
    assert 'href="mailto:a@b.c"' in prose_html("[m](mailto:a@b.c)")
    assert 'href="../x.html"' in prose_html("[r](../x.html)")
    for scheme in ("ftp://x", "file:///etc/passwd", "data:text/plain,x", "tel:123"):
        assert "href" not in prose_html(f"[x]({scheme})")


def test_wikilinks_become_links_with_labels_kept() -> None:
    assert prose_html("see [[a/b|the label]] now", resolve) == '<p>see <a href="../a/b.html">the label</a> now</p>'
    assert prose_html("see [[a/b#f]]", resolve) == '<p>see <a href="../a/b.html#f">A/B</a></p>'


def test_wikilink_labels_are_text_on_both_paths() -> None:
    plain = prose_html("x [[a|<b>label</b>]]", resolve)
    rich = prose_html("*x* [[a|<b>label</b>]]", resolve)  # emphasis: the markdown path
    assert "&lt;b&gt;label&lt;/b&gt;" in plain and "&lt;b&gt;label&lt;/b&gt;" in rich
    assert "*x*" not in rich and "<em>x</em>" in rich


def test_an_unresolved_wikilink_is_marked_not_linked() -> None:
    rendered = prose_html("see [[missing|there]]", resolve)
    assert rendered == '<p>see <span class="flopkb-unresolved" title="this link resolves to no record">there</span></p>'


def test_private_use_markers_in_records_cannot_make_markup() -> None:
    assert "span" not in prose_html("a \ue000b\ue001 c", resolve)


def test_wikilinks_in_code_stay_code() -> None:
    rendered = prose_html("`[[a/b]]` and [[a/b]]", resolve)
    assert "<code>[[a/b]]</code>" in rendered
    assert rendered.count("<a ") == 1


def test_inline_html_drops_a_lone_paragraph() -> None:
    assert inline_html("just *this*") == "just <em>this</em>"
    assert inline_html("one\n\ntwo").startswith("<p>one</p>")


def test_plain_text_path_agrees_with_markdown_it() -> None:
    # The fast path for text without markdown syntax gives what markdown-it gives.
    rng = random.Random(7)
    alphabet = list("abc XY 12,.;:'\"()?/%+=!@$^{}-\n\n   é中")
    checked = 0
    for _ in range(6000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 60)))
        if rng.random() < 0.5:
            text = text[:10] + "[[a/b|lab el]]" + text[10:]
        links = find_wikilinks(text)
        if not _is_plain(text, links):
            continue
        checked += 1
        assert (
            clean_html(_plain_html(text, links, resolve)).strip()
            == clean_html(_markdown_html(text, links, resolve)).strip()
        ), text
    assert checked > 3000


@pytest.mark.parametrize(
    "text",
    [
        "- item",
        "1. item",
        "2) item",
        "    code",
        "a  \nb",
        "title\n===",
        "a *b*",
        "a_b_",
        "<b>",
        "x | y",
        "a\tb",
        "&amp;",
        "# h",
    ],
)
def test_text_with_markdown_syntax_takes_the_markdown_path(text: str) -> None:
    assert not _is_plain(text, [])


def test_markdown_text_survives_python_markdown_as_plain_text() -> None:
    md = markdown.Markdown(
        extensions=["attr_list", "toc", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    hostile = "<script>alert(1)</script> [x](javascript:alert(1)) *em* `c` $x$ \\(y\\) {: onclick=alert(1) } &amp; ![i](x.png)"
    rendered = md.convert("# " + markdown_text(hostile))
    assert scan_html(rendered) == []
    for made in ("<script", "<a ", "<em>", "<code>", "arithmatex", "onclick=", "<img"):
        assert made not in rendered
    # The browser shows the text as written.
    import html

    inner = rendered.split(">", 1)[1].rsplit("</h1>", 1)[0]
    assert html.unescape(inner) == " ".join(hostile.split())


def test_markdown_escape_round_trips_through_commonmark() -> None:
    from flopkb.site.sanitize import _markdown

    text = "<b>*x*</b> [y](z) `c` \\ | ~"
    assert _markdown().renderInline(markdown_escape(text)) == "&lt;b&gt;*x*&lt;/b&gt; [y](z) `c` \\ | ~"


@pytest.mark.parametrize(
    "url, safe",
    [
        ("https://example.org/a?b=c", True),
        ("http://example.org", True),
        ("mailto:x@y.z", True),
        ("../records/a.html#f", True),
        ("javascript:alert(1)", False),
        ("JAVASCRIPT:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\nscript:alert(1)", False),
        ("data:text/html,x", False),
        ("//evil.example/x", False),
        ("", False),
    ],
)
def test_safe_url(url: str, safe: bool) -> None:
    assert (safe_url(url) is not None) == safe

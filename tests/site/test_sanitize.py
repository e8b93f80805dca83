"""Record text made safe: prose to sanitised HTML, text for markdown headings, URLs."""

from __future__ import annotations

import markdown
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flopkb.links.prose import parse
from flopkb.links.prose import render as render_tokens
from flopkb.site import sanitize
from flopkb.site.sanitize import clean_html, inline_html, markdown_text, prose_html, safe_url
from html_safety import scan_html


def href_for(target: str, anchor: str | None) -> str | None:
    return None if target == "missing" else f"../{target}.html" + (f"#{anchor}" if anchor else "")


def label_for(target: str, anchor: str | None) -> str | None:
    return None if target == "missing" else target.upper()


def render(text: str) -> str:
    return prose_html(text, href_for, label_for)


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
    rendered = render(text)
    assert scan_html(rendered) == []
    for tag in ("<script", "<img", "<iframe", "<svg", "<style", "<form", "<details", "<math"):
        assert tag not in rendered  # shown as text (&lt;...) if at all


def test_raw_html_is_shown_as_text() -> None:
    assert (
        render("a <b>bold</b> <script>x</script>") == "<p>a &lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;</p>"
    )


def test_markdown_still_works() -> None:
    rendered = render("**bold**, `code`, [a link](https://example.org/x) and\n\n- one\n- two")
    assert "<strong>bold</strong>" in rendered
    assert "<code>code</code>" in rendered
    assert '<a href="https://example.org/x" rel="noopener noreferrer">a link</a>' in rendered
    assert "<ul>\n<li>one</li>" in rendered


def test_images_become_links_so_nothing_is_loaded() -> None:
    rendered = render("![alt](https://example.org/x.png)")
    assert "<img" not in rendered
    assert 'href="https://example.org/x.png"' in rendered


def test_only_http_https_mailto_and_relative_links_survive() -> None:
    assert 'href="mailto:a@b.c"' in render("[m](mailto:a@b.c)")
    assert 'href="../x.html"' in render("[r](../x.html)")
    for scheme in ("ftp://x", "file:///etc/passwd", "data:text/plain,x", "tel:123"):
        assert "href" not in render(f"[x]({scheme})")


def test_wikilinks_become_links_with_labels_kept() -> None:
    assert render("see [[a/b|the label]] now") == (
        '<p>see <a href="../a/b.html" rel="noopener noreferrer">the label</a> now</p>'
    )
    assert render("see [[a/b#f]]") == '<p>see <a href="../a/b.html#f" rel="noopener noreferrer">A/B</a></p>'


def test_wikilink_labels_are_text() -> None:
    rendered = render("*x* [[a|<b>label</b>]]")
    assert "&lt;b&gt;label&lt;/b&gt;" in rendered
    assert "*x*" not in rendered and "<em>x</em>" in rendered


def test_an_unresolved_wikilink_is_marked_not_linked() -> None:
    rendered = render("see [[missing|there]]")
    assert rendered == '<p>see <span class="flopkb-unresolved" title="this link resolves to no record">there</span></p>'


# ---------------------------------------------------------------------------
# The allowlist on its own: raw HTML that no markdown step filtered first

ALLOWED_SHAPES = [
    (
        '<a href="../x.html" title="t" class="c">x</a>',
        '<a href="../x.html" title="t" class="c" rel="noopener noreferrer">x</a>',
    ),
    ('<span class="flopkb-unresolved" title="t">x</span>', '<span class="flopkb-unresolved" title="t">x</span>'),
    (
        '<table><tbody><tr><td style="text-align: right">1</td></tr></tbody></table>',
        '<table><tbody><tr><td style="text-align:right">1</td></tr></tbody></table>',
    ),
    ('<ol start="3"><li>x</li></ol>', '<ol start="3"><li>x</li></ol>'),
]


@pytest.mark.parametrize(("fragment", "kept"), ALLOWED_SHAPES)
def test_the_allowlist_keeps_what_pages_use(fragment: str, kept: str) -> None:
    assert clean_html(fragment) == kept


@pytest.mark.parametrize(
    ("fragment", "gone"),
    [
        ('<a href="../x.html" onclick="alert(1)">x</a>', "onclick"),
        ('<span onmouseover="alert(1)">x</span>', "onmouseover"),
        ('<a href="javascript:alert(1)">x</a>', "javascript"),
        ('<a href="JaVaScRiPt:alert(1)">x</a>', "alert"),
        ('<a href="data:text/html,x">x</a>', "data:"),
        ('<a href="vbscript:x">x</a>', "vbscript"),
        ('<a href="x" style="color:red">x</a>', "style"),
        ('<table><tr><td style="background:url(javascript:alert(1))">x</td></tr></table>', "javascript"),
        ('<table><tr><td style="position:fixed">x</td></tr></table>', "position"),
        ('<iframe src="https://example.org"></iframe>', "iframe"),
        ("<script>alert(1)</script>", "script"),
        ('<img src="https://tracker.invalid/p.png">', "img"),
        ("<style>*{color:red}</style>", "style"),
        ('<div id="x" class="y">z</div>', "id="),
        ("<!-- a comment -->", "comment"),
        ('<a href="x" target="_blank">x</a>', "_blank"),
        ('<form action="x"><button>b</button></form>', "form"),
    ],
)
def test_the_allowlist_removes_what_can_run_or_load(fragment: str, gone: str) -> None:
    cleaned = clean_html(fragment)
    assert gone not in cleaned
    assert scan_html(cleaned) == []


def test_wikilinks_in_code_stay_code() -> None:
    rendered = render("`[[a/b]]` and [[a/b]]")
    assert "<code>[[a/b]]</code>" in rendered
    assert rendered.count("<a ") == 1


def test_inline_html_drops_a_lone_paragraph() -> None:
    assert inline_html("just *this*", href_for) == "just <em>this</em>"
    assert inline_html("one\n\ntwo", href_for).startswith("<p>one</p>")


_PLAIN_PIECES = [
    *"abc XY 12,.;:'\"()?/%+=!@$^{}-é中\u00a0\u2003\u3000\u200b\u2028\x85",
    "\n",
    "\n\n",
    "   ",
    "    ",
    "  \n",
    " \n",
    "- ",
    "1. ",
    "=",
    "[[a/b|lab el]]",
    "[[a/b]]",
    "[[a/b#f]]",
    "[[missing]]",
    "[[evil|x]]",
    '[[a & b|<i> "q"]]',
    "[[a\u00a0b]]",
    "[",
    "]",
    "|",
    "#",
]


def _href(target: str, anchor: str | None) -> str | None:
    return "javascript:alert(1)" if target == "evil" else href_for(target, anchor)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PLAIN_PIECES), max_size=30).map("".join))
def test_the_plain_text_shortcut_renders_what_the_parse_renders(text: str) -> None:
    links = sanitize.scan(text).links
    plain = sanitize._PLAIN_CHARACTERS.fullmatch(text) is not None and sanitize._is_plain(text, links)
    event("shortcut" if plain else "parsed")
    full = clean_html(render_tokens(parse(text), _href, label_for)).strip()
    assert prose_html(text, _href, label_for) == full
    if plain:
        assert clean_html(sanitize._plain_html(text, links, _href, label_for)).strip() == full


def test_markdown_text_survives_python_markdown_as_plain_text() -> None:
    md = markdown.Markdown(
        extensions=["attr_list", "toc", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    hostile = (
        "<script>alert(1)</script> [x](javascript:alert(1)) *em* `c` $x$ \\(y\\) "
        "{: onclick=alert(1) } &amp; ![i](x.png)"
    )
    rendered = md.convert("# " + markdown_text(hostile))
    assert scan_html(rendered) == []
    for made in ("<script", "<a ", "<em>", "<code>", "arithmatex", "onclick=", "<img"):
        assert made not in rendered
    # The browser shows the text as written.
    import html

    inner = rendered.split(">", 1)[1].rsplit("</h1>", 1)[0]
    assert html.unescape(inner) == " ".join(hostile.split())


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

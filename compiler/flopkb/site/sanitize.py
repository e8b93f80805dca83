"""Untrusted record text made safe for the site: markdown to sanitised HTML, and text escaped for markdown.

Record prose is untrusted. Nothing a record says may become markup that runs:
no `<script>`, no event-handler attribute, no `javascript:` (or `data:`,
`vbscript:`, ...) URL, no raw HTML at all. Two paths, one per context:

- **Prose fields** (`description`, `statement`, `notes`, effects, ...) are
  rendered here, not by mkdocs: markdown-it-py (CommonMark, tables and
  strikethrough) with raw HTML *off*, so `<img onerror=...>` in a record is
  shown as text, never parsed as a tag; images off too (a record must not make
  readers' browsers load anything, and `![a](u)` becomes a plain link). The
  result then goes through nh3 (ammonia) with an allowlist of tags and
  attributes and the URL schemes `http`, `https` and `mailto` (relative URLs
  stay), so even a bug in the markdown step cannot let markup through. The
  page template embeds that HTML in a raw HTML block, which python-markdown
  (mkdocs) passes through untouched.
- **Text in markdown context** (a heading written as `# ...` so that mkdocs
  puts it in the table of contents, the page title in front matter) goes
  through `markdown_text`: every ASCII punctuation character becomes a numeric
  character reference, so python-markdown sees no markup, no link, no
  attribute list, no math delimiter — only text — and the browser shows the
  characters as written.

Everything else a template prints is escaped by jinja2's autoescape.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable
from urllib.parse import urlsplit

import nh3

from flopkb.links.wikilinks import WikiLink, find_wikilinks

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_TAGS",
    "URL_SCHEMES",
    "clean_html",
    "inline_html",
    "markdown_escape",
    "markdown_text",
    "prose_html",
    "safe_url",
]

ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "dd",
        "del",
        "div",
        "dl",
        "dt",
        "em",
        "hr",
        "i",
        "kbd",
        "li",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "class"},
    "abbr": {"title"},
    "code": {"class"},
    "ol": {"start"},
    "span": {"class", "title"},
    "td": {"style"},
    "th": {"style"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})

# Markers the wikilink step puts around the label of a link that resolves to
# nothing (possible only when dangling-link is turned down from an error). They
# are private-use characters, removed from record text first, so only the
# renderer can place them; after sanitising they become a <span>.
UNRESOLVED_OPEN, UNRESOLVED_CLOSE = "\ue000", "\ue001"
_MARKERS = {ord(UNRESOLVED_OPEN): None, ord(UNRESOLVED_CLOSE): None}
_UNRESOLVED_HTML = ('<span class="flopkb-unresolved" title="this link resolves to no record">', "</span>")


@functools.lru_cache(maxsize=1)
def _markdown():  # -> markdown_it.MarkdownIt
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable(["image"])
    return md


def clean_html(fragment: str) -> str:
    """`fragment` with every tag, attribute and URL scheme outside the allowlist removed."""
    return nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        filter_style_properties={"text-align"},
        strip_comments=True,
    )


LinkRender = Callable[[WikiLink], "tuple[str | None, str]"]
"""Renders one wikilink: (href, or None when it resolves to nothing; the label to show)."""


def prose_html(markdown: str, link: LinkRender | None = None) -> str:
    """A markdown field as sanitised HTML, each `[[wikilink]]` (outside code) rendered by `link`.

    Text that holds no markdown syntax at all (words, wikilinks, everyday
    punctuation: most prose) skips the markdown parser: its paragraphs are
    escaped and wrapped here, which gives what markdown-it gives, several times
    faster (and, being escaped text and links only, needs no sanitising).
    Everything markdown-it renders goes through `clean_html`.
    """
    text = markdown.translate(_MARKERS)
    links = find_wikilinks(text) if link is not None and "[[" in text else []
    if _is_plain(text, links):
        # Safe by construction: every character of the text is escaped, and the
        # only markup is <p> and <a href> with an href from `link`, escaped.
        rendered = _plain_html(text, links, link)
    else:
        rendered = clean_html(_markdown_html(text, links, link))
    if UNRESOLVED_OPEN in rendered:
        rendered = rendered.replace(UNRESOLVED_OPEN, _UNRESOLVED_HTML[0]).replace(UNRESOLVED_CLOSE, _UNRESOLVED_HTML[1])
    return rendered.strip()


def _markdown_html(text: str, links: list[WikiLink], link: LinkRender | None) -> str:
    if links:
        parts, pos = [], 0
        for found in links:
            href, label = link(found)  # type: ignore[misc]
            parts.append(text[pos : found.offset])
            if href is None:
                parts.append(f"{UNRESOLVED_OPEN}{markdown_escape(label)}{UNRESOLVED_CLOSE}")
            else:
                parts.append(f"[{markdown_escape(label)}](<{_link_destination(href)}>)")
            pos = found.end
        parts.append(text[pos:])
        text = "".join(parts)
    return _markdown().render(text)


def _link_destination(href: str) -> str:
    """An href written inside `<...>` in a markdown link: no line break, `<`, `>` or backslash can end it early."""
    return href.replace("\\", "%5C").replace("<", "%3C").replace(">", "%3E").replace("\n", "%0A").replace("\r", "%0D")


# Plain text: characters that start no markdown construct anywhere in a line
# (no *, _, `, [, ], <, >, &, #, |, ~, \\, tab), and lines that start no block
# (list item, heading underline, code indentation) and end in no hard break.
_PLAIN_TEXT = re.compile(r"[-A-Za-z0-9 \n,.;:'\"()?/%+=!@$^{}\u00a0-\u2027\u202a-\uffff]*")
_BLOCK_START = re.compile(r"^(?: {4}| {0,3}(?:[-+=]|\d{1,9}[.)]))|  $", re.MULTILINE)


def _is_plain(text: str, links: list[WikiLink]) -> bool:
    if links:
        skeleton, pos = [], 0
        for found in links:
            skeleton.append(text[pos : found.offset])
            skeleton.append("x")
            pos = found.end
        skeleton.append(text[pos:])
        text = "".join(skeleton)
    return _PLAIN_TEXT.fullmatch(text) is not None and _BLOCK_START.search(text) is None


_BLANK_LINES = re.compile(r"\n(?: *\n)+")


def _plain_html(text: str, links: list[WikiLink], link: LinkRender | None) -> str:
    pieces, pos = [], 0
    for found in links:
        pieces.append(html.escape(text[pos : found.offset], quote=False))
        href, label = link(found)  # type: ignore[misc]
        label = html.escape(" ".join(label.split()), quote=False)
        if href is None or safe_url(href) is None:
            pieces.append(f"{UNRESOLVED_OPEN}{label}{UNRESOLVED_CLOSE}")
        else:
            pieces.append(f'<a href="{html.escape(href, quote=True)}">{label}</a>')
        pos = found.end
    pieces.append(html.escape(text[pos:], quote=False))
    paragraphs = []
    for block in _BLANK_LINES.split("".join(pieces).strip("\n")):
        lines = [line.strip(" ") for line in block.split("\n")]
        if any(lines):
            paragraphs.append("<p>" + "\n".join(lines).strip("\n") + "</p>")
    return "\n".join(paragraphs)


_ONE_PARAGRAPH = re.compile(r"\A<p>((?:(?!<p>)[\s\S])*)</p>\Z")


def inline_html(markdown: str, link: LinkRender | None = None) -> str:
    """Like `prose_html`, without the `<p>` around a single paragraph (for table cells)."""
    rendered = prose_html(markdown, link)
    match = _ONE_PARAGRAPH.match(rendered)
    return match.group(1) if match else rendered


# CommonMark lets a backslash escape any ASCII punctuation character.
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")


def markdown_escape(text: str) -> str:
    """`text` as CommonMark source that renders as exactly that text (for link labels in prose)."""
    return _MD_PUNCT.sub(r"\\\1", " ".join(text.split()))


_ENTITIES = {code: f"&#{code};" for code in range(0x21, 0x7F) if not chr(code).isalnum()}


def markdown_text(text: str) -> str:
    """`text` for a python-markdown context (a `#` heading): punctuation as numeric character references, one line.

    python-markdown keeps character references as they are, so the text can
    form no markup of any kind (emphasis, links, raw HTML, `{: attr}` lists,
    `$math$`), and the browser shows the characters as written.
    """
    return " ".join(text.split()).translate(_ENTITIES)


_CONTROL = re.compile(r"[\x00-\x20\x7f-\x9f]")


def safe_url(url: str) -> str | None:
    """`url` if it is http(s), mailto or relative (and has no blank or control character), else None."""
    if not url or _CONTROL.search(url):
        return None
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    if scheme in URL_SCHEMES or (scheme == "" and not url.startswith("//")):
        return url
    return None


def escape(text: str) -> str:
    """HTML-escape text (quotes included), for the few places outside jinja2 templates."""
    return html.escape(text, quote=True)

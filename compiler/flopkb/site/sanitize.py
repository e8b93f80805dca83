"""Untrusted record text made safe for the site: markdown to sanitised HTML, and text escaped for markdown.

Record prose is untrusted. Nothing a record says may become markup that runs:
no `<script>`, no event-handler attribute, no `javascript:` (or `data:`,
`vbscript:`, ...) URL, no raw HTML at all. Two paths, one per context:

- **Prose fields** (`description`, `statement`, `notes`, effects, ...) are
  rendered here, not by mkdocs, from the one parse of `flopkb.links.prose`
  that the checker reads their links from: CommonMark, tables and
  strikethrough, with raw HTML *off*, so `<img onerror=...>` in a record is
  shown as text, never parsed as a tag; images off too (a record must not make
  readers' browsers load anything, and `![a](u)` becomes a plain link). All
  of the result then goes through nh3 (ammonia) with an allowlist of tags and
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

import html
import re
from urllib.parse import urlsplit

import nh3

from flopkb.links.prose import HrefFor, LabelFor, Link, link_html, parse, render, scan

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_TAGS",
    "URL_SCHEMES",
    "clean_html",
    "inline_html",
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


_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
    url_schemes=set(URL_SCHEMES),
    link_rel="noopener noreferrer",
    filter_style_properties={"text-align"},
    strip_comments=True,
)
"""Built once: handing nh3 the allowlist on every call costs five times the cleaning of a field."""


def clean_html(fragment: str) -> str:
    """`fragment` with every tag, attribute and URL scheme outside the allowlist removed."""
    return _CLEANER.clean(fragment)


def prose_html(markdown: str, href_for: HrefFor, label_for: LabelFor | None = None) -> str:
    """A markdown field as sanitised HTML, rendered from the one parse the checker reads its links from.

    Each `[[wikilink]]` is a link to `href_for(target, anchor)`, or shows as
    unresolved when that is None; see `flopkb.links.prose.render`. Text that
    holds no markdown syntax but its wikilinks (words, everyday punctuation:
    most prose) skips the parser: its paragraphs are escaped and wrapped
    here, several times faster, into what the parse renders (a property test
    holds the two equal). Either goes through `clean_html`.
    """
    if _PLAIN_CHARACTERS.fullmatch(markdown) is not None:
        links = scan(markdown).links
        if _is_plain(markdown, links):
            return clean_html(_plain_html(markdown, links, href_for, label_for)).strip()
    return clean_html(render(parse(markdown), href_for, label_for)).strip()


# Plain text: characters that start no markdown construct anywhere in a line
# (no *, _, `, [, ], <, >, &, #, |, ~, \\, tab) and no Unicode blank (markdown-it
# trims those off a paragraph), and lines that start no block (list item,
# heading underline, code indentation) and end in no hard break.
_PLAIN = (
    r"-A-Za-z0-9 \n,.;:'\"()?/%+=!@$^{}"
    r"\u00a1-\u167f\u1681-\u1fff\u200b-\u2027\u202a-\u202e\u2030-\u205e\u2060-\u2fff\u3001-\uffff"
)
_PLAIN_TEXT = re.compile(f"[{_PLAIN}]*")
_PLAIN_CHARACTERS = re.compile(f"[{_PLAIN}\\[\\]|#]*")
"""Plain text with wikilinks, at most: what may take the shortcut."""
_BLOCK_START = re.compile(r"^(?: {4}| {0,3}(?:[-+=]|\d{1,9}[.)]))|  $", re.MULTILINE)


def _is_plain(text: str, links: tuple[Link, ...]) -> bool:
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


def _plain_html(text: str, links: tuple[Link, ...], href_for: HrefFor, label_for: LabelFor | None) -> str:
    pieces, pos = [], 0
    for found in links:
        pieces.append(html.escape(text[pos : found.offset], quote=False))
        pieces.append(link_html(found, href_for, label_for))
        pos = found.end
    pieces.append(html.escape(text[pos:], quote=False))
    paragraphs = []
    for block in _BLANK_LINES.split("".join(pieces).strip("\n")):
        lines = [line.strip(" ") for line in block.split("\n")]
        if any(lines):
            paragraphs.append("<p>" + "\n".join(lines).strip("\n") + "</p>")
    return "\n".join(paragraphs)


_ONE_PARAGRAPH = re.compile(r"\A<p>((?:(?!<p>)[\s\S])*)</p>\Z")


def inline_html(markdown: str, href_for: HrefFor, label_for: LabelFor | None = None) -> str:
    """Like `prose_html`, without the `<p>` around a single paragraph (for table cells)."""
    rendered = prose_html(markdown, href_for, label_for)
    match = _ONE_PARAGRAPH.match(rendered)
    return match.group(1) if match else rendered


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

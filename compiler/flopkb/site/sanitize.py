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

from flopkb.links.prose import HrefFor, LabelFor, parse, render

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


def prose_html(markdown: str, href_for: HrefFor, label_for: LabelFor | None = None) -> str:
    """A markdown field as sanitised HTML, rendered from the one parse the checker reads its links from.

    Each `[[wikilink]]` is a link to `href_for(target, anchor)`, or shows as
    unresolved when that is None; see `flopkb.links.prose.render`.
    """
    return clean_html(render(parse(markdown), href_for, label_for)).strip()


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

"""mkdocs without python-markdown for the pages flopkb rendered itself: their HTML is finished already.

flopkb's pages (`flopkb.site.pages.common`) are markdown of one narrow form: `#` headings, their text from
`markdown_text` (punctuation as character references) with an optional `{: #id }`, and blocks of HTML that
flopkb rendered and sanitised. python-markdown passes such a block through unchanged and turns a heading into
`<hN id="...">text<a class="headerlink" ...>&para;</a></hN>`; converting every page anyway was most of mkdocs'
time (a Markdown instance per page, and two HTML parses of the whole page: mkdocs' anchor scan and
python-markdown's raw-HTML extraction).

`Prerendered`, a plugin that `flopkb.site.publishing.mkdocs.build_site` adds, gives each page a `render` that reads the
page in that form (`split_page`) and writes what python-markdown would have (`render_parts`): the HTML, the
table of contents (the tokens of python-markdown's toc extension: level, id, name), the title of a leading `#`
heading, the page's anchors and its links to them, for mkdocs' anchor validation. A block of HTML ends where
python-markdown's HTML extractor ends it (the block's first tag closed, counted with the same stack of open
tags), read within a strict subset of HTML: tags with double-quoted attributes on one line, no comment,
declaration, processing instruction or `<` that starts no tag, character references with their `;`. A page
with anything else (a tab left in a `<pre>`, a line that could open a backtick fence, a heading with literal
punctuation, text between blocks) is converted by python-markdown as usual: the form is a restriction, never a
guess. So `mkdocs build -f build/site-mkdocs.yml`, without the plugin, builds the same site byte for byte;
`tests/site/test_prerendered.py` checks that on whole sites and, with hypothesis, on every heading and page
form against python-markdown itself.

The conversion is the one of flopkb's markdown extensions (`MARKDOWN_EXTENSIONS`): with any other set of
processors, or other toc settings, every page goes to python-markdown (`page_form`).
"""

from __future__ import annotations

import functools
import html
import logging
import re
from dataclasses import dataclass
from typing import Any

import markdown
from markdown.extensions.toc import TocTreeprocessor, nest_toc_tokens, strip_tags, unique
from markdown.preprocessors import NormalizeWhitespace
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

__all__ = ["Heading", "PageForm", "Prerendered", "page_form", "render_parts", "render_prerendered", "split_page"]

# What python-markdown runs with flopkb's extensions (and nothing else): the form below is proved against these.
_PROCESSORS = {
    "preprocessors": {"normalize_whitespace", "fenced_code_block", "html_block"},
    "parser.blockprocessors": {
        "admonition",
        "details",
        "empty",
        "indent",
        "defindent",
        "code",
        "arithmatex-block",
        "table",
        "hashheader",
        "setextheader",
        "hr",
        "olist",
        "ulist",
        "deflist",
        "quote",
        "reference",
        "paragraph",
    },
    "inlinePatterns": {
        "backtick",
        "arithmatex-inline",
        "escape",
        "reference",
        "link",
        "image_link",
        "image_reference",
        "short_reference",
        "short_image_ref",
        "autolink",
        "automail",
        "linebreak",
        "html",
        "entity",
        "em_strong",
    },
    "treeprocessors": {"indent-highlight", "inline", "prettify", "attr_list", "toc", "unescape"},
    "postprocessors": {"raw_html", "amp_substitute"},
}

# A heading word: ASCII letters and digits, characters past U+009F that are not blanks, and the character
# references `markdown_text` writes for ASCII punctuation (`&#33;` to `&#126;`). Nothing in it is markup to any
# inline pattern, to the HTML extractor or to attr_list.
_WORD = r"(?:[A-Za-z0-9]|[^\x00-\x9f\s]|&#(?:3[3-9]|[4-9][0-9]|1[01][0-9]|12[0-6]);)+"
# An id as `heading_id` writes it, its `_` escaped (an `_` at the edge of a word would be emphasis to
# python-markdown: its inline patterns run over the heading's text before attr_list reads the `{: #id }`).
_ID = r"(?:[A-Za-z0-9.:-]|\\_)+"
_HEADING = re.compile(rf"(#{{1,6}}) ({_WORD}(?: {_WORD})*)(?: \{{: #({_ID}) \}})?\n")
_TAG = re.compile(
    r"<(?:/([A-Za-z][A-Za-z0-9-]*)>"
    r"|([A-Za-z][A-Za-z0-9-]*)((?: +[A-Za-z_:][-A-Za-z0-9_:.]*(?:=\"[^\"<>\n]*\")?)*) *(/)?>)?"
)
"""Every `<`: an end tag, a start tag (name, attributes, `/>`) of the subset, or (no group) a `<` that starts none."""
_ATTR = re.compile(r" +([A-Za-z_:][-A-Za-z0-9_:.]*)(?:=\"([^\"]*)\")?")
# Outside the subset anywhere on the page: a line that superfences could take for a fence (it runs before the
# HTML extractor, inside HTML too); `&#` that is not a whole character reference (HTMLParser would add the `;`).
_FENCE = re.compile(r"^[ \t>]*(?:```|~~~)", re.MULTILINE)
_BROKEN_REFERENCE = re.compile(r"&#(?![0-9]+;|[xX][0-9a-fA-F]+;)")
_PLAIN = re.compile(r"[A-Za-z0-9 _-]*")
"""Attribute values that python-markdown's serializer writes as they are."""
_CDATA = frozenset({"script", "style"})
_EMPTY = frozenset({"hr"})
"""Tags python-markdown's HTML extractor treats as empty without a `/>` (not counted as open)."""


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    """As written: HTML (character references kept)."""
    id: str | None
    """The `{: #id }`, if the heading has one (`\\_` read as `_`)."""
    id_escaped: bool = False
    """Whether the id was written with a backslash escape: python-markdown's toc then holds it, while it makes the
    other headings' ids unique, in its escaped form, which no slug can equal."""


@dataclass(frozen=True, slots=True)
class PageForm:
    """What the conversion depends on, from a Markdown instance with the build's extensions (`page_form`)."""

    block_level: frozenset[str]
    normalize: NormalizeWhitespace
    slugify: Any
    separator: str
    permalink: str
    """The end of each heading: its permalink, `{id}` for the heading's id."""


def page_form(md: markdown.Markdown) -> PageForm | None:
    """The conversion of pages in flopkb's form under `md`'s extensions; None when they are not flopkb's."""
    for name, expected in _PROCESSORS.items():
        registry: Any = md
        for attribute in name.split("."):
            registry = getattr(registry, attribute)
        if {item.name for item in registry._priority} != expected:
            return None
    toc = md.treeprocessors["toc"]
    if (
        not isinstance(toc, TocTreeprocessor)
        or toc.use_permalinks is not True
        or toc.use_anchors
        or toc.permalink_leading
        or toc.base_level != 0
        or (toc.toc_top, toc.toc_bottom) != (1, 6)
    ):
        return None
    if not (_PLAIN.fullmatch(toc.permalink_class) and _PLAIN.fullmatch(toc.permalink_title)):
        return None
    title = f' title="{toc.permalink_title}"' if toc.permalink_title else ""
    permalink = f'<a class="{toc.permalink_class}" href="#{{id}}"{title}>&para;</a>'
    return PageForm(frozenset(md.block_level_elements), NormalizeWhitespace(md), toc.slugify, toc.sep, permalink)


@dataclass(frozen=True, slots=True)
class Split:
    parts: list[Heading | str]
    """Headings and blocks of HTML, in page order; a block followed by a blank line ends with a newline."""
    anchors: set[str]
    """The ids in the blocks' tags (and `<a name>`), as mkdocs' raw-HTML scan finds them."""


def split_page(markdown_text: str, form: PageForm) -> Split | None:
    """The page as headings and blocks of HTML, as python-markdown reads it; None if it is not in flopkb's form."""
    source = _normalized(markdown_text, form)
    if (
        not source.strip()
        or "\x00" in source
        or (("```" in source or "~~~" in source) and _FENCE.search(source))
        or ("&#" in source and _BROKEN_REFERENCE.search(source))
    ):
        return None
    parts: list[Heading | str] = []
    anchors: set[str] = set()
    position, end = 0, len(source)
    while position < end:
        char = source[position]
        if char == "\n":
            position += 1
        elif char == "#":
            match = _HEADING.match(source, position)
            if match is None:
                return None
            written = match[3]
            escaped = written is not None and "\\" in written
            parts.append(Heading(len(match[1]), match[2], written and written.replace("\\_", "_"), escaped))
            position = match.end()
        elif char == "<":
            stop = _block_end(source, position, form.block_level, anchors)
            if stop is None:
                return None
            parts.append(source[position:stop] + ("\n" if source.startswith("\n\n", stop) else ""))
            position = stop
        else:
            return None
    return Split(parts, anchors)


def _normalized(text: str, form: PageForm) -> str:
    """The text as python-markdown's first preprocessor leaves it (it changes nothing without these characters
    but for the two newlines it appends)."""
    if "\t" in text or "\r" in text or "\x02" in text or "\x03" in text or " \n" in text:
        return "\n".join(form.normalize.run(text.split("\n")))
    return text + "\n\n"


def _block_end(source: str, start: int, block_level: frozenset[str], anchors: set[str]) -> int | None:
    """Where the block of HTML at `start` ends (after its closing tag, which ends a line), as python-markdown's
    HTML extractor finds it; None outside the subset. Adds the ids of its tags to `anchors`."""
    stack: list[str] = []
    cdata = None
    for match in _TAG.finditer(source, start):
        close, name, attrs, empty = match.groups()
        if close is not None:
            if not stack:  # an end tag outside any block: text to python-markdown
                return None
            close = close.lower()
            if cdata is not None and close != cdata:
                return None
            cdata = None
            if close in stack:
                while stack.pop() != close:
                    pass
            if not stack:
                stop = match.end()
                return stop if source.startswith("\n", stop) else None
            continue
        if name is None or cdata is not None:
            return None
        name = name.lower()
        if not stack and (name not in block_level or name in _EMPTY or empty):
            return None
        if attrs:
            lowered = attrs.lower()
            if "id" in lowered or "name" in lowered:
                for attr in _ATTR.finditer(attrs):
                    key = attr[1].lower()
                    if key == "id" or (key == "name" and name == "a"):
                        if attr[2] is None:  # a bare `id`: mkdocs would record None
                            return None
                        anchors.add(html.unescape(attr[2]))
        if empty or name in _EMPTY:
            continue
        stack.append(name)
        if name in _CDATA:
            cdata = name
    return None


@dataclass(frozen=True, slots=True)
class Rendered:
    content: str
    toc_tokens: list[Any]
    """As python-markdown's toc extension nests them (`nest_toc_tokens`)."""
    title: str | None
    """The text of the page's first element when it is a `#` heading (mkdocs' title from the render)."""
    ids: list[str]
    """The headings' ids, in page order."""


def render_parts(parts: list[Heading | str], form: PageForm) -> Rendered:
    """What python-markdown makes of these parts: headings with ids (toc's, unique across the page, or their
    own) and permalinks, blocks as they are, one per line."""
    used = {part.id for part in parts if isinstance(part, Heading) and part.id is not None and not part.id_escaped}
    counters: dict[str, int] = {}
    pieces: list[str] = []
    tokens: list[Any] = []
    ids: list[str] = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(part)
            continue
        name = strip_tags(part.text)
        anchor = (
            part.id
            if part.id is not None
            else unique(form.slugify(html.unescape(name), form.separator), used, counters)
        )
        ids.append(anchor)
        tokens.append({"level": part.level, "id": anchor, "name": name, "html": part.text, "data-toc-label": ""})
        level = part.level
        pieces.append(f'<h{level} id="{anchor}">{part.text}{form.permalink.format(id=anchor)}</h{level}>')
    first = parts[0]
    title = strip_tags(first.text) if isinstance(first, Heading) and first.level == 1 else None
    return Rendered("\n".join(pieces).strip(), nest_toc_tokens(tokens), title, ids)


_PAGES_LOG = logging.getLogger("mkdocs.structure.pages")


def render_prerendered(page: Page, form: PageForm) -> bool:
    """Set what `Page.render` sets, without python-markdown; False (nothing set) if the page is not in the form."""
    split = split_page(page.markdown or "", form)
    if split is None:
        return False
    rendered = render_parts(split.parts, form)
    page.content = rendered.content
    page.toc = get_toc(rendered.toc_tokens)
    page._title_from_render = rendered.title
    page.present_anchor_ids = set(rendered.ids) | split.anchors
    if _PAGES_LOG.getEffectiveLevel() > logging.DEBUG:
        # What mkdocs' link processor records of the permalinks: links to the page's own anchors.
        links = {anchor: "#" + anchor for anchor in rendered.ids}
        page.links_to_anchors = {page.file: links} if links else {}
    return True


class Prerendered(BasePlugin):
    """Renders the pages in flopkb's form without python-markdown (see the module); counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.form: PageForm | None = None
        self.pages = 0

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs or {})
        self.form = page_form(md)
        return config

    def on_pre_page(self, page: Page, *, config: MkDocsConfig, files: Files) -> Page:
        if self.form is not None:
            page.render = functools.partial(self._render, page)  # type: ignore[method-assign]
        return page

    def _render(self, page: Page, config: MkDocsConfig, files: Files) -> None:
        assert self.form is not None
        if render_prerendered(page, self.form):
            self.pages += 1
        else:
            Page.render(page, config, files)

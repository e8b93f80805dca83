"""One parse of a markdown field, for the checker and the page alike: its wikilinks, where they are, its HTML.

A field is parsed once by one markdown-it-py configuration (`parse`): CommonMark with GFM tables and
strikethrough, raw HTML off (an HTML tag is shown as text), linkify and typographer off, images off (a
record must not make readers' browsers load anything: `![a](u)` is `!` and a link). Wikilinks are an
inline rule of that parser, tried before `link`:

    [[target]]  [[target|label]]  [[target#anchor]]  [[target#anchor|label]]

A link lies on one line. The target holds no `[ ] | #`, the anchor no `[ ] |`, the label no `[ ]`; a
backslash may stand inside a part before an ordinary character, and right before the `#` or `|` that
ends the target or anchor (`[[t\\|label]]`, Obsidian's way to label a link in a table cell, where GFM
drops that backslash before the cell is parsed), but never ends a part: `[[t\\]]` is no link, since
`\\]` is an escaped bracket. Parts are stripped of surrounding whitespace; an empty target is no link,
an empty anchor or label is None.

Being a rule of the inline parser, a wikilink is never found where markdown-it reads something else:
in a code span, a fenced or indented code block, a link's URL or title, a reference definition or an
autolink, or after a backslash (`\\[[x]]`). In the text of a markdown link (or an image's alt text: images
are off, so `![alt](u)` is `!` and a link) a wikilink is checked like any other and shows as its label
inside the outer link: links do not nest, and the outer link is kept. As for links in CommonMark, a code
span or autolink that starts inside `[[...]]` and ends after its `]]` takes precedence (`[[a|b`]]`` is no
link); one wholly inside the label does not.

In a table, a `|` inside `[[...]]` ends no cell, written `\\|` (as Obsidian writes it, and GFM drops the
backslash) or not: `| [[a|b]] |` is one cell holding a labelled link, as a reader expects (`_guarding`).

Offsets are those of the field's text as given (0-based characters), also in headings, tables, lists,
block quotes, lazy lines and after tabs: markdown-it gives block tokens source lines only, and the
content an inline token is parsed from has lost its container prefixes, so the block rules that make
inline tokens are wrapped to record, per token, which source offset each piece of its content comes
from (`_Segments`), and inline offsets are mapped back through them.

`scan` is what the checker calls: a field whose text holds nothing that can change the structure around
a link (see `_STRUCTURE`) takes its links from one regex pass, which the property tests prove equal to
`parse`; any other field is parsed.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from types import SimpleNamespace
from typing import Any, NamedTuple

from markdown_it import MarkdownIt, helpers
from markdown_it.common.utils import MD_TRIM_CHARS, escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

__all__ = [
    "NESTED",
    "UNRESOLVED",
    "AmbiguousEmphasis",
    "HrefFor",
    "LabelFor",
    "Link",
    "Prose",
    "Scan",
    "ambiguous_emphasis",
    "link_html",
    "parse",
    "render",
    "scan",
]


class Link(NamedTuple):
    """One wikilink; `text[offset:end]` of the field is the link as written, from its `[[` to its `]]`."""

    target: str
    anchor: str | None
    label: str | None
    offset: int
    end: int

    @property
    def written(self) -> str:
        """The target as written, with its anchor: the text a link without a label shows by default."""
        return f"{self.target}#{self.anchor}" if self.anchor else self.target


class AmbiguousEmphasis(NamedTuple):
    """A run of `*` between word characters that opened or closed emphasis: nearly always a multiplication."""

    offset: int
    marker: str
    written: str
    """The run with the character on each side of it, as written: `k*T`."""
    hint: str


@dataclass(frozen=True, slots=True)
class Prose:
    """A parsed markdown field: its text, the token stream its page is rendered from, and its links in order."""

    text: str
    tokens: tuple[Token, ...]
    links: tuple[Link, ...]


class Scan(NamedTuple):
    """What the checker needs of a field: its links and its ambiguous emphasis, each in order."""

    links: tuple[Link, ...]
    emphasis: tuple[AmbiguousEmphasis, ...]


# ---------------------------------------------------------------------------
# The link grammar

_TARGET = r"(?:[^\[\]|#\\\n]|\\[^\[\]|#\\\n])"
_ANCHOR = r"(?:[^\[\]|\\\n]|\\[^\[\]|\\\n])"
_LABEL = r"(?:[^\[\]\\\n]|\\[^\[\]\\\n])"
_WIKILINK = re.compile(rf"\[\[({_TARGET}*)(?:\\?#({_ANCHOR}*))?(?:\\?\|({_LABEL}*))?\]\]")
# Where a code span, an autolink or an escape may start: they bind tighter than a link.
_TIGHTER = re.compile(r"[`<\\]")


def _parts(match: re.Match[str]) -> tuple[str, str | None, str | None]:
    target, anchor, label = match.groups()
    return target.strip(), (anchor.strip() or None) if anchor else None, (label.strip() or None) if label else None


def _closes(state: StateInline, start: int, stop: int) -> bool:
    """Whether the `]]` at `stop` is outside every code span, autolink and escape that starts at `start` or later."""
    saved = state.pos
    found = _TIGHTER.search(state.src, start, stop)
    while found is not None:
        state.pos = found.start()
        state.md.inline.skipToken(state)
        if state.pos > stop:
            break
        found = _TIGHTER.search(state.src, state.pos, stop)
    state.pos = saved
    return found is None


def _wikilink(state: StateInline, silent: bool) -> bool:
    """The inline rule.

    It never matches in validation mode (markdown-it finding where a link's text ends). Inside a markdown
    link's text it matches too, as a nested link: links do not nest, so `[see [[a]]](url)` stays the
    markdown link it is, and the wikilink shows as its label (a record's title) in that link's text.
    """
    pos = state.pos
    if silent or not state.src.startswith("[[", pos):
        return False
    match = _WIKILINK.match(state.src, pos, state.posMax)
    if match is None:
        return False
    target, anchor, label = _parts(match)
    if not target or not _closes(state, pos + 2, match.end() - 2):
        return False
    token = state.push("wikilink", "", 0)
    token.meta = {"parts": (target, anchor, label), "span": (pos, match.end()), "nested": bool(state.linkLevel)}
    state.pos = match.end()
    return True


# ---------------------------------------------------------------------------
# Source offsets of inline content


@dataclass(frozen=True, slots=True)
class _Segments:
    """Where an inline token's content comes from in the (normalised) source.

    The content is `mdTrim(raw)`; `raw` is a concatenation of pieces, the piece starting at
    `starts[k]` in `raw` being a copy of the source from `sources[k]` on. `lead` is what the trim
    took off the front. A paragraph's pieces are its lines (a line's virtual spaces from a split
    tab sit before its source start and are never mapped: they are whitespace), a table cell's are
    split where GFM dropped the backslash of a `\\|`.
    """

    lead: int
    starts: tuple[int, ...]
    sources: tuple[int, ...]

    def source(self, offset: int) -> int:
        at = offset + self.lead
        k = bisect_right(self.starts, at) - 1
        return self.sources[k] + at - self.starts[k]


def _lead(raw: str) -> int:
    return len(raw) - len(raw.lstrip(MD_TRIM_CHARS))


def _lines(state: StateBlock, first: int, last: int) -> _Segments:
    """Segments of the content of lines `first` to `last` (excluded), read as paragraph and setext heading read them."""
    raw = state.getLines(first, last, state.blkIndent, False)
    starts, sources, at = [], [], 0
    for line, text in enumerate(raw.split("\n"), first):
        starts.append(at)
        sources.append(state.eMarks[line] - len(text))  # a line's content is a suffix of it
        at += len(text) + 1
    return _Segments(_lead(raw), tuple(starts), tuple(sources))


def _atx(state: StateBlock, line: int, level: int) -> _Segments:
    start = state.bMarks[line] + state.tShift[line] + level
    return _Segments(_lead(state.src[start : state.eMarks[line]]), (0,), (start,))


def _cells(src: str, start: int, end: int) -> list[_Segments]:
    """Segments of each cell of a table row, split as markdown-it's `escapedSplit` splits `mdTrim(src[start:end])`."""
    line = src[start:end]
    row = line.strip(MD_TRIM_CHARS)
    base = start + _lead(line)
    cells: list[tuple[str, list[int], list[int]]] = []
    text, starts, sources = "", [], []
    last = 0
    escaped = False
    for pos, char in enumerate(row):
        if char == "|":
            starts.append(len(text))
            sources.append(base + last)
            if escaped:  # `\|`: the backslash goes, the pipe stays in the cell
                text += row[last : pos - 1]
                last = pos
            else:
                text += row[last:pos]
                cells.append((text, starts, sources))
                text, starts, sources = "", [], []
                last = pos + 1
        escaped = char == "\\"
    starts.append(len(text))
    sources.append(base + last)
    cells.append((text + row[last:], starts, sources))
    if cells and not cells[0][0]:
        cells.pop(0)
    if cells and not cells[-1][0]:
        cells.pop()
    return [_Segments(_lead(text), tuple(starts), tuple(sources)) for text, starts, sources in cells]


BlockRule = Callable[[StateBlock, int, int, bool], bool]


def _recording(rule: BlockRule, segments: Callable[[StateBlock, list[Token]], None]) -> BlockRule:
    """`rule`, recording the segments of the inline tokens it makes while the block's state is at hand."""

    def recorded(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        count = len(state.tokens)
        if not rule(state, start, end, silent):
            return False
        if not silent:
            segments(state, state.tokens[count:])
        return True

    return recorded


def _paragraph_segments(state: StateBlock, tokens: list[Token]) -> None:
    """A paragraph's or a setext heading's (whose inline token's lines leave out the underline)."""
    first, last = tokens[1].map  # type: ignore[misc]
    tokens[1].meta["segments"] = _lines(state, first, last)


def _atx_segments(state: StateBlock, tokens: list[Token]) -> None:
    tokens[1].meta["segments"] = _atx(state, tokens[1].map[0], len(tokens[0].markup))  # type: ignore[index]


def _table_segments(state: StateBlock, tokens: list[Token]) -> None:
    cells = [token for token in tokens if token.type == "inline"]
    src = _guarded(state.src)
    for line, row in groupby(cells, key=lambda token: token.map[0]):  # type: ignore[index]
        found = _cells(src, state.bMarks[line] + state.tShift[line], state.eMarks[line])
        for index, token in enumerate(row):  # a row short of cells is padded with empty ones
            token.meta["segments"] = found[index] if index < len(found) else _Segments(0, (0,), (0,))


_LINK_IN_ROW = re.compile(r"\[\[[^\[\]\n]*\]\]")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_GUARD = "\0"
"""Stands for a `|` inside a wikilink while a table is split: markdown-it has made every NUL of the text U+FFFD."""


@lru_cache(maxsize=8)
def _guarded(src: str) -> str:
    """`src` with each unescaped `|` inside `[[...]]` as `_GUARD`: a table cell does not end inside a wikilink, as
    a reader expects (`| [[a|b]] |` is one cell holding a labelled link; GFM alone would cut it at the `|`)."""
    if "[[" not in src or "|" not in src:
        return src
    return _LINK_IN_ROW.sub(lambda link: _UNESCAPED_PIPE.sub(_GUARD, link.group()), src)


def _guarding(rule: BlockRule) -> BlockRule:
    """The table rule, splitting cells outside wikilinks only (`_guarded`); the cells keep their `|`."""

    def table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        src, count = state.src, len(state.tokens)
        state.src = _guarded(src)
        try:
            return rule(state, start, end, silent)
        finally:
            state.src = src
            for token in state.tokens[count:]:
                token.content = token.content.replace(_GUARD, "|")

    return table


_BLOCK_RULES = {
    "paragraph": _paragraph_segments,
    "lheading": _paragraph_segments,
    "heading": _atx_segments,
    "table": _table_segments,
}

InlineRule = Callable[[StateInline, bool], bool]


def _delimiter_runs(rule: InlineRule) -> InlineRule:
    """The emphasis rule, recording on each delimiter token the run of `*` or `_` it came from (content offsets)."""

    def recorded(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.delimiters)
        if not rule(state, silent):
            return False
        for delimiter in state.delimiters[count:]:
            state.tokens[delimiter.token].meta["run"] = (start, state.pos - start)
        return True

    return recorded


_FAILED_LABELS = "_flopkb_failed_labels"
"""The attribute of a `StateInline` holding the starts of link labels known not to close: {(start, disableNested):
posMax}, and under the key None the position of the text's last `]`."""


def _parse_link_label(state: StateInline, start: int, disableNested: bool = False) -> int:
    """markdown-it's `parseLinkLabel`, in linear time over a text with many `[` that never close.

    markdown-it tries a label at every `[`, and each try scans to the end of the paragraph when no `]`
    closes it: 600 KB of `[[a|` took minutes. A scan from `start` that fails passes later starts `q` as
    plain-text `[`; the scan from `q` would see the same tokens (markdown-it caches them by position)
    with its level offset by the level `start`'s scan had at `q`, so it fails too unless a `]` before the
    end of the scan brings that level below it. Those starts are remembered, and answered without a scan
    (a scan ended by a nested link, with `disableNested`, only for that mode). No label closes after the
    text's last `]`.
    """
    failed: dict[tuple[int, bool] | None, int] = getattr(state, _FAILED_LABELS, None) or {None: state.src.rfind("]")}
    setattr(state, _FAILED_LABELS, failed)
    if failed[None] <= start or state.posMax in (failed.get((start, disableNested)), failed.get((start, False))):
        return -1
    old = state.pos
    state.pos = start + 1
    level = 1
    opened: list[tuple[int, int]] = []  # (position, level after it) of each plain-text `[`
    closed: list[tuple[int, int]] = []  # (position, level after it) of each `]`
    while state.pos < state.posMax:
        marker = state.src[state.pos]
        if marker == "]":
            level -= 1
            closed.append((state.pos, level))
            if level == 0:
                end = state.pos
                state.pos = old
                return end
        before = state.pos
        state.md.inline.skipToken(state)
        if marker == "[":
            if before == state.pos - 1:
                level += 1
                opened.append((before, level))
            elif disableNested:
                break
    aborted = state.pos < state.posMax
    state.pos = old
    lowest = state.posMax + 1  # the lowest level after each `]` that follows, walking back
    for position, after in reversed(opened):
        while closed and closed[-1][0] > position:
            lowest = min(lowest, closed.pop()[1])
        if lowest >= after:
            failed[(position, aborted)] = state.posMax
    return -1


def _shortcut_before_wikilink(rule: InlineRule) -> InlineRule:
    """The link rule, reading `[text][[...` as CommonMark does: a shortcut reference, then the rest.

    markdown-it takes the `[[` for a (failing) reference label, and `[r]` followed by a wikilink would
    lose its link: a link changing the text around it. A label holds no unescaped bracket, so retry
    with the text ending after the first `]`.
    """

    def link(state: StateInline, silent: bool) -> bool:
        if rule(state, silent):
            return True
        end = _parse_link_label(state, state.pos, True) if state.src.startswith("[", state.pos) else -1
        if end < 0 or not state.src.startswith("[[", end + 1):
            return False
        limit, state.posMax = state.posMax, end + 1
        try:
            return rule(state, silent)
        finally:
            state.posMax = limit

    return link


def _render_wikilink(self: Any, tokens: Sequence[Token], index: int, options: Any, env: dict[str, Any]) -> str:
    meta = tokens[index].meta
    return env["wikilink"](meta["link"], meta["nested"])


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable(["image"])
    for name, segments in _BLOCK_RULES.items():
        rule = next(found for found in md.block.ruler.__rules__ if found.name == name)
        fn = _guarding(rule.fn) if name == "table" else rule.fn
        md.block.ruler.at(name, _recording(fn, segments), {"alt": rule.alt})
    emphasis = next(found for found in md.inline.ruler.__rules__ if found.name == "emphasis")
    md.inline.ruler.at("emphasis", _delimiter_runs(emphasis.fn))
    link = next(found for found in md.inline.ruler.__rules__ if found.name == "link")
    md.inline.ruler.at("link", _shortcut_before_wikilink(link.fn))
    md.inline.ruler.before("link", "wikilink", _wikilink)
    md.add_render_rule("wikilink", _render_wikilink)
    md.helpers = SimpleNamespace(  # type: ignore[assignment]
        parseLinkLabel=_parse_link_label,
        parseLinkDestination=helpers.parseLinkDestination,
        parseLinkTitle=helpers.parseLinkTitle,
    )
    return md


# ---------------------------------------------------------------------------
# Parsing


def _crlf(text: str) -> list[int]:
    """Where markdown-it's normalisation made one `\\n` of a `\\r\\n`, as offsets into the normalised text."""
    return [match.start() - k for k, match in enumerate(re.finditer("\r\n", text))] if "\r\n" in text else []


def _offset(inline: Token, at: int, crlf: list[int]) -> int:
    """The offset in the field's text of offset `at` of an inline token's content."""
    source: int = inline.meta["segments"].source(at)
    return source + bisect_left(crlf, source) if crlf else source


def parse(text: str) -> Prose:
    """`text` parsed, with its links located in it."""
    tokens = _markdown().parse(text)
    crlf = _crlf(text)
    links: list[Link] = []
    for inline in tokens:
        for token in inline.children or ():
            if token.type == "wikilink":
                (target, anchor, label), (start, end) = token.meta["parts"], token.meta["span"]
                link = Link(target, anchor, label, _offset(inline, start, crlf), _offset(inline, end - 1, crlf) + 1)
                token.meta["link"] = link
                links.append(link)
    return Prose(text, tuple(tokens), tuple(links))


# ---------------------------------------------------------------------------
# Emphasis that is nearly always a multiplication

_WORDISH = re.compile(r"[\w()\[\]{}]")
_MAYBE_AMBIGUOUS = re.compile(r"[\w()\[\]{}]\*+[\w()\[\]{}]")
_HINT = "for a product write `{}` or `×`, or put the whole formula in a code span (`` `{}` ``)"


def ambiguous_emphasis(prose: Prose) -> list[AmbiguousEmphasis]:
    """Each run of `*` that stands between word characters, brackets or digits and opened or closed emphasis."""
    crlf = _crlf(prose.text)
    found: dict[int, AmbiguousEmphasis] = {}
    for inline in prose.tokens:
        content = inline.content
        for token in inline.children or ():
            if token.markup[:1] != "*" or "run" not in token.meta or token.type == "text":
                continue
            start, length = token.meta["run"]
            end = start + length
            if start and end < len(content) and _WORDISH.match(content[start - 1]) and _WORDISH.match(content[end]):
                offset = _offset(inline, start, crlf)
                written = content[start - 1 : end + 1]
                hint = _HINT.format(written.replace("*", "\\*"), written)
                found[offset] = AmbiguousEmphasis(offset, content[start:end], written, hint)
    return sorted(found.values())


# ---------------------------------------------------------------------------
# Rendering

UNRESOLVED = '<span class="flopkb-unresolved" title="this link resolves to no record">{}</span>'
"""How a link that resolves to nothing shows (possible only when `dangling-link` is turned down)."""
NESTED = '<span class="flopkb-nested-link">{}</span>'
"""How a link inside a markdown link's text (or an image's alt text) shows: its label, in the outer link."""

HrefFor = Callable[[str, "str | None"], "str | None"]
LabelFor = Callable[[str, "str | None"], "str | None"]


def render(prose: Prose, href_for: HrefFor, label_for: LabelFor | None = None) -> str:
    """The HTML of `prose`, from its tokens; not sanitised (the caller's allowlist applies to all of it).

    `href_for(target, anchor)` is a link's URL, or None when it resolves to nothing (it then shows as
    `UNRESOLVED`). A link shows its label; one written without a label shows `label_for(target,
    anchor)` when that gives one (a record's title), else its target as written.
    """
    md = _markdown()
    page: str = md.renderer.render(
        prose.tokens,
        md.options,
        {"wikilink": lambda link, nested: link_html(link, href_for, label_for, nested=nested)},
    )
    return page


def link_html(link: Link, href_for: HrefFor, label_for: LabelFor | None = None, *, nested: bool = False) -> str:
    """The HTML of one wikilink, as `render` shows it; `nested` when it stands in a markdown link's text."""
    md = _markdown()
    label = escapeHtml(link.label or (label_for and label_for(link.target, link.anchor)) or link.written)
    href = href_for(link.target, link.anchor)
    url = None if href is None else md.normalizeLink(href)
    if url is None or not md.validateLink(url):
        return UNRESOLVED.format(label)
    if nested:  # inside a markdown link's text, which is the link: the label, marked as a record's
        return NESTED.format(label)
    return f'<a href="{escapeHtml(url)}">{label}</a>'


# ---------------------------------------------------------------------------
# The checker's fast path

# A text with none of these characters has no code span or fence (backtick), no escape (backslash), no
# autolink (`<`), no tab (indented code, tab stops) and no character markdown-it rewrites before it parses
# (`\r`, NUL). `_fast_links` rules out the rest: a `~~~` fence, indented code and markdown-it's nesting
# limit (by the lines' starts), a link URL or title or a reference definition (each needs a `]` that
# closes no wikilink), and a table row cutting a link (a table needs a `|` outside links). What stays
# (emphasis, strikethrough, headings, lists, block quotes, thematic breaks, entities, brackets) cannot
# hide a link or cut one: a wikilink is one token, tokenised before emphasis is resolved, and nothing
# that starts before it can span it.
_UNSAFE = ("`", "\\", "<", "\t", "\r", "\0")
# A line that may start indented code (four spaces after its container markers) or be nested too deep
# for markdown-it (its `maxNesting` of 20: each container costs at least one character of the prefix).
_LINE_START = r"[ >*+\-0-9.)]*?(?: {4}|[ >*+\-0-9.)]{16})"
_FIRST_LINE = re.compile(_LINE_START)
_LATER_LINE = re.compile("\n" + _LINE_START)
# `_WIKILINK` on text without a backslash.
_PLAIN_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
_new_link = tuple.__new__


def _plain(text: str) -> bool:
    """Whether no construct of `text` but those `_fast_links` looks for can change what is a link."""
    for char in _UNSAFE:
        if char in text:
            return False
    if "~" in text and "~~~" in text:
        return False
    return _FIRST_LINE.match(text) is None and _LATER_LINE.search(text) is None


def _fast_links(text: str) -> tuple[Link, ...] | None:
    """The links of a `_plain` text from one regex pass, or None when a `]` or `|` outside them may matter."""
    links = []
    pipes = 0
    for match in _PLAIN_WIKILINK.finditer(text):
        target, anchor, label = match.groups()
        target = target.strip()
        if target:
            if label is not None:
                pipes += 1 + label.count("|")
                label = label.strip() or None
            anchor = anchor.strip() or None if anchor else None
            links.append(_new_link(Link, (target, anchor, label, match.start(), match.end())))
    if text.count("]") != 2 * len(links) or ((pipes or "|" in text) and text.count("|") != pipes):
        return None
    return tuple(links)


def scan(text: str) -> Scan:
    """The links and ambiguous emphasis of a field, as `parse` and `ambiguous_emphasis` find them, fast when it can."""
    prose = None
    links = () if "[[" not in text else _fast_links(text) if _plain(text) else None
    if links is None:
        prose = parse(text)
        links = prose.links
    if "*" not in text or _MAYBE_AMBIGUOUS.search(text) is None:
        return _new_scan(Scan, (links, ()))
    return Scan(links, tuple(ambiguous_emphasis(prose or parse(text))))


_new_scan = tuple.__new__

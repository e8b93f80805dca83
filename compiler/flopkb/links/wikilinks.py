"""Wikilink grammar: find ``[[target#anchor|label]]`` in markdown, outside code.

This module is pure (no I/O, no global state beyond compiled regexes and one
lazily built markdown-it parser) and is tuned for the common case.

Grammar
-------
A wikilink is ``[[`` *target* [``#`` *anchor*] [``|`` *label*] ``]]`` on one
line.  *target* may not contain ``[ ] | #``; *anchor* may not contain
``[ ] |``; *label* may not contain ``[ ]``.  Target, anchor and label are
stripped of surrounding whitespace; an empty target is not a link (``[[ ]]``,
``[[#a]]``); an empty anchor or label becomes ``None``.

What is code
------------
Nothing inside an inline code span (any backtick-run length), a fenced code
block (backticks or tildes) or an indented code block is a link, exactly as
CommonMark (markdown-it-py, ``commonmark`` preset) decides.  A link is dropped
when its ``[[`` or its ``]]`` lies in code (so a fence's info string, part of
the fence, links nothing); a code span wholly inside a link,
``[[t|the `x` part]]``, does not stop the link.

Why code spans are found by hand
--------------------------------
markdown-it-py gives *block* tokens a ``.map`` (source line range) but the
children of ``inline`` tokens carry no source offsets, and the inline
``content`` they are parsed from is rewritten (blockquote markers and
container indentation stripped, tabs expanded, trimmed), so offsets in it do
not map back to the source reliably.  We therefore use markdown-it only for
block structure (which lines are code blocks / fences, which lines form one
inline-parsed leaf block) and apply the CommonMark code-span rule ourselves on
the raw source of each leaf block: a backtick run of length *n* opens a span
closed by the next run of exactly length *n*; with no such run it is literal
text.  As in markdown-it, a backslash escapes the next character (so ``\\```
is not an opener) and an autolink or raw HTML tag that starts before a backtick
run takes precedence over it.  (Known, deliberate gap: a backtick inside an
inline link's destination or title, ``[a](x`y)``, is treated as an opener.)

Speed
-----
Links are found first (one ``re.split`` over the text), then dropped if
their ``[[`` or ``]]`` lies in code; code is only looked for when a link was
found, and markdown-it only when block structure can matter:

* no ``[[``: return at once (the common case for most fields);
* no backtick, no ``~~~`` and no link on an indented line: no code at all;
* a link on a line indented by 4+ spaces whose previous line is paragraph
  text (nested lists): not code, since indented code cannot interrupt a
  paragraph;
* backticks, no HTML block start, and either no fence or fences in a text
  without blockquotes/lists: fences found by the CommonMark fence rule, code
  spans by the rule above, exact as long as no span crosses a line break;
* otherwise (``\\r``, HTML blocks, fences inside containers, multi-line code
  spans, indented link lines that may be code): markdown-it's block parser,
  with inline parsing switched off.

The equivalence of every fast path with markdown-it's own rendering is
checked by a property test (tests/test_wikilinks.py).

Positions of links in their files are found by `flopkb.load.positions`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "WikiLink",
    "find_wikilinks",
    "replace_wikilinks",
]


@dataclass(frozen=True, slots=True)
class WikiLink:
    """One ``[[...]]`` occurrence; ``markdown[offset:end]`` is the whole link."""

    target: str
    anchor: str | None
    label: str | None
    offset: int
    end: int


# --------------------------------------------------------------------------
# Link grammar

_LINK_RE = re.compile(r"\[\[([^\[\]|#\r\n]*)(?:#([^\[\]|\r\n]*))?(?:\|([^\[\]\r\n]*))?\]\]")

# Line hints.  Each comes as a pair: FIRST is tried with ``.match`` at a line
# start; LATER starts with a literal "\n" so that the regex engine can hop
# between candidate positions (``^`` with MULTILINE, or a leading character
# class, makes it try every position: 20-40x slower).  Texts with a "\r" are
# left to markdown-it, so "\n" is the only line break here.
#
# _PREFIX is what may stand before a block's content on a line: indentation,
# blockquote markers, list markers.  The hints are conservative: a false
# positive only costs speed (markdown-it decides), a false negative would be
# wrong.
_PREFIX = r"[ \t>*+\-0-9.)]*?"


def _line_hint(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(pattern), re.compile("\n" + pattern)


# Indented code needs 4 columns of whitespace after its container's markers:
# four spaces in a row or a tab within the line's prefix.
_INDENT_HINT = re.compile(_PREFIX + r"(?:\t| {4})")
# A line that, if the previous line was paragraph text, is paragraph text too
# (or a list item starting with paragraph text): spaces, at most one list
# marker followed by 1-4 spaces, then a character that starts no other block.
_PARAGRAPH_LINE = re.compile(r"( *)(?:(?:[-+*]|[0-9]{1,9}[.)]) {1,4})?(?:[A-Za-z(\"'@]|\[\[)")


def _continues_paragraph(text: str, line: int, depth: int = 0) -> bool:
    """Whether the indented line starting at ``line`` is provably not code.

    An indented code block cannot interrupt a paragraph (CommonMark 4.4): if
    the previous line is paragraph text, this line is a (possibly lazy)
    paragraph continuation, or a list item whose content starts with text.
    This keeps nested lists indented by four spaces off the markdown-it path.
    False means "don't know".
    """
    if depth > 16 or line == 0:
        return False
    if _PARAGRAPH_LINE.match(text, line) is None:
        return False
    prev = text.rfind("\n", 0, line - 1) + 1
    m = _PARAGRAPH_LINE.match(text, prev, line - 1)
    if m is None:
        return False
    if len(m.group(1)) >= 4:  # the previous line might be code itself
        return _continues_paragraph(text, prev, depth + 1)
    return True


# Suspicious lines, classified in one pass: (1) indented by four columns
# (maybe indented code), (2) a fence marker (maybe a fence, possibly inside
# containers), (3) the start of an HTML block (backticks and fences inside one
# are not code).
_SUSPICIOUS = _PREFIX + r"(?:(\t| {4})|(```|~~~)|(<[A-Za-z/!?]))"
_SUSPICIOUS_FIRST, _SUSPICIOUS_LATER = _line_hint(_SUSPICIOUS)
_FENCE_HINT = _line_hint(_PREFIX + r"(?:```|~~~)")
_HTML_HINT = _line_hint(_PREFIX + r"<[A-Za-z/!?]")
# A blockquote or list item, or a link reference definition.
_CONTAINER_HINT = _line_hint(r" {0,3}(?:>|[-+*](?:[ \t\n]|\Z)|[0-9]{1,9}[.)](?:[ \t\n]|\Z)|\[[^\n]*\]:)")
# Fences outside containers (CommonMark 4.5): an opener is 3+ backticks (info
# string without backticks) or tildes, indented by at most 3 spaces; the
# closer uses the same character, at least as many, and nothing but spaces.
_FENCE_OPEN = _line_hint(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = {
    "`": re.compile(r"\n {0,3}(`{3,})[ \t]*(?:\n|\Z)"),
    "~": re.compile(r"\n {0,3}(~{3,})[ \t]*(?:\n|\Z)"),
}


def _has_line(
    hint: tuple[re.Pattern[str], re.Pattern[str]],
    text: str,
    start: int = 0,
    end: int | None = None,
) -> bool:
    """Whether a line starting in ``text[start:end]`` matches (``start`` is a line start)."""
    if end is None:
        end = len(text)
    first, later = hint
    return first.match(text, start, end) is not None or later.search(text, start, end) is not None


def _flat_fences(text: str) -> list[tuple[int, int]]:
    """Line ranges of the fenced code blocks of a text without containers or HTML."""
    fences: list[tuple[int, int]] = []
    first, later = _FENCE_OPEN
    size = len(text)
    pos = 0
    while pos < size:
        m = first.match(text, pos) if pos == 0 or text[pos - 1] == "\n" else None
        if m is None:
            m = later.search(text, pos)
            if m is None:
                break
            line = m.start() + 1
        else:
            line = pos
        marker, info = m.group(1), m.group(2)
        eol = text.find("\n", line)
        after = size if eol < 0 else eol  # the "\n" that ends the opener line
        if marker[0] == "`" and "`" in info:
            pos = size if eol < 0 else eol + 1  # not a fence: paragraph text
            continue
        close_re = _FENCE_CLOSE[marker[0]]
        end = size
        q = after
        while q < size:
            c = close_re.search(text, q)
            if c is None:
                break
            if len(c.group(1)) >= len(marker):
                end = c.end()
                break
            q = c.end() - 1 if text[c.end() - 1] == "\n" else c.end()
        fences.append((line, end))
        pos = end
    return fences


# Characters that matter to the code-span scanner.
_SPAN_SPECIAL = re.compile(r"[\\`<]")
_NEWLINE = re.compile(r"\r\n?|\n")

# Autolinks and raw HTML, as markdown-it's autolink / html_inline rules see
# them (commonmark preset has html enabled).
_AUTOLINK_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^<>\x00-\x20]*")
_AUTOLINK_EMAIL = re.compile(
    r"[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*"
)
_html_tag_re: re.Pattern[str] | None = None


def _html_tag_match(text: str, pos: int, end: int) -> int:
    """End of the raw HTML tag starting at ``pos`` (a ``<``), or -1."""
    global _html_tag_re
    if pos + 2 >= end:
        return -1
    ch = text[pos + 1]
    if not (ch in "!?/" or ("a" <= ch.lower() <= "z")):
        return -1
    if _html_tag_re is None:
        from markdown_it.common.html_re import HTML_TAG_RE

        pattern = HTML_TAG_RE.pattern
        _html_tag_re = re.compile(pattern.removeprefix("^"))
    m = _html_tag_re.match(text, pos, end)
    return m.end() if m else -1


def _autolink_match(text: str, pos: int, end: int) -> int:
    """End of the autolink ``<...>`` starting at ``pos``, or -1."""
    close = text.find(">", pos + 1, end)
    if close < 0:
        return -1
    inner_start = pos + 1
    if text.find("<", inner_start, close) >= 0:
        return -1
    m = _AUTOLINK_URL.fullmatch(text, inner_start, close) or _AUTOLINK_EMAIL.fullmatch(text, inner_start, close)
    return close + 1 if m else -1


def _code_spans(text: str, start: int, end: int) -> tuple[list[tuple[int, int]], bool]:
    """Inline code spans in ``text[start:end]`` by the CommonMark backtick rule.

    Returns ``(spans, multiline)``: half-open ranges of the spans (backticks
    included), and whether any span or skipped HTML tag crosses a line break.
    """
    spans: list[tuple[int, int]] = []
    multiline = False
    find = text.find
    # Backslashes and "<" are rare: without them, hop from backtick to
    # backtick with str.find instead of a (much slower) character-class search.
    plain = find("\\", start, end) < 0 and find("<", start, end) < 0
    search = _SPAN_SPECIAL.search
    # A run length with no closer after some point has none after any later
    # point either: remembering them keeps pathological inputs linear-ish.
    unclosed: set[int] = set()
    i = start
    while True:
        if plain:
            j = find("`", i, end)
            if j < 0:
                break
        else:
            m = search(text, i, end)
            if m is None:
                break
            j = m.start()
            c = text[j]
            if c == "\\":
                i = j + 2  # markdown-it's escape rule consumes "\" and any next char
                continue
            if c == "<":
                k = _autolink_match(text, j, end)
                if k < 0:
                    k = _html_tag_match(text, j, end)
                if k < 0:
                    i = j + 1
                else:
                    if find("\n", j, k) >= 0 or find("\r", j, k) >= 0:
                        multiline = True
                    i = k
                continue
        # a backtick run
        k = j + 1
        while k < end and text[k] == "`":
            k += 1
        n = k - j
        close = -1
        if n not in unclosed:
            p = k
            while True:
                q = find("`", p, end)
                if q < 0:
                    unclosed.add(n)
                    break
                r = q + 1
                while r < end and text[r] == "`":
                    r += 1
                if r - q == n:
                    close = r
                    break
                p = r
        if close < 0:
            i = k  # unmatched run: literal backticks
            continue
        spans.append((j, close))
        if not multiline and (find("\n", k, close) >= 0 or find("\r", k, close) >= 0):
            multiline = True
        i = close
    return spans, multiline


# --------------------------------------------------------------------------
# Block structure via markdown-it

_md = None


def _block_parser():
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark")
        # Block structure is all we need: skip inline parsing entirely.
        md.core.ruler.disable(["inline", "text_join"], ignoreInvalid=True)
        _md = md
    return _md


def _line_starts(text: str) -> list[int]:
    """Offsets of line starts, with line breaks as markdown-it counts them."""
    starts = [0]
    starts.extend(m.end() for m in _NEWLINE.finditer(text))
    return starts


def _code_ranges_markdown_it(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint half-open ranges of ``text`` that are code."""
    tokens = _block_parser().parse(text)
    starts = _line_starts(text)
    nlines = len(starts)
    size = len(text)

    def at(line: int) -> int:
        return starts[line] if line < nlines else size

    ranges: list[tuple[int, int]] = []
    for tok in tokens:
        if tok.map is None:
            continue
        if tok.type == "code_block" or tok.type == "fence":
            ranges.append((at(tok.map[0]), at(tok.map[1])))
        elif tok.type == "inline" and "`" in tok.content:
            spans, _ = _code_spans(text, at(tok.map[0]), at(tok.map[1]))
            ranges.extend(spans)
    ranges.sort()
    return ranges


def _code_ranges(text: str, links: list[WikiLink]) -> list[tuple[int, int]] | None:
    """Code ranges of ``text`` that may matter for ``links``; None when none.

    Exact for the links' delimiters (see the module docstring for the
    reasoning); markdown-it is the fallback whenever block structure matters.
    """
    if "\r" in text:
        return _code_ranges_markdown_it(text)
    # Indented code: a link is in one only if its own line is indented.
    # (Backticks on other indented-code lines can change the pairing of code
    # spans only through a span that crosses a line break: caught below.)
    # One pass over the line starts classifies the suspicious lines.
    indented = fences = html = False
    m = _SUSPICIOUS_FIRST.match(text)
    if m is not None:
        indented, fences, html = (
            m.group(1) is not None,
            m.group(2) is not None,
            m.group(3) is not None,
        )
    found = _SUSPICIOUS_LATER.search(text)  # usually None: cheaper than finditer
    if found is not None:
        for m in _SUSPICIOUS_LATER.finditer(text, found.start()):
            if m.group(1) is not None:
                indented = True
            elif m.group(2) is not None:
                fences = True
            else:
                html = True
    if indented:
        # Four leading spaces shadow whatever follows them on the line (the
        # regex stops at the first alternative): look again for fences and
        # HTML blocks inside containers, e.g. "- a\n\n     ```".
        fences = fences or _has_line(_FENCE_HINT, text)
        html = html or _has_line(_HTML_HINT, text)
        indent = _INDENT_HINT.match
        rfind = text.rfind
        for link in links:
            line = rfind("\n", 0, link.offset) + 1
            if indent(text, line, link.offset) and not _continues_paragraph(text, line):
                return _code_ranges_markdown_it(text)
    backticks = "`" in text
    if not backticks and not fences:
        return None
    if html:
        return _code_ranges_markdown_it(text)
    if fences:
        if _has_line(_CONTAINER_HINT, text):
            return _code_ranges_markdown_it(text)
        blocks = _flat_fences(text)
    else:
        blocks = []
    if not backticks:
        return blocks
    # Code spans between the fences.  A span that stays on one line cannot
    # cross a block boundary, so the whole-region scan is exact unless some
    # span crosses a line break.
    ranges: list[tuple[int, int]] = []
    pos = 0
    for a, b in blocks + [(len(text), len(text))]:
        if text.find("`", pos, a) >= 0:
            spans, multiline = _code_spans(text, pos, a)
            if multiline:
                return _code_ranges_markdown_it(text)
            ranges.extend(spans)
        if a < b:
            ranges.append((a, b))
        pos = b
    return ranges


# --------------------------------------------------------------------------
# Public API


class _MutableWikiLink:
    """Same slot layout as WikiLink, without the frozen ``__setattr__``.

    A frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``: ~1.5-2 us per link on the reference machine, more
    than the whole scan.  The hot loop instead allocates this twin, fills its
    slots with plain attribute stores and switches its ``__class__`` to
    :class:`WikiLink` (CPython allows that between classes with identical
    ``__slots__`` layouts); the result is an ordinary, frozen, equal and
    hashable WikiLink.  Checked at import; falls back to the constructor.
    """

    __slots__ = WikiLink.__slots__


def _class_swap_works() -> bool:
    try:
        link = object.__new__(_MutableWikiLink)
        link.target = "t"
        link.anchor = link.label = None
        link.offset, link.end = 0, 5
        link.__class__ = WikiLink  # type: ignore[assignment]
    except TypeError:  # pragma: no cover - not CPython
        return False
    return link == WikiLink("t", None, None, 0, 5)  # type: ignore[comparison-overlap]


_CLASS_SWAP = _class_swap_works()


def _links_in(text: str, base: int, out: list[WikiLink]) -> None:
    """Append the links of ``text`` (which starts at ``base`` in the markdown).

    ``_LINK_RE.split`` yields ``[gap, target, anchor, label, gap, ...]`` in one
    C call; since the groups cover everything between the delimiters, each
    link's length, hence every offset, follows from the lengths of the parts.
    About twice as fast as ``finditer`` and one match object per link.
    """
    parts = _LINK_RE.split(text)
    append = out.append
    new = object.__new__
    twin = _MutableWikiLink
    frozen = WikiLink
    swap = _CLASS_SWAP
    pos = base + len(parts[0])
    for k in range(1, len(parts), 4):
        target = parts[k]
        anchor = parts[k + 1]
        label = parts[k + 2]
        size = 4 + len(target)
        if anchor is not None:
            size += 1 + len(anchor)
            anchor = anchor.strip() or None
        if label is not None:
            size += 1 + len(label)
            label = label.strip() or None
        target = target.strip()
        if target:
            if swap:
                link = new(twin)
                link.target = target
                link.anchor = anchor
                link.label = label
                link.offset = pos
                link.end = pos + size
                link.__class__ = frozen
                append(link)
            else:  # pragma: no cover
                append(frozen(target, anchor, label, pos, pos + size))
        pos += size + len(parts[k + 3])


def find_wikilinks(markdown: str) -> list[WikiLink]:
    """Every wikilink in ``markdown`` outside code, in order of position."""
    if "[[" not in markdown:
        return []
    out: list[WikiLink] = []
    _links_in(markdown, 0, out)
    if not out:
        return out
    ranges = _code_ranges(markdown, out)
    if not ranges:
        return out
    # A link whose "[[" or "]]" lies inside code is no link ("`[[a`]]",
    # "[[a`]]`"); a code span wholly inside a link ("[[t|the `x` part]]") does
    # not stop it.  Scanning the whole text once and then dropping links is
    # the same as scanning around the code: a match holds no "[" or "]" but its
    # delimiters, so no other link can start inside a dropped one.
    # Only a range holding "[[" or "]]" can drop a link (a delimiter in code
    # lies there whole: ranges start and end at a backtick or a line break).
    find = markdown.find
    bad = [(a, b) for a, b in ranges if find("[[", a, b) >= 0 or find("]]", a, b) >= 0]
    if not bad:
        return out
    offsets = [link.offset for link in out]
    drop: set[int] = set()
    for a, b in bad:
        i = bisect_left(offsets, a)
        drop.update(range(i, bisect_left(offsets, b)))  # "[[" in code
        # Links do not overlap, so only the last one opened before the range
        # can reach into it; it is dropped if its "]]" lies in the range.
        if i and a <= out[i - 1].end - 1 < b:
            drop.add(i - 1)
    return [link for k, link in enumerate(out) if k not in drop] if drop else out


def replace_wikilinks(markdown: str, render: Callable[[WikiLink], str]) -> str:
    """``markdown`` with each link replaced by ``render(link)``; code untouched."""
    links = find_wikilinks(markdown)
    if not links:
        return markdown
    parts: list[str] = []
    pos = 0
    for link in links:
        parts.append(markdown[pos : link.offset])
        parts.append(render(link))
        pos = link.end
    parts.append(markdown[pos:])
    return "".join(parts)

"""Positions: flopkb's 1-based (line, column) in code points, and LSP's 0-based positions in the client's encoding.

flopkb counts lines at `\\n` alone (`flopkb.load.positions.LineIndex`); LSP
counts them at `\\r\\n`, `\\r` and `\\n`, and counts characters in the code
units of the negotiated encoding (UTF-16 unless the client offered UTF-8 or
UTF-32). Both are converted through the code-point offset into the text.

The line starts of both counts are found once per text (`lines_of`), not
once per position: a record of 12,000 claims has as many diagnostics or
inlay hints, each of which would otherwise scan the text from its start.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from lsprotocol import types

from flopkb.load.positions import LineIndex

_LSP_BREAK = re.compile(r"\r\n|\r|\n")
_TOKEN_END = re.compile(r"[\s,\]}]|$")


def units(text: str, encoding: str) -> int:
    """How many code units of `encoding` the client counts in `text`."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


@lru_cache(maxsize=8)
def lines_of(text: str) -> LineIndex:
    """flopkb's line index of `text`, built once for the few texts in use (a file's text is one object per check)."""
    return LineIndex(text)


@lru_cache(maxsize=8)
def _lsp_starts(text: str) -> list[int]:
    """The code-point offset where each of LSP's lines of `text` starts."""
    return [0, *(match.end() for match in _LSP_BREAK.finditer(text))]


def offset_of(lines: LineIndex, line: int, column: int) -> int:
    """The code-point offset of flopkb's (line, column), clamped to the text."""
    starts = lines.starts
    line = min(max(line, 1), len(starts))
    return min(max(lines.offset(line, max(column, 1)), 0), len(lines.text))


def line_end(lines: LineIndex, line: int) -> int:
    """The code-point offset of the end of flopkb's `line` (clamped to the text), before its `\n`."""
    starts = lines.starts
    line = min(max(line, 1), len(starts))
    return starts[line] - 1 if line < len(starts) else len(lines.text)


def lsp_position(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of a code-point offset (inside a `\r\n`: the end of its line)."""
    starts = _lsp_starts(text)
    line = bisect_right(starts, offset) - 1
    return types.Position(line=line, character=units(text[starts[line] : offset], encoding))


def code_point_offset(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of an LSP position (clamped to its line)."""
    start = 0
    for _ in range(position.line):
        match = _LSP_BREAK.search(text, start)
        if match is None:
            return len(text)
        start = match.end()
    match = _LSP_BREAK.search(text, start)
    end = match.start() if match else len(text)
    counted = 0
    for index in range(start, end):
        if counted >= position.character:
            return index
        counted += units(text[index], encoding)
    return end


def diagnostic_range(text: str, line: int, column: int, encoding: str) -> types.Range:
    """The range of a diagnostic at flopkb's (line, column): the token that starts there (at least one character)."""
    start = offset_of(lines_of(text), line, column)
    match = _TOKEN_END.search(text, start)
    end = match.start() if match else len(text)
    if end == start and start < len(text) and text[start] not in "\r\n":
        end += 1
    return types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding))

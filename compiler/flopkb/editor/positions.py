"""Positions: flopkb's 1-based (line, column) in code points, and LSP's 0-based positions in the client's encoding.

flopkb counts lines at `\\n` alone (`flopkb.load.positions.LineIndex`); LSP
counts them at `\\r\\n`, `\\r` and `\\n`, and counts characters in the code
units of the negotiated encoding (UTF-16 unless the client offered UTF-8 or
UTF-32). Both are converted through the code-point offset into the text.
"""

from __future__ import annotations

import re

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


def offset_of(lines: LineIndex, line: int, column: int) -> int:
    """The code-point offset of flopkb's (line, column), clamped to the text."""
    starts = lines.starts
    line = min(max(line, 1), len(starts))
    return min(max(lines.offset(line, max(column, 1)), 0), len(lines.text))


def lsp_position(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of a code-point offset."""
    line, start = 0, 0
    for match in _LSP_BREAK.finditer(text, 0, offset):
        if match.end() > offset:  # inside a \r\n: the end of its line
            break
        line, start = line + 1, match.end()
    return types.Position(line=line, character=units(text[start:offset], encoding))


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
    lines = LineIndex(text)
    start = offset_of(lines, line, column)
    match = _TOKEN_END.search(text, start)
    end = match.start() if match else len(text)
    if end == start and start < len(text) and text[start] not in "\r\n":
        end += 1
    return types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding))

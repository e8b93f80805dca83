"""Positions: flopkb's 1-based (line, column) in code points, and LSP's 0-based positions in the client's encoding.

flopkb counts lines at `\\n` alone (`flopkb.load.positions.LineIndex`); LSP
counts them at `\\r\\n`, `\\r` and `\\n`, and counts characters in the code
units of the negotiated encoding (UTF-16 unless the client offered UTF-8 or
UTF-32). Both are converted through the code-point offset into the text.

The line starts of both counts are found once per text (`lines_of`), not
once per position: a record of 12,000 claims has as many diagnostics or
inlay hints, each of which would otherwise scan the text from its start.
They are kept for the texts used last (`KEPT_CHARACTERS`), 8 bytes a line.
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict

from lsprotocol import types

from flopkb.load.positions import LineIndex

_LSP_BREAK = re.compile(r"\r\n|\r|\n")
_TOKEN_END = re.compile(r"[\s,\]}]|$")
_LINES = r"(?>[^\r\n]*(?:\r\n|\r|\n)){{{}}}"
"""The lines of a text before the one numbered in it (LSP's 0-based line); atomic, so that `\\r\\n` is one break."""
KEPT_CHARACTERS = 250_000
"""The line starts of the last two texts used are kept (the one a request is answered in, the one a check places a
diagnostic in), and those of the texts used before them while all kept hold at most this many characters (the files
a check's related places are in, used in turn with their diagnostic's file): not the versions of a large buffer."""
_UTF8_CONTINUATION = frozenset(range(0x80, 0xC0))
_UTF8_LEADING = bytes(range(0x80)) + bytes(range(0xC0, 0x100))


def units(text: str, encoding: str) -> int:
    """How many code units of `encoding` the client counts in `text`."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


class _Kept:
    """The line starts of the texts used last (`KEPT_CHARACTERS`); used from the message loop and from threads."""

    def __init__(self) -> None:
        self._tables: OrderedDict[str, tuple[LineIndex, array[int]]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> tuple[LineIndex, array[int]]:
        with self._lock:
            found = self._tables.get(text)
            if found is not None:
                self._tables.move_to_end(text)
                return found
        found = _tables_of(text)
        with self._lock:
            self._tables[text] = found
            kept = sum(map(len, self._tables))
            while len(self._tables) > 2 and kept > KEPT_CHARACTERS:
                kept -= len(self._tables.popitem(last=False)[0])
        return found


def _tables_of(text: str) -> tuple[LineIndex, array[int]]:
    """flopkb's line index of `text` (its starts found when first asked for), and the code-point offset where each of
    LSP's lines starts."""
    starts = array("q", [0])
    starts.extend(match.end() for match in _LSP_BREAK.finditer(text))
    return LineIndex(text), starts


_kept = _Kept()


def lines_of(text: str) -> LineIndex:
    """flopkb's line index of `text`, built once for the few texts in use (a file's text is one object per check)."""
    return _kept(text)[0]


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


def extent(text: str, encoding: str) -> tuple[int, int]:
    """How many line breaks LSP counts in `text`, and the code units of `encoding` in its last line."""
    lines = _LSP_BREAK.split(text)
    return len(lines) - 1, units(lines[-1], encoding)


def lsp_position(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of a code-point offset (inside a `\r\n`: the end of its line)."""
    starts = _kept(text)[1]
    line = bisect_right(starts, offset) - 1
    return types.Position(line=line, character=units(text[starts[line] : offset], encoding))


def code_point_offset(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of an LSP position (clamped to its line; inside a character, the offset after it)."""
    lines = re.match(_LINES.format(position.line), text)
    if lines is None:
        return len(text)
    start = lines.end()
    match = _LSP_BREAK.search(text, start)
    end = match.start() if match else len(text)
    return start + _code_points(text[start:end], position.character, encoding)


def _code_points(line: str, character: int, encoding: str) -> int:
    """How many code points of `line` its first `character` code units of `encoding` hold, a character cut in two
    counted whole: from the line encoded once (a line can be megabytes long)."""
    if encoding == types.PositionEncodingKind.Utf32:
        return min(character, len(line))
    if encoding == types.PositionEncodingKind.Utf8:
        encoded = line.encode("utf-8", errors="surrogatepass")
        cut = min(character, len(encoded))
        while cut < len(encoded) and encoded[cut] in _UTF8_CONTINUATION:
            cut += 1
        return cut - len(encoded[:cut].translate(None, delete=_UTF8_LEADING))
    encoded = line.encode("utf-16-le", errors="replace")  # a lone surrogate, one code unit, as one `?`
    cut = min(2 * character, len(encoded))
    if cut < len(encoded) and 0xDC <= encoded[cut + 1] <= 0xDF:  # the second half of a pair
        cut += 2
    return len(encoded[:cut].decode("utf-16-le"))


def diagnostic_range(text: str, line: int, column: int, encoding: str) -> types.Range:
    """The range of a diagnostic at flopkb's (line, column): the token that starts there (at least one character)."""
    start = offset_of(lines_of(text), line, column)
    match = _TOKEN_END.search(text, start)
    end = match.start() if match else len(text)
    if end == start and start < len(text) and text[start] not in "\r\n":
        end += 1
    return types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding))

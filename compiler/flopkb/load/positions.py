"""Where things stand in a file's text: the one line index and the one scalar-offset mapper of the package.

Lines are counted as git and GitHub count them (where `check --format github`
annotations land): a line ends at `\\n` (a `\\r\\n` is one break, its `\\r`
the last character of the line). A lone `\\r`, U+0085, U+2028 and U+2029 are
not line breaks, though YAML 1.1 (libyaml) counts them: positions are
therefore never taken from a YAML mark's line and column, only from its
`index` (a code-point offset into the text, the BOM removed), through
`LineIndex`. Columns count code points, 1-based.

`ScalarMap` maps offsets in a string scalar's *value* (after YAML folded,
unescaped and unindented it) to positions in the file, aligned on an anchor
pattern that folding cannot create or hide: `[[` for links, `*` for
emphasis, non-blank characters for formula expressions. It is built once per scalar, so locating
many offsets in one scalar costs one scan, not one per offset.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right

Position = tuple[int, int]

LINK_START = re.compile(r"\[(?=\[)")
"""Each `[[` (overlapping ones too): what links are aligned on."""
STAR = re.compile(r"\*")
"""Each `*`: what emphasis is aligned on."""
NON_BLANK = re.compile(r"\S")
"""Each non-blank character: what formula expressions are aligned on."""


class LineIndex:
    """1-based (line, column) of a code-point offset into `text`, and back."""

    __slots__ = ("_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: array[int] | None = None

    @property
    def starts(self) -> array[int]:
        """The offset where each line starts (compact: 8 bytes a line, where a list takes 36)."""
        if self._starts is None:
            text = self.text
            starts = array("q", [0])
            at = text.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = text.find("\n", at + 1)
            self._starts = starts
        return self._starts

    def position(self, index: int) -> Position:
        starts = self.starts
        line = bisect_right(starts, max(index, 0))
        return line, index - starts[line - 1] + 1

    def inside(self, index: int) -> Position:
        """The position of `index`, moved back onto the last line when it points past the end of the text."""
        text = self.text
        if index >= len(text):
            index = len(text)
            if text.endswith("\n"):  # past the last line break: the end of the last line
                index -= 2 if text.endswith("\r\n") else 1
        return self.position(max(index, 0))

    def offset(self, line: int, column: int) -> int:
        """The code-point offset of a 1-based (line, column)."""
        return self.starts[line - 1] + column - 1


class ScalarMap:
    """Offsets in a string scalar's value → positions in the file, aligned on `anchor`.

    `start` and `end` are the scalar node's mark indexes, `style` its YAML
    style (None, `'`, `"`, `|`, `>`). The k-th anchor of the value is the
    k-th anchor of the scalar's source text, counted from the end so that a
    tag or anchor (`&a`, `!!str`) before the scalar does not shift the count;
    a block scalar's header line (which may hold a comment) and a quoted
    scalar's quotes are left out. Where escapes of a double-quoted scalar
    make the two disagree, every offset maps to the scalar's start.
    """

    __slots__ = ("_extra", "_in_source", "_in_value", "_index", "_start")

    def __init__(
        self, index: LineIndex, start: int, end: int, style: str | None, value: str, anchor: re.Pattern[str]
    ) -> None:
        text = index.text
        begin = start
        if style in ("|", ">"):
            newline = text.find("\n", start, end)
            begin = newline + 1 if newline >= 0 else end
        elif style in ("'", '"'):
            end -= 1
            quote = text.find(style, start, end)
            begin = quote + 1 if quote >= 0 else start
        self._index = index
        self._start = start
        self._in_source = [match.start() for match in anchor.finditer(text, begin, end)]
        self._in_value = [match.start() for match in anchor.finditer(value)]
        extra = len(self._in_source) - len(self._in_value)
        self._extra = extra if extra >= 0 and not (style == '"' and extra) else -1

    def position(self, offset: int) -> Position:
        """Where `value[offset]` stands; past the last anchor: just after it."""
        if self._extra < 0 or not self._in_source:
            return self._index.position(self._start)
        k = bisect_left(self._in_value, offset)
        if k >= len(self._in_value):
            line, column = self._index.position(self._in_source[-1])
            return line, column + 1
        return self._index.position(self._in_source[self._extra + k])

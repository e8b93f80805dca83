"""Positions inside an expression: the line and column of a character of a formula's `expr` in its file."""

from __future__ import annotations

from typing import Any

from flopkb.links.extract import line_index
from flopkb.load.source import Path, Source


def expression_position(source: Source, path: Path, value: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) in the file of `value[offset]`, where `value` is the string scalar at `path`.

    The k-th non-blank character of a plain, single-quoted or block scalar's
    value is the k-th non-blank character of its source text (folding and
    indentation only add or remove blanks), counted from the end so that a
    tag or anchor before the scalar does not shift it. Escapes in a
    double-quoted scalar can break that; then the scalar's start is returned.
    """
    span = source.span(path)
    start = source.position(path)
    if span is None:
        return start
    index = line_index(source)
    text = index.text
    begin, end = span.start, span.end
    if span.style in ("|", ">"):
        newline = text.find("\n", begin, end)
        begin = newline + 1 if newline >= 0 else end
    elif span.style in ("'", '"'):
        end -= 1  # the closing quote
        quote = text.find(span.style, begin, end)
        begin = quote + 1 if quote >= 0 else begin
    in_source = [i for i in range(begin, end) if not text[i].isspace()]
    in_value = [i for i, char in enumerate(value) if not char.isspace()]
    extra = len(in_source) - len(in_value)
    if extra < 0 or not in_source or (span.style == '"' and extra != 0):
        return start
    before = sum(1 for i in in_value if i < offset)
    if before >= len(in_value):
        return _after(index, in_source[-1])
    return index.position(in_source[extra + before])


def _after(index: Any, last: int) -> tuple[int, int]:
    line, column = index.position(last)
    return line, column + 1

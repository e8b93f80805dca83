"""Positions inside an expression: the line and column of a character of a formula's `expr` in its file."""

from __future__ import annotations

from flopkb.load.positions import NON_BLANK
from flopkb.load.source import Path, Source


def expression_position(source: Source, path: Path, value: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) in the file of `value[offset]`, where `value` is the string scalar at `path`.

    Expressions are aligned on their non-blank characters (`flopkb.load.positions.ScalarMap`):
    folding and indentation only add or remove blanks.
    """
    scalar = source.scalar_map(path, value, NON_BLANK)
    return source.position(path) if scalar is None else scalar.position(offset)

"""LSP positions from code-point offsets: what a client counts (lines at `\r\n`, `\r`, `\n`; characters in its
encoding's code units), found through line starts computed once per text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.editor import positions
from flopkb.editor.positions import diagnostic_range, line_end, lines_of, lsp_position

ENCODINGS = [types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32]
TEXTS = st.lists(st.sampled_from(["a", "é", "𝄞", "\n", "\r", "\r\n", " ", "[", "]", ","]), max_size=40).map("".join)


def counted(text: str, offset: int, encoding: str) -> types.Position:
    """The position as a client counts it, from the start of the text: the definition the index must keep."""
    before = text[:offset]
    breaks = list(re.finditer(r"\r\n|\r|\n", before))
    if breaks and breaks[-1].group() == "\r" and text[offset : offset + 1] == "\n":
        breaks.pop()  # between the \r and the \n of one break: still the line it ends
    start = breaks[-1].end() if breaks else 0
    units = {"utf-8": 1, "utf-32": 4}.get(encoding, 2)
    codec = {"utf-8": "utf-8", "utf-32": "utf-32-le"}.get(encoding, "utf-16-le")
    return types.Position(line=len(breaks), character=len(before[start:].encode(codec)) // units)


@given(TEXTS, st.data(), st.sampled_from(ENCODINGS))
def test_a_position_is_the_clients_count_from_the_start(text: str, data: st.DataObject, encoding: str) -> None:
    offset = data.draw(st.integers(0, len(text)))
    assert lsp_position(text, offset, encoding) == counted(text, offset, encoding)


@given(TEXTS)
def test_a_lines_end_is_before_its_newline(text: str) -> None:
    lines = lines_of(text)
    for line, start in enumerate(lines.starts, 1):
        end = line_end(lines, line)
        assert text[start:end] == text.split("\n")[line - 1]


def test_the_line_starts_of_a_text_are_found_once_for_all_its_positions() -> None:
    text = "".join(f"  - value: {n}\r\n" for n in range(12_000))  # a record of 12,000 claims
    misses = positions._lsp_starts.cache_info().misses, positions.lines_of.cache_info().misses
    ranges = [diagnostic_range(text, line, 5, types.PositionEncodingKind.Utf16) for line in range(1, 12_001)]
    assert ranges[-1].start == types.Position(line=11_999, character=4)
    assert (positions._lsp_starts.cache_info().misses, positions.lines_of.cache_info().misses) == (
        misses[0] + 1,
        misses[1] + 1,
    )

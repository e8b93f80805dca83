"""LSP positions convert in time linear in the text, from the line encoded once, as the per-character count did; the
line starts of a text are found once for all its positions."""

from __future__ import annotations

import re
import time
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.editor import positions
from flopkb.editor.positions import code_point_offset, diagnostic_range, line_end, lines_of, lsp_position, units

ENCODINGS = [types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32]
BREAK = re.compile(r"\r\n|\r|\n")
PIECES = ["a", " ", "\r", "\n", "\r\n", "é", "€", "𝄞", "\ud800", "\udc00"]
"""ASCII, two- and three-byte characters, an astral one (two UTF-16 code units), lone surrogates, each break."""
TEXT = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def counted_offset(text: str, position: types.Position, encoding: str) -> int:
    """The former conversion, one character at a time (a second per hover on a 900 kB line)."""
    start = 0
    for _ in range(position.line):
        match = BREAK.search(text, start)
        if match is None:
            return len(text)
        start = match.end()
    match = BREAK.search(text, start)
    end = match.start() if match else len(text)
    counted = 0
    for index in range(start, end):
        if counted >= position.character:
            return index
        counted += units(text[index], encoding)
    return end


def counted_position(text: str, offset: int, encoding: str) -> types.Position:
    """The former conversion, break by break from the start, but over the whole text: an offset between the `\r` and
    the `\n` of one break is on the line that break ends (where flopkb's end of a line is in a CRLF file), not at the
    start of the next, as the former one, stopping at the offset, saw a lone `\r` there."""
    line, start = 0, 0
    for match in BREAK.finditer(text):
        if match.end() > offset:
            break
        line, start = line + 1, match.end()
    return types.Position(line=line, character=units(text[start:offset], encoding))


@given(TEXT, st.data(), st.sampled_from(ENCODINGS))
def test_an_lsp_position_is_the_code_point_the_count_found(text: str, data: st.DataObject, encoding: str) -> None:
    lines = BREAK.split(text)
    line = data.draw(st.integers(0, len(lines)))  # one past the last line too
    width = units(lines[line], encoding) if line < len(lines) else 0
    position = types.Position(line=line, character=data.draw(st.integers(0, width + 1)))  # inside a character too
    assert code_point_offset(text, position, encoding) == counted_offset(text, position, encoding)


@given(TEXT, st.data(), st.sampled_from(ENCODINGS))
def test_an_offset_is_the_lsp_position_the_count_found(text: str, data: st.DataObject, encoding: str) -> None:
    offset = data.draw(st.integers(0, len(text)))
    assert lsp_position(text, offset, encoding) == counted_position(text, offset, encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_position_on_a_9_megabyte_line_converts_at_once(encoding: str) -> None:
    text = "id: facts/x\r\nstatement: " + "𝄞é" * 3_000_000 + "\r\nkind: fact\n"
    began = time.perf_counter()
    offset = code_point_offset(text, types.Position(line=1, character=10**8), encoding)
    position = lsp_position(text, offset, encoding)
    assert time.perf_counter() - began < 2  # the count took 10 s
    assert offset == text.index("\r\nkind") and position.line == 1


@given(TEXT)
def test_a_lines_end_is_before_its_newline(text: str) -> None:
    lines = lines_of(text)
    for line, start in enumerate(lines.starts, 1):
        end = line_end(lines, line)
        assert text[start:end] == text.split("\n")[line - 1]


def test_the_line_starts_of_a_text_are_found_once_for_all_its_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"  - value: {n}\r\n" for n in range(12_000))  # a record of 12,000 claims
    found: list[str] = []
    tables_of = positions._tables_of
    monkeypatch.setattr(positions, "_tables_of", lambda text: found.append(text) or tables_of(text))
    ranges = [diagnostic_range(text, line, 5, types.PositionEncodingKind.Utf16) for line in range(1, 12_001)]
    assert ranges[-1].start == types.Position(line=11_999, character=4)
    assert found == [text]


def test_a_check_s_related_places_in_other_files_keep_the_line_starts_of_its_diagnostics_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each diagnostic of a big record placed with its related places in two other files: the record's line starts
    are found once, not once per diagnostic."""
    record, others = "x: 1\n" * 20_000, ["a: 1\n", "b: 1\n"]
    found: list[str] = []
    tables_of = positions._tables_of
    monkeypatch.setattr(positions, "_tables_of", lambda text: found.append(text) or tables_of(text))
    for line in range(1, 1_001):
        for text in [*others, record]:
            diagnostic_range(text, line, 1, types.PositionEncodingKind.Utf16)
    assert found.count(record) == 1


def test_the_line_starts_of_the_last_two_texts_alone_are_kept_and_compactly() -> None:
    """Typing in a large record of short lines makes a text per keystroke: only the text a request is answered in
    and the text a check placed its diagnostics in keep their line starts, 8 bytes a line."""
    versions = [("x\n" * 100_000) + str(n) for n in range(8)]
    tracemalloc.start()
    try:
        for text in versions:
            lsp_position(text, 5, types.PositionEncodingKind.Utf16)
            lines_of(text).position(5)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 2 * 2 * 8 * 100_001 * 1.2  # two texts, two tables (flopkb's lines and LSP's)

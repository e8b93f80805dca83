"""Property: a quick fix's range carried through any edits of the buffer since the check that told its diagnostic
(insertions, deletions and replacements before, inside and after it, several to a `didChange`, lines added and
removed, characters of several code units) is either gone, when an edit touched it, or, applied to the current text,
replaces exactly the text the diagnostic pointed at."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.config import Config, load_config
from flopkb.editor.actions import quick_fixes
from flopkb.editor.checked import Buffer, Checked
from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import code_point_offset, lsp_position
from flopkb.editor.tracking import Tracked
from kbfixture import write_kb

URI, REL, WORD = "file:///kb/records/facts/t.yaml", "records/facts/t.yaml", "ridge-pont"
ENCODINGS = [types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32]
TEXT = st.text(alphabet="ab -[]\n\né😀", max_size=8)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return load_config(write_kb(tmp_path_factory.mktemp("kb"), {}))


@st.composite
def edit(draw: st.DrawFn, length: int, span: tuple[int, int]) -> tuple[int, int, str]:
    """A change of a text of `length` code points: near either end of the word at `span` (before, at, inside or
    after it), or anywhere; what it writes may hold the word too."""
    near = draw(st.sampled_from([*span, None]))
    start = draw(st.integers(0, length) if near is None else st.integers(max(near - 3, 0), min(near + 3, length)))
    end = draw(st.integers(start, min(start + 12, length)))
    return start, end, draw(st.one_of(TEXT, st.just(f"# {WORD}\n")))


def carried(span: tuple[int, int] | None, start: int, end: int, written: str) -> tuple[int, int] | None:
    """The word's span after a change, as a reader follows it: gone when the change touched it (within it or at
    either end), moved by what a change before it added or removed."""
    if span is None or (start <= span[1] and end >= span[0]):
        return None
    if end < span[0]:
        shift = len(written) - (end - start)
        return span[0] + shift, span[1] + shift
    return span


@settings(max_examples=300, deadline=None)
@given(before=TEXT, after=TEXT, encoding=st.sampled_from(ENCODINGS), data=st.data())
def test_a_fix_is_gone_once_an_edit_touched_its_word_else_it_replaces_the_word(
    config: Config, before: str, after: str, encoding: str, data: st.DataObject
) -> None:
    text = f"id: facts/t\nkind: fact\n\n{before} [[{WORD}]] {after}\n"
    span: tuple[int, int] | None = (text.index(WORD), text.index(WORD) + len(WORD))
    assert span is not None
    told = types.Range(start=lsp_position(text, span[0], encoding), end=lsp_position(text, span[1], encoding))
    where = [told.start.line, told.start.character, told.end.line, told.end.character]
    diagnostic = types.Diagnostic(
        range=told, message="m", source=SOURCE, data={"range": where, "written": WORD, "offered": ["facts/ridge"]}
    )
    tracked = Tracked()
    tracked.opened(URI, REL, 1)
    tracked.told(Checked(config, 1, {REL: Buffer(text, 1)}, None, diagnostics={REL: [diagnostic]}))
    for version in range(2, data.draw(st.integers(2, 5))):
        changes: list[types.TextDocumentContentChangeEvent] = []
        for _ in range(data.draw(st.integers(1, 3))):
            start, end, written = data.draw(edit(len(text), span or (0, 0)))
            at = types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding))
            changes.append(types.TextDocumentContentChangePartial(range=at, text=written))
            text, span = text[:start] + written + text[end:], carried(span, start, end, written)
        tracked.changed(URI, version, changes, encoding)
    fixes = quick_fixes(URI, [diagnostic], text, None, encoding, partial(tracked.placed, URI, REL))
    if span is None:
        assert fixes == []
        return
    [fix] = fixes
    assert fix.edit is not None and fix.edit.changes is not None
    [change] = fix.edit.changes[URI]
    replaced = (
        code_point_offset(text, change.range.start, encoding),
        code_point_offset(text, change.range.end, encoding),
    )
    assert replaced == span and text[span[0] : span[1]] == WORD

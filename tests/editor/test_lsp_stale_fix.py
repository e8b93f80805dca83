"""A quick fix asked for after the buffer changed (the editor still holds the last check's diagnostic): it writes
over the range the diagnostic was told at, carried through the edits since, or is not offered when an edit touched
that range; its edit names the buffer's version."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from test_lsp_fix_property import offset
from test_lsp_fix_tracking import carried, edit

from flopkb.editor.actions import quick_fixes
from flopkb.editor.capabilities import versions_edits
from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import lsp_position
from kbfixture import write_kb
from lsp_session import ThreadedSession, open_file, settled, text_edits

REL = "records/facts/t.yaml"
TYPO = "id: facts/t\nkind: fact\nstatement: see [[ridge-pont]] here\n"
FILES = {"records/facts/ridge-point.yaml": "id: facts/ridge-point\nkind: fact\nstatement: A ridge.\n"}
LINK = TYPO.index("[[ridge-pont]]")
WORD = TYPO.index("ridge-pont")
Edit = tuple[int, int, str]
"""A change of a buffer: the code-point offsets it replaces, in the text as it finds it, and what it writes."""


@dataclass
class Buffer:
    session: ThreadedSession
    uri: str
    version: int = 1
    text: str = TYPO

    def __repr__(self) -> str:
        return "Buffer()"

    def write(self, text: str) -> list[types.Diagnostic]:
        """The buffer holding `text` (a change of the whole text), once checked: its diagnostics."""
        self.version, self.text = self.version + 1, text
        self._send([types.TextDocumentContentChangeWholeDocument(text=text)])
        return self.session.run(settled(self.session.lsp, self.uri))

    def edit(self, edits: list[Edit]) -> None:
        """One `didChange` of `edits`, in order, as an editor sends them (ranges in UTF-16 code units)."""
        changes: list[types.TextDocumentContentChangeEvent] = []
        for start, end, written in edits:
            where = types.Range(start=self._at(start), end=self._at(end))
            changes.append(types.TextDocumentContentChangePartial(range=where, text=written))
            self.text = self.text[:start] + written + self.text[end:]
        self.version += 1
        self._send(changes)

    def _at(self, at: int) -> types.Position:
        return lsp_position(self.text, at, types.PositionEncodingKind.Utf16)

    def _send(self, changes: list[types.TextDocumentContentChangeEvent]) -> None:
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=changes,
        )
        self.session.call(self.session.lsp.text_document_did_change, params)

    def actions(self, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
        found = self.session.run(self.session.lsp.text_document_code_action_async(params)) or []
        return [action for action in found if isinstance(action, types.CodeAction)]

    def told(self) -> types.Diagnostic:
        """The dangling link's diagnostic as the editor holds it after a check of `TYPO`."""
        (dangling,) = [item for item in self.write(TYPO) if item.code == "dangling-link"]
        return dangling


@pytest.fixture(scope="module")
def buffer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Buffer]:
    root = write_kb(tmp_path_factory.mktemp("kb"), FILES)
    session = ThreadedSession(root)
    try:
        uri = session.call(open_file, session.lsp, root, REL, TYPO)
        session.run(settled(session.lsp, uri))
        yield Buffer(session, uri)
    finally:
        session.close()


def fixed_by_stale(buffer: Buffer, *notifications: list[Edit], settle: bool = False) -> str | None:
    """The buffer's text with the fix applied that the editor gets for the diagnostic of `TYPO` it still holds, once
    the buffer changed by `notifications` (and, with `settle`, was checked again); None when none is offered."""
    dangling = buffer.told()
    for edits in notifications:
        buffer.edit(edits)
    if settle:
        buffer.session.run(settled(buffer.session.lsp, buffer.uri))
    fixes = [action for action in buffer.actions(dangling) if action.title.startswith("Write")]
    if not fixes:
        return None
    assert [action.title for action in fixes] == ["Write 'facts/ridge-point' for 'ridge-pont'"]
    version, (edit,) = text_edits(fixes[0], buffer.uri)
    assert version == buffer.version  # an editor refuses it once the buffer is newer
    text = buffer.text
    return text[: offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end) :]


FIXED = "[[facts/ridge-point]]"


@pytest.mark.parametrize(
    ("notifications", "expected"),
    [
        ([[(LINK, LINK, "the ")]], TYPO.replace("[[ridge-pont]]", f"the {FIXED}")),  # typed before it on its line
        (
            [[(TYPO.index("statement:"), TYPO.index("statement:"), "aliases: [facts/tt]\n# a note\n")]],
            TYPO.replace("statement:", "aliases: [facts/tt]\n# a note\nstatement:").replace("[[ridge-pont]]", FIXED),
        ),  # lines added above
        ([[(0, len("id: facts/t\n"), "")]], TYPO.replace("id: facts/t\n", "").replace("[[ridge-pont]]", FIXED)),
        ([[(0, 0, "\n" * 9)]], "\n" * 9 + TYPO.replace("[[ridge-pont]]", FIXED)),  # moved far
        (
            [[(TYPO.index("statement:"), TYPO.index("statement:"), "# ridge-pont\n")]],
            TYPO.replace("statement:", "# ridge-pont\nstatement:").replace("[[ridge-pont]]", FIXED),
        ),  # the same word written again near it: the one told is fixed
        (
            [[(len(TYPO), len(TYPO), "# ridge-pont\n")], [(LINK, LINK, "the ")]],
            TYPO.replace("[[ridge-pont]]", f"the {FIXED}") + "# ridge-pont\n",
        ),  # two changes: after it, then before it
    ],
)
def test_a_fix_of_a_moved_word_writes_over_it_and_leaves_no_diagnostic(
    buffer: Buffer, notifications: list[list[Edit]], expected: str
) -> None:
    fixed = fixed_by_stale(buffer, *notifications)
    assert fixed == expected
    assert not [item for item in buffer.write(fixed) if item.code == "dangling-link"]


def test_a_fix_follows_its_word_after_the_next_check_too(buffer: Buffer) -> None:
    """Checked again (the editor has not taken the new diagnostics yet), the fix is placed from the check that told
    the diagnostic it holds."""
    fixed = fixed_by_stale(buffer, [(0, 0, "# a note\n")], settle=True)
    assert fixed == "# a note\n" + TYPO.replace("[[ridge-pont]]", FIXED)


@pytest.mark.parametrize(
    "notifications",
    [
        [[(WORD + 5, WORD + 6, "")]],  # the word itself edited
        [[(WORD + len("ridge-pont"), WORD + len("ridge-pont"), "s")]],  # a longer word: not the one the hint is about
        [[(WORD, WORD, "s")]],  # written longer at its start
        [[(len(TYPO), len(TYPO), "# ridge-pont\n"), (LINK, LINK + len("[[ridge-pont]]"), "")]],  # deleted, a copy near
    ],
)
def test_no_fix_where_an_edit_touched_the_word(buffer: Buffer, notifications: list[list[Edit]]) -> None:
    assert fixed_by_stale(buffer, *notifications) is None


def test_no_fix_after_a_change_of_the_whole_text(buffer: Buffer) -> None:
    """A client that sends the whole text says nothing of where the word went."""
    dangling = buffer.told()
    buffer.write(TYPO.replace("see [[", "see the [["))
    assert [action for action in buffer.actions(dangling) if action.title.startswith("Write")] == []


def test_a_pulling_client_s_fix_is_placed_from_the_pull_that_told_it(tmp_path: Path) -> None:
    """A client that pulls the document's diagnostics holds those of the pull: the fix is carried from there."""
    root = write_kb(tmp_path, FILES)
    session = ThreadedSession(root, client="neovim@v0.11.0")
    try:
        buffer = Buffer(session, session.call(open_file, session.lsp, root, REL, TYPO))
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=buffer.uri))
        report = session.run(session.lsp.text_document_diagnostic_async(params))
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        (dangling,) = [item for item in report.items if item.code == "dangling-link"]
        buffer.edit([(0, 0, "# a note\n")])
        [fix] = buffer.actions(dangling)
        _, (edit,) = text_edits(fix, buffer.uri)
        assert (edit.range.start.line, edit.new_text) == (dangling.range.start.line + 1, "facts/ridge-point")
    finally:
        session.close()


_LINK_LINE = re.compile(r"^statement: see ", re.MULTILINE)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    typed=st.text(alphabet="abc xyz:.,é😀", min_size=1, max_size=12),
    at=st.integers(0, len("statement: see ")),
    above=st.lists(st.text(alphabet="# abcz", max_size=10).map(lambda line: f"# {line}"), max_size=5),
)
def test_an_edit_before_the_link_leaves_a_fix_that_makes_it_resolve(
    buffer: Buffer, typed: str, at: int, above: list[str]
) -> None:
    """Whatever is typed before the link on its line (characters of two UTF-16 code units too), and however many
    comment lines are added above it, the fix is offered, and applied to the current text it makes the link
    resolve."""
    start = _LINK_LINE.search(TYPO)
    assert start is not None
    lines = "".join(f"{line}\n" for line in above)
    where = start.start() + at
    fixed = fixed_by_stale(buffer, [(where, where, typed), (start.start(), start.start(), lines)])
    assert fixed is not None and FIXED in fixed
    assert not [item for item in buffer.write(fixed) if item.code == "dangling-link"], fixed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_edits_leave_no_fix_or_one_over_the_word_the_diagnostic_was_about(
    buffer: Buffer, data: st.DataObject
) -> None:
    """Changes before, inside and after the word, several to a `didChange`: the fix is gone once one touched the word,
    or it writes over the word where the changes carried it. (Changes that touched it and then wrote it back as it was
    may leave it fixed there, when the server's check of that text told the same diagnostic at the same place.)"""
    dangling = buffer.told()
    span: tuple[int, int] | None = (WORD, WORD + len("ridge-pont"))
    text, edits = buffer.text, []
    for _ in range(data.draw(st.integers(1, 4))):
        start, end, written = data.draw(edit(len(text), span or (0, 0)))
        edits.append((start, end, written))
        text, span = text[:start] + written + text[end:], carried(span, start, end, written)
    buffer.edit(edits)
    fixes = [action for action in buffer.actions(dangling) if action.title.startswith("Write")]
    if span is None and fixes:
        span = told_again(buffer, dangling)
    if span is None or not fixes:
        assert span is None and not fixes
        return
    _, (change,) = text_edits(fixes[0], buffer.uri)
    assert (offset(text, change.range.start), offset(text, change.range.end)) == span
    assert text[span[0] : span[1]] == "ridge-pont"


def told_again(buffer: Buffer, told: types.Diagnostic) -> tuple[int, int] | None:
    """Where the word `told`'s fix writes over is in the buffer, when its check tells the same diagnostic again."""
    again = buffer.session.run(settled(buffer.session.lsp, buffer.uri))
    if not any(item.range == told.range and item.data == told.data for item in again):
        return None
    where: Any = told.data
    line, character, end_line, end_character = where["range"]
    start = offset(buffer.text, types.Position(line=line, character=character))
    return start, offset(buffer.text, types.Position(line=end_line, character=end_character))


@pytest.mark.parametrize(
    ("document_changes", "operations", "versioned"),
    [
        (True, None, True),
        (None, [types.ResourceOperationKind.Create], True),  # Neovim: resource operations are document changes
        (False, None, False),
        (None, None, False),
    ],
)
def test_a_client_that_takes_no_versioned_edit_gets_the_fix_as_a_plain_edit(
    document_changes: bool | None, operations: list[types.ResourceOperationKind] | None, versioned: bool
) -> None:
    """`documentChanges` (or resource operations, which only they hold) is the client's word that it applies, and
    refuses, an edit of a version; without it, the edit the client can apply: the same text, at the same place."""
    client = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes, resource_operations=operations
            )
        )
    )
    start = TYPO.split("\n")[2].index("ridge-pont")
    end = start + len("ridge-pont")
    where = types.Range(start=types.Position(2, start), end=types.Position(2, end))
    data = {"range": [2, start, 2, end], "offered": ["facts/ridge-point"], "written": "ridge-pont"}
    diagnostic = types.Diagnostic(range=where, message="m", source=SOURCE, data=data)
    version = 7 if versions_edits(client) else None
    utf16 = types.PositionEncodingKind.Utf16
    [action] = quick_fixes("file:///t.yaml", [diagnostic], TYPO, version, utf16, lambda _, told: told)
    assert action.edit is not None
    assert versions_edits(client) == versioned
    if versioned:
        [change] = action.edit.document_changes or []
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 7
        edits = list(change.edits)
    else:
        assert action.edit.document_changes is None and action.edit.changes is not None
        edits = list(action.edit.changes["file:///t.yaml"])
    [edit] = edits
    assert isinstance(edit, types.TextEdit) and (edit.range, edit.new_text) == (where, "facts/ridge-point")

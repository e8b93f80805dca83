"""A quick fix asked for after the buffer changed (the editor still holds the last check's diagnostic): it writes
over the word its hint is about where that word is now, or is not offered; its edit names the buffer's version."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.editor.actions import quick_fixes
from flopkb.editor.capabilities import versions_edits
from flopkb.editor.diagnostics import SOURCE
from kbfixture import write_kb
from lsp_session import ThreadedSession, open_file, settled, text_edits

REL = "records/facts/t.yaml"
TYPO = "id: facts/t\nkind: fact\nstatement: see [[ridge-pont]] here\n"
FILES = {"records/facts/ridge-point.yaml": "id: facts/ridge-point\nkind: fact\nstatement: A ridge.\n"}


@dataclass
class Buffer:
    session: ThreadedSession
    uri: str
    version: int = 1

    def __repr__(self) -> str:
        return "Buffer()"

    def write(self, text: str) -> list[types.Diagnostic]:
        """The buffer holding `text`, once checked: its diagnostics."""
        self.version += 1
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
        self.session.call(self.session.lsp.text_document_did_change, params)
        return self.session.run(settled(self.session.lsp, self.uri))

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


def applied(text: str, edit: types.TextEdit) -> str:
    """`edit` applied to the ASCII `text`."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: edit.range.start.line]) + edit.range.start.character
    end = sum(len(line) + 1 for line in lines[: edit.range.end.line]) + edit.range.end.character
    return text[:start] + edit.new_text + text[end:]


def fixed_by_stale(buffer: Buffer, text: str) -> str | None:
    """`text` with the fix applied that the editor gets for the diagnostic of `TYPO` it still holds, once the buffer
    holds `text`; None when none is offered."""
    dangling = buffer.told()
    buffer.write(text)
    fixes = [action for action in buffer.actions(dangling) if action.title.startswith("Write")]
    if not fixes:
        return None
    assert [action.title for action in fixes] == ["Write 'facts/ridge-point' for 'ridge-pont'"]
    version, (edit,) = text_edits(fixes[0], buffer.uri)
    assert version == buffer.version  # an editor refuses it once the buffer is newer
    return applied(text, edit)


@pytest.mark.parametrize(
    "edited",
    [
        TYPO.replace("see [[", "see the [["),  # typed before it on its line
        TYPO.replace("statement:", "aliases: [facts/tt]\n# a note\nstatement:"),  # lines added above
        TYPO.replace("see [[", "see [[").replace("id: facts/t\n", ""),  # a line removed above
    ],
)
def test_a_fix_of_a_moved_word_writes_over_it_and_leaves_no_diagnostic(buffer: Buffer, edited: str) -> None:
    fixed = fixed_by_stale(buffer, edited)
    assert fixed == edited.replace("[[ridge-pont]]", "[[facts/ridge-point]]")
    assert not [item for item in buffer.write(fixed) if item.code == "dangling-link"]


@pytest.mark.parametrize(
    "edited",
    [
        TYPO.replace("ridge-pont", "ridge-pnt"),  # the word itself edited
        TYPO.replace("ridge-pont", "ridge-ponts"),  # a longer word: not the one the hint is about
        TYPO.replace("see [[ridge-pont]] here", "see the [[ridge-pont]], [[ridge-pont]]"),  # moved, and written twice
        "\n" * 6 + TYPO,  # moved further than it is looked for
    ],
)
def test_no_fix_where_the_word_changed_or_cannot_be_told_apart(buffer: Buffer, edited: str) -> None:
    assert fixed_by_stale(buffer, edited) is None


_LINK_LINE = re.compile(r"^statement: see ", re.MULTILINE)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    typed=st.text(alphabet="abc xyz:.,", min_size=1, max_size=12),
    at=st.integers(0, len("statement: see ")),
    above=st.lists(st.text(alphabet="# abcz", max_size=10).map(lambda line: f"# {line}"), max_size=5),
)
def test_an_edit_before_the_link_leaves_a_fix_that_makes_it_resolve(
    buffer: Buffer, typed: str, at: int, above: list[str]
) -> None:
    """Whatever is typed before the link on its line, and however many comment lines are added above it (up to
    `NEAR`), the fix is offered, and applied to the current text it makes the link resolve."""
    start = _LINK_LINE.search(TYPO)
    assert start is not None
    where = start.start() + at
    edited = TYPO[: start.start()] + "".join(f"{line}\n" for line in above) + TYPO[start.start() : where]
    edited += typed + TYPO[where:]
    fixed = fixed_by_stale(buffer, edited)
    assert fixed is not None and "[[facts/ridge-point]]" in fixed
    assert not [item for item in buffer.write(fixed) if item.code == "dangling-link"], fixed


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
    [action] = quick_fixes("file:///t.yaml", [diagnostic], TYPO, version, types.PositionEncodingKind.Utf16)
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

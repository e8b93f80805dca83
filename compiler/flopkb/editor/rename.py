"""Rename: the edits `flopkb mv` makes (`flopkb.links.mv.plan_move`), as one workspace edit.

From a record's `id` line or any link to it, `textDocument/rename` gives
the file renamed to the new id's path, every link and ref to it rewritten
and the old id kept as an alias, refusing where `flopkb mv` refuses (its
message is the error). A file renamed in the editor's explorer
(`workspace/willRenameFiles`) gets the same edits, the rename itself left
to the editor. The plan is made on the last check's base: unsaved buffers
are renamed as they are.
"""

from __future__ import annotations

from lsprotocol import types

from flopkb.editor.checker import Checked
from flopkb.editor.convert import uri_of
from flopkb.editor.positions import lsp_position
from flopkb.links.mv import MovePlan, plan_move


def _replace_all(checked: Checked, uri: str, path: str, text: str, encoding: str) -> types.TextDocumentEdit:
    """An edit replacing the whole text of the file at `path` (as the check read it) with `text`."""
    old = checked.text_of(path)
    whole = types.Range(start=types.Position(line=0, character=0), end=lsp_position(old, len(old), encoding))
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
        edits=[types.TextEdit(range=whole, new_text=text)],
    )


def plan(checked: Checked, old: str, new: str) -> MovePlan:
    """The move of record `old` to id `new`; `MoveError` where `flopkb mv` refuses."""
    assert checked.kb is not None
    return plan_move(checked.kb, old, new)


def rename_edit(checked: Checked, move: MovePlan, encoding: str, *, rename_file: bool) -> types.WorkspaceEdit:
    """The move as a workspace edit: the file renamed (when `rename_file`), then every changed file's new text."""
    config = checked.config
    changes: list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile] = []
    old_uri, new_uri = uri_of(config, move.old_path), uri_of(config, move.new_path)
    if rename_file:
        changes.append(types.RenameFile(old_uri=old_uri, new_uri=new_uri))
    for path, text in sorted(move.texts.items()):
        moved = path == move.new_path
        uri = (new_uri if rename_file else old_uri) if moved else uri_of(config, path)
        changes.append(_replace_all(checked, uri, move.old_path if moved else path, text, encoding))
    return types.WorkspaceEdit(document_changes=changes)

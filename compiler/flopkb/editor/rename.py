"""Rename: the edits `flopkb mv` makes (`flopkb.links.mv.plan_move`), as one workspace edit.

From a record's `id` line or any link to it, `textDocument/rename` gives
the file renamed to the new id's path, every link and ref to it rewritten
and the old id kept as an alias, refusing where `flopkb mv` refuses (its
message is the error: `refused`). `textDocument/prepareRename` tells the
editor where a rename can start (`named_at`). A file renamed in the editor's
explorer (`workspace/willRenameFiles`) gets the same edits, the rename itself
left to the editor (`files_moved`); a file moved out of the records folder, or
to a name that is not an id, gets none, and the server says why. A folder of
records renamed gets the edits of `flopkb mv OLD-FOLDER/ NEW-FOLDER`
(`flopkb.links.mv.plan_folder_move`): every record in it moved at once, or,
where mv would refuse one, none, and the server says why.

The plan is made on the check of the buffers as they are now, with the files
on disk read again (the server waits for it). Each file gets the edits mv
makes (the characters of a link's target, the id, the alias), never its whole
text, and an open document's edit carries the version of its buffer that was
planned on: a client refuses the edit of a buffer typed into meanwhile. A file
that is not open has no version: it is read again as the edit is made, and a
change since the check refuses the rename (`flopkb.links.mv.read_as_planned`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from flopkb.config import Config, OutsideRecords
from flopkb.editor.checked import Checked
from flopkb.editor.hover import entry_at, link_at
from flopkb.editor.navigation import target_at
from flopkb.editor.positions import code_point_offset, lines_of, lsp_position
from flopkb.links.mv import (
    MoveError,
    MovePlan,
    id_span,
    ordered,
    plan_folder_move,
    plan_move,
    read_as_planned,
    target_span,
)
from flopkb.load.sources import RECORD_SUFFIXES

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase

ELSEWHERE = "rename a record from its id line or from a link to it"
Edits = dict[str, list[tuple[int, int, str]]]
"""Edits by the root-relative path of the file they are made in (as it is before any rename)."""


def refused(message: str) -> JsonRpcException:
    """A refused request, as the editor shows it: the plain message (LSP's RequestFailed)."""
    return JsonRpcException(message, code=types.LSPErrorCodes.RequestFailed)


def _kb(checked: Checked) -> KnowledgeBase:
    """The base `checked` compiled, to plan on; `refused` when the check failed."""
    if checked.kb is None:
        raise refused("the knowledge base could not be checked; fix the problems the diagnostics tell, then rename")
    return checked.kb


def named_at(checked: Checked, rel: str, position: types.Position, encoding: str) -> tuple[str, int, int]:
    """The record named at `position` in the file `rel` as the check read it, and where its name is written there
    (code-point offsets): the value of the record's `id`, or a link's target; `refused` elsewhere."""
    kb = _kb(checked)
    text = checked.text_of(rel)
    line, column = lines_of(text).position(code_point_offset(text, position, encoding))
    entry = entry_at(kb, rel)
    link = link_at(kb, entry, line, column) if entry is not None else None
    try:
        if link is not None and link.resolved is not None:
            return link.resolved, *target_span(link)
        if link is not None:
            raise refused(f"{link.text} resolves to no record: there is nothing to rename")
        if entry is not None and entry.source is not None and target_at(kb, rel, line, column) == entry.id:
            return entry.id, *id_span(entry.source, entry.id)
    except MoveError as error:
        raise refused(str(error)) from None
    raise refused(ELSEWHERE)


def prepared(checked: Checked, rel: str, position: types.Position, encoding: str) -> types.PrepareRenamePlaceholder:
    """What the editor offers to rename at `position`: the name's range, and the record's id to edit."""
    record_id, start, end = named_at(checked, rel, position, encoding)
    text = checked.text_of(rel)
    written = types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding))
    return types.PrepareRenamePlaceholder(range=written, placeholder=record_id)


def planned(checked: Checked, old: str, new: str) -> MovePlan:
    """The move of record `old` to id `new`; `MoveError` where `flopkb mv` refuses."""
    kb = _kb(checked)
    return plan_move(kb, old, new)


def in_records(config: Config, paths: list[str | None]) -> bool:
    """Whether any of the root-relative `paths` is the records folder or in it."""
    records = config.records.rstrip("/")
    return any(path is not None and (path == records or path.startswith(records + "/")) for path in paths)


def files_moved(
    checked: Checked, renamed: list[tuple[str | None, str | None]]
) -> tuple[Edits, dict[str, str], list[str]]:
    """The edits of moving the records whose files, or folders, are renamed (old, new: root-relative; None outside
    the base), as `merged` gives them, and what the editor is to show where links cannot follow."""
    moves: list[MovePlan] = []
    warnings: list[str] = []
    for old_rel, new_rel in renamed:
        entry = checked.entry_at(old_rel) if old_rel is not None else None
        if entry is None:
            if old_rel is not None and _holds_records(checked, old_rel):
                moves += _folder_moved(checked, old_rel, new_rel, warnings)
            continue
        try:
            new_id = _moved_id(checked.config, new_rel)
            written = entry.source.data.get("id") if entry.source is not None else None
            # `.yaml` to `.yml`, or a file renamed back to where its `id:` says: the same record, nothing to rewrite
            if new_id not in (entry.id, written):
                moves.append(planned(checked, entry.id, new_id))
        except MoveError as error:
            warnings.append(
                f"flopkb: no link to {entry.id} is rewritten: {error}. Once the file is renamed, the links to it "
                f"dangle: rename it back to {entry.path}, then run `flopkb mv {entry.id} NEW-ID`"
            )
    try:
        return *merged(moves), warnings
    except MoveError as error:
        return {}, {}, [*warnings, f"flopkb: no link is rewritten: {error}"]


def _holds_records(checked: Checked, rel: str) -> bool:
    return any(entry.path.startswith(f"{rel.rstrip('/')}/") for entry in _kb(checked).entries.values())


def _folder_moved(checked: Checked, old_rel: str, new_rel: str | None, warnings: list[str]) -> list[MovePlan]:
    """The move of the records in the folder `old_rel` renamed to `new_rel`, as `flopkb mv OLD/ NEW` plans it; none,
    and what the editor is to show in `warnings`, where mv would refuse it."""
    config = checked.config
    if config.records_path.is_relative_to(config.root / old_rel):
        warnings.append(
            f"flopkb: renaming {old_rel}/ moves the records folder: no id changes, but the records are no longer where"
            " `records` under [tool.flopkb] in pyproject.toml says: write the folder's new path there"
        )
        return []
    old = config.record_id(str(config.root / old_rel))
    try:
        return [plan_folder_move(_kb(checked), old, _moved_id(config, new_rel, folder=True))]
    except MoveError as error:
        warnings.append(
            f"flopkb: no link to the records in {old_rel}/ is rewritten: {error}. Once the folder is renamed, the links"
            f" to them dangle: rename it back to {old_rel}, then run `flopkb mv {old}/ NEW-FOLDER`"
        )
        return []


def _moved_id(config: Config, new_rel: str | None, *, folder: bool = False) -> str:
    """The id of a record whose file is renamed to `new_rel` (or, `folder`, the folder below the records folder of a
    folder renamed), as `flopkb mv` reads a path; `MoveError` when it would be no record: outside the records
    folder, or a name without a record's suffix (`x.yaml.bak`)."""
    if new_rel is None:
        where = "folder" if folder else "file"
        raise MoveError(f"the new {where} is outside {config.root}, and so not in {config.records}/")
    if not folder and not new_rel.endswith(RECORD_SUFFIXES):
        raise MoveError(f"{new_rel} is no record file (a record's name ends in {' or '.join(RECORD_SUFFIXES)})")
    try:
        return config.record_id(str(config.root / new_rel))
    except OutsideRecords:
        raise MoveError(f"{new_rel} is not in {config.records}/, where every record is") from None


def merged(moves: list[MovePlan]) -> tuple[Edits, dict[str, str]]:
    """The edits of several moves planned on one base, by file (as it is before any rename), and the text they are
    made in; `MoveError` when two edit the same characters."""
    edits: Edits = {}
    originals: dict[str, str] = {}
    for move in moves:
        for key, changes in move.edits.items():
            path = move.moved.get(key, key)
            edits[path] = ordered([*edits.get(path, []), *changes], path)
            originals[path] = move.originals[key]
    return edits, originals


def workspace_edit(
    checked: Checked,
    edits: Edits,
    originals: dict[str, str],
    uri: Callable[[str], str],
    encoding: str,
    renamed: MovePlan | None = None,
    again: str = "rename again",
) -> types.WorkspaceEdit:
    """The edits as one workspace edit, each file's (at `uri(path)`) with the version of its buffer that was checked;
    then, `renamed`, its file renamed to the new id's path. `refused` when a file that is not open changed on disk
    since the check read it (an editor applies an edit to a file that is not open as it finds it, with no version): the
    message ends with `again`, what to do."""
    for path in sorted(edits.keys() - checked.buffers.keys()):
        try:
            read_as_planned(checked.config, path, originals[path], again)
        except MoveError as error:
            raise refused(str(error)) from None
    changes: list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile] = []
    for path, made in sorted(edits.items()):
        buffer = checked.buffers.get(path)
        document = types.OptionalVersionedTextDocumentIdentifier(
            uri=uri(path), version=buffer.version if buffer is not None else None
        )
        changes.append(
            types.TextDocumentEdit(text_document=document, edits=_text_edits(originals[path], made, encoding))
        )
    if renamed is not None:
        changes.append(types.RenameFile(old_uri=uri(renamed.old_path), new_uri=uri(renamed.new_path)))
    return types.WorkspaceEdit(document_changes=changes)


def explorer_edit(
    checked: Checked, edits: Edits, originals: dict[str, str], uri: Callable[[str], str], encoding: str
) -> tuple[types.WorkspaceEdit | None, list[str]]:
    """The edit of files renamed in the explorer (`files_moved`), or None and what the editor is to show: the editor
    renames them whatever the answer, so a refusal is a warning."""
    if not edits:
        return None, []
    try:
        return workspace_edit(checked, edits, originals, uri, encoding, again="rename the file back, then again"), []
    except JsonRpcException as error:
        return None, [f"flopkb: the links were not rewritten: {error.message}"]


def _text_edits(text: str, edits: list[tuple[int, int, str]], encoding: str) -> list[types.TextEdit]:
    return [
        types.TextEdit(
            range=types.Range(start=lsp_position(text, start, encoding), end=lsp_position(text, end, encoding)),
            new_text=replacement,
        )
        for start, end, replacement in edits
    ]

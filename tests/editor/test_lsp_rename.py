"""Rename gives the edits `flopkb mv` makes, as one workspace edit; a file renamed in the editor gets the same."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from test_lsp_edits import CLAIM

from flopkb.config import load_config
from flopkb.editor.checker import Checker
from flopkb.editor.rename import explorer_edit, merged, planned, workspace_edit
from flopkb.editor.server import make_server
from flopkb.links.mv import move
from kbfixture import accelerator, write_kb
from lsp_session import environment, lsp_session, open_file, settled

pytestmark = pytest.mark.asyncio

FACT = CLAIM.replace(
    "statement: One second of streaming at full bandwidth.",
    "statement: Decode on [[hw/h100]] streams at [[h100|its bandwidth]].",
)


def files_of(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((root / "records").rglob("*.y*ml"))
    }


def offset(text: str, position: types.Position) -> int:
    """The offset of a UTF-16 position in a text whose lines end at `\\n`."""
    lines = text.split("\n")
    line = lines[position.line]
    before = sum(len(earlier) + 1 for earlier in lines[: position.line])
    return before + len(line.encode("utf-16-le")[: 2 * position.character].decode("utf-16-le"))


def edited(text: str, edits: Sequence[object]) -> str:
    """`text` with a document's edits made, as an editor makes them (every range in the text before the edits)."""
    ordered = sorted(edits, key=lambda edit: offset(text, edit.range.start), reverse=True)  # type: ignore[attr-defined]
    for edit in ordered:
        assert isinstance(edit, types.TextEdit)
        text = text[: offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end) :]
    return text


def rel_of(root: Path, uri: str) -> str:
    return Path(uri.removeprefix("file://")).relative_to(root).as_posix()


def applied(
    root: Path, edit: types.WorkspaceEdit, buffers: dict[str, str] | None = None, versions: dict[str, int] | None = None
) -> dict[str, str]:
    """The records after `edit`, made in order on `buffers` over the files on disk, as an editor does; an edit of a
    document of `versions` must carry its version (else the editor refuses it)."""
    files = {**files_of(root), **(buffers or {})}
    for change in edit.document_changes or []:
        if isinstance(change, types.RenameFile):
            files[rel_of(root, change.new_uri)] = files.pop(rel_of(root, change.old_uri))
        else:
            assert isinstance(change, types.TextDocumentEdit)
            rel = rel_of(root, change.text_document.uri)
            assert change.text_document.version == (versions or {}).get(rel)
            files[rel] = edited(files[rel], change.edits)
    return files


def moved_by_mv(root: Path, tmp: Path, old: str, new: str) -> dict[str, str]:
    copy = tmp / "mv"
    shutil.copytree(root, copy)
    command = [sys.executable, "-m", "flopkb", "mv", "--root", str(copy), old, new]
    run = subprocess.run(command, env=environment(), capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    return files_of(copy)


async def test_rename_from_a_link_makes_the_edits_of_flopkb_mv(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path / "kb",
        {
            "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
            "records/facts/traffic.yaml": FACT,
        },
    )
    expected = moved_by_mv(root, tmp_path, "hw/h100", "hw/nvidia/h100")
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/traffic.yaml")
        await settled(lsp, uri)
        at = types.Position(line=2, character=FACT.splitlines()[2].index("[[hw/h100]]") + 4)
        document = types.TextDocumentIdentifier(uri=uri)
        edit = await lsp.text_document_rename_async(
            types.RenameParams(text_document=document, position=at, new_name="hw/nvidia/h100")
        )
        assert edit is not None
        assert applied(root, edit, versions={"records/facts/traffic.yaml": 1}) == expected
        assert "aliases: [hw/h100]" in expected["records/hw/nvidia/h100.yaml"]

        refusal = re.escape("'facts/traffic' is already the id of records/facts/traffic.yaml")  # as mv says
        with pytest.raises(JsonRpcException, match=refusal):
            await lsp.text_document_rename_async(
                types.RenameParams(text_document=document, position=at, new_name="facts/traffic")
            )

        renamed = await lsp.workspace_will_rename_files_async(
            types.RenameFilesParams(
                files=[
                    types.FileRename(
                        old_uri=(root / "records/hw/h100.yaml").as_uri(),
                        new_uri=(root / "records/hw/nvidia/h100.yaml").as_uri(),
                    )
                ]
            )
        )
        assert renamed is not None
        moved = applied(
            root, renamed, versions={"records/facts/traffic.yaml": 1}
        )  # the edits land before the editor renames the file
        moved["records/hw/nvidia/h100.yaml"] = moved.pop("records/hw/h100.yaml")
        assert moved == expected


FILLER = 600
"""Records enough for a check to take longer than the server takes to read the rename sent right after an edit."""


def full_change(uri: str, version: int, text: str) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )


def renaming(uri: str, line: int, character: int, new_name: str) -> types.RenameParams:
    at = types.Position(line=line, character=character)
    return types.RenameParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at, new_name=new_name)


def two_records(tmp_path: Path, filler: int = 0) -> Path:
    """hw/h100 and a fact linking to it; with `filler` more facts, so that a check takes a while."""
    more = {
        f"records/facts/filler-{index}.yaml": f"id: facts/filler-{index}\nkind: fact\nstatement: Filler.\n"
        for index in range(filler)
    }
    return write_kb(
        tmp_path / "kb",
        {
            "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
            "records/facts/traffic.yaml": FACT,
            **more,
        },
    )


async def test_a_rename_just_after_typing_keeps_what_was_typed(tmp_path: Path) -> None:
    """The rename is planned on the buffer as typed (not the last check's text): the line typed just before is kept,
    once, and nothing is duplicated; the edit carries the buffer's version, so an editor refuses it if typed into
    since."""
    root = two_records(tmp_path, filler=FILLER)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, uri)
        typed = (root / "records/hw/h100.yaml").read_text().replace("kind:", "# MY UNSAVED NOTE\nkind:")
        lsp.text_document_did_change(full_change(uri, 2, typed))
        edit = await lsp.text_document_rename_async(renaming(uri, 0, 5, "hw/nvidia/h100"))
    assert edit is not None
    renamed = applied(root, edit, {"records/hw/h100.yaml": typed}, versions={"records/hw/h100.yaml": 2})
    (root / "records/hw/h100.yaml").write_text(typed, encoding="utf-8")
    assert renamed == moved_by_mv(root, tmp_path, "hw/h100", "hw/nvidia/h100")
    assert renamed["records/hw/nvidia/h100.yaml"].count("# MY UNSAVED NOTE") == 1


async def test_a_rename_keeps_a_change_made_on_disk_to_a_file_not_open(tmp_path: Path) -> None:
    """Another tool changes a linking file on disk (the editor does not watch files): the rename is planned on the
    file as it is now, so applying it keeps that change, and the edit touches the link's characters alone."""
    root = two_records(tmp_path)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, uri)
        changed = FACT.replace("kind: fact", "kind: fact\n# ADDED ON DISK BY git pull")
        (root / "records/facts/traffic.yaml").write_text(changed, encoding="utf-8")
        edit = await lsp.text_document_rename_async(renaming(uri, 0, 5, "hw/nvidia/h100"))
    assert edit is not None
    renamed = applied(root, edit, versions={"records/hw/h100.yaml": 1})
    assert renamed == moved_by_mv(root, tmp_path, "hw/h100", "hw/nvidia/h100")
    assert "# ADDED ON DISK BY git pull" in renamed["records/facts/traffic.yaml"]
    made = [
        (change.range.start.line, change.new_text)
        for document in edit.document_changes or []
        if isinstance(document, types.TextDocumentEdit) and document.text_document.uri.endswith("traffic.yaml")
        for change in document.edits
        if isinstance(change, types.TextEdit)
    ]
    assert made == [(3, "hw/nvidia/h100"), (9, "hw/nvidia/h100"), (11, "hw/nvidia/h100")]


async def test_a_file_not_open_changed_on_disk_after_the_check_read_it_refuses_the_edit(tmp_path: Path) -> None:
    """Between the check the rename is planned on and the edit: an editor applies an edit to a file that is not open
    as it finds it (there is no version to refuse it by), so the edit would land in other text. Refused in `flopkb
    mv`'s words, with what to do; after an explorer's rename (the file is renamed already), a warning."""
    root = two_records(tmp_path)
    checker = Checker(load_config(root))
    checker.attach("utf-16", lambda checked: None)
    try:
        checked = checker.wait(checker.update({}))
    finally:
        checker.stop()
    assert checked is not None
    move = planned(checked, "hw/h100", "hw/nvidia/h100")
    edits, originals = merged([move])
    assert workspace_edit(checked, edits, originals, uri_of_root(root), "utf-16", renamed=move).document_changes
    (root / "records/facts/traffic.yaml").write_text(FACT.replace("kind: fact", "kind: fact\n# PULLED"), "utf-8")
    with pytest.raises(JsonRpcException) as refused:
        workspace_edit(checked, edits, originals, uri_of_root(root), "utf-16", renamed=move)
    assert refused.value.message == "records/facts/traffic.yaml changed while the move was planned; rename again"
    assert explorer_edit(checked, edits, originals, uri_of_root(root), "utf-16") == (
        None,
        [
            "flopkb: the links were not rewritten: records/facts/traffic.yaml changed while the move was planned; "
            "rename the file back, then again"
        ],
    )
    (root / "records/facts/traffic.yaml").unlink()
    with pytest.raises(JsonRpcException) as removed:
        workspace_edit(checked, edits, originals, uri_of_root(root), "utf-16", renamed=move)
    assert removed.value.message.startswith("records/facts/traffic.yaml changed while the move was planned (")
    assert removed.value.message.endswith("); rename again")


def uri_of_root(root: Path) -> Callable[[str], str]:
    return lambda rel: (root / rel).as_uri()


def file_renamed(root: Path, old: str, new: str) -> types.RenameFilesParams:
    return types.RenameFilesParams(
        files=[types.FileRename(old_uri=(root / old).as_uri(), new_uri=(root / new).as_uri())]
    )


@pytest.mark.parametrize(
    ("new", "told"),
    [
        (
            "notes/h100.yaml",
            "flopkb: no link to hw/h100 is rewritten: notes/h100.yaml is not in records/, where every record is. "
            "Once the file is renamed, the links to it dangle: rename it back to records/hw/h100.yaml, then run "
            "`flopkb mv hw/h100 NEW-ID`",
        ),
        (
            "records/hw/H 100.yaml",
            "flopkb: no link to hw/h100 is rewritten: 'hw/H 100' is not a valid id: ",
        ),
        (
            "records/hw/h100.yaml.bak",  # set aside
            "flopkb: no link to hw/h100 is rewritten: records/hw/h100.yaml.bak is no record file (a record's name ends"
            " in .yaml or .yml). Once the file is renamed, the links to it dangle",
        ),
    ],
)
async def test_a_file_renamed_where_it_is_no_record_gets_no_edits_and_a_warning(
    tmp_path: Path, new: str, told: str
) -> None:
    """Out of records/, or to a name that is not an id: the renamed file would be no record, so no link is rewritten
    to an id nothing has; the editor renames the file all the same (it cannot be refused), so the author is told."""
    root = two_records(tmp_path)
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/traffic.yaml"))
        edit = await lsp.workspace_will_rename_files_async(file_renamed(root, "records/hw/h100.yaml", new))
        assert edit is None
        (message,) = lsp.messages
    assert message.type == types.MessageType.Warning
    assert message.message.startswith(told)


async def test_a_record_renamed_from_yaml_to_yml_keeps_its_id_and_its_links(tmp_path: Path) -> None:
    root = two_records(tmp_path)
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/traffic.yaml"))
        renamed = file_renamed(root, "records/hw/h100.yaml", "records/hw/h100.yml")
        assert await lsp.workspace_will_rename_files_async(renamed) is None
        assert lsp.messages == [], "nothing dangles: no warning"


async def test_a_file_renamed_back_to_where_its_id_says_gets_no_edits(tmp_path: Path) -> None:
    """Renamed in the explorer without its links (refused, or another tool's rename), then renamed back, as the warning
    says: the file goes back where its `id:` names it; no edit, and no alias of the path it was at for a while."""
    root = two_records(tmp_path)
    (root / "records/hw/nvidia").mkdir()
    (root / "records/hw/h100.yaml").rename(root / "records/hw/nvidia/h100.yaml")
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/traffic.yaml"))
        back = file_renamed(root, "records/hw/nvidia/h100.yaml", "records/hw/h100.yaml")
        assert await lsp.workspace_will_rename_files_async(back) is None
        assert lsp.messages == []


async def test_a_refused_rename_is_a_failed_request_with_mvs_message(tmp_path: Path) -> None:
    """As the editor shows it: LSP's RequestFailed with `flopkb mv`'s words, no exception class, no traceback."""
    root = two_records(tmp_path)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, uri)
        with pytest.raises(JsonRpcException) as refused:
            await lsp.text_document_rename_async(renaming(uri, 0, 5, "facts/traffic"))
        with pytest.raises(JsonRpcException) as elsewhere:
            await lsp.text_document_rename_async(renaming(uri, 1, 2, "hw/b200"))
    assert (refused.value.code, refused.value.message, refused.value.data) == (
        types.LSPErrorCodes.RequestFailed,
        "'facts/traffic' is already the id of records/facts/traffic.yaml",
        None,
    )
    assert (elsewhere.value.code, elsewhere.value.message) == (
        types.LSPErrorCodes.RequestFailed,
        "rename a record from its id line or from a link to it",
    )


async def test_prepare_rename_offers_an_id_or_a_link_target_and_nothing_else(tmp_path: Path) -> None:
    """The editor offers a rename on the id's value and on a link's target, with the full id to edit; elsewhere it
    says where a rename starts."""
    root = two_records(tmp_path)
    lines = FACT.splitlines()
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/traffic.yaml")
        await settled(lsp, uri)

        async def prepare(line: int, character: int) -> tuple[int, int, int, str]:
            at = types.Position(line=line, character=character)
            document = types.TextDocumentIdentifier(uri=uri)
            found = await lsp.text_document_prepare_rename_async(types.PrepareRenameParams(document, at))
            assert isinstance(found, types.PrepareRenamePlaceholder)
            written = found.range
            assert written.start.line == written.end.line == line
            return line, written.start.character, written.end.character, found.placeholder

        suffix = lines[2].index("h100|")
        assert await prepare(0, 6) == (0, 4, 17, "facts/traffic")
        full = lines[2].index("hw/h100")
        assert await prepare(2, full + 1) == (2, full, full + len("hw/h100"), "hw/h100")
        assert await prepare(2, suffix) == (2, suffix, suffix + 4, "hw/h100")  # the suffix as written; the full id
        with pytest.raises(JsonRpcException) as elsewhere:
            await prepare(1, 2)
    assert (elsewhere.value.code, elsewhere.value.message) == (
        types.LSPErrorCodes.RequestFailed,
        "rename a record from its id line or from a link to it",
    )


NOTE = """\
id: hw/notes
kind: fact
statement: Read [[hw/h100]] beside [[h100|the same]].
"""


async def test_a_folder_of_records_renamed_gets_the_edits_of_flopkb_mv_of_the_folder(tmp_path: Path) -> None:
    """Every record in it moved in one move, as `flopkb mv hw/ gpu` plans it (`--dry-run`) and makes it: every link
    and ref rewritten, in the folder and out of it, the old ids kept as aliases; the editor renames the folder."""
    root = two_records(tmp_path)
    (root / "records/hw/notes.yaml").write_text(NOTE, encoding="utf-8")
    dry_run = move(load_config(root), "hw/", "gpu", dry_run=True)
    expected = moved_by_mv(root, tmp_path, "hw/", "gpu")
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/traffic.yaml"))
        edit = await lsp.workspace_will_rename_files_async(file_renamed(root, "records/hw", "records/gpu"))
        assert lsp.messages == []
    assert edit is not None
    moved = applied(root, edit, versions={"records/facts/traffic.yaml": 1})
    assert {path: moved[old] for path, old in dry_run.moved.items()} == {
        path: text for path, text in dry_run.texts.items() if path in dry_run.moved
    }
    assert {path: moved[path] for path in dry_run.texts.keys() - dry_run.moved.keys()} == {
        path: text for path, text in dry_run.texts.items() if path not in dry_run.moved
    }
    assert {path.replace("records/hw/", "records/gpu/"): text for path, text in moved.items()} == expected


@pytest.mark.parametrize(
    ("old", "new", "told"),
    [
        (
            "records/hw",
            "records/gpu",
            "flopkb: no link to the records in records/hw/ is rewritten: hw/h100 cannot move to gpu/h100: 'gpu/h100' is"
            " an alias of facts/traffic. Once the folder is renamed, the links to them dangle: rename it back to"
            " records/hw, then run `flopkb mv hw/ NEW-FOLDER`",
        ),
        (
            "records/hw",
            "notes/hw",
            "flopkb: no link to the records in records/hw/ is rewritten: notes/hw is not in records/, where every"
            " record is. Once the folder is renamed",
        ),
        (
            "records",
            "notes",
            "flopkb: renaming records/ moves the records folder: no id changes, but the records are no longer where"
            " `records` under [tool.flopkb] in pyproject.toml says: write the folder's new path there",
        ),
    ],
)
async def test_a_folder_renamed_where_mv_would_refuse_gets_no_edits_and_a_warning(
    tmp_path: Path, old: str, new: str, told: str
) -> None:
    """Where `flopkb mv` would refuse the move of one of its records, none is rewritten; the editor renames the folder
    all the same, so the author is told."""
    root = two_records(tmp_path)
    traffic = root / "records/facts/traffic.yaml"
    traffic.write_text(FACT.replace("kind: fact\n", "kind: fact\naliases: [gpu/h100]\n"), encoding="utf-8")
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/traffic.yaml"))
        assert await lsp.workspace_will_rename_files_async(file_renamed(root, old, new)) is None
        (message,) = lsp.messages
        await lsp.workspace_will_rename_files_async(file_renamed(root, "schema", "schemas"))
        assert len(lsp.messages) == 1  # a folder without records: nothing to tell
    assert message.type == types.MessageType.Warning
    assert message.message.startswith(told)


async def test_folder_renames_are_asked_of_the_server() -> None:
    """The editor tells the server of a folder renamed (else the links to its records are not rewritten): a folder
    filter."""
    options = make_server().protocol.fm.feature_options[types.WORKSPACE_WILL_RENAME_FILES]
    assert types.FileOperationPatternKind.Folder in [item.pattern.matches for item in options.filters]


async def test_files_renamed_together_get_the_edits_of_successive_moves(tmp_path: Path) -> None:
    """Several record files moved at once (dragged into folders): one edit per file, holding every move's edits."""
    root = two_records(tmp_path)
    first = moved_by_mv(root, tmp_path, "hw/h100", "hw/nvidia/h100")
    expected = moved_by_mv(tmp_path / "mv", tmp_path / "then", "facts/traffic", "facts/bw/traffic")
    renames = [("records/hw/h100.yaml", "records/hw/nvidia/h100.yaml")]
    renames.append(("records/facts/traffic.yaml", "records/facts/bw/traffic.yaml"))
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/traffic.yaml"))
        files = [types.FileRename(old_uri=(root / old).as_uri(), new_uri=(root / new).as_uri()) for old, new in renames]
        edit = await lsp.workspace_will_rename_files_async(types.RenameFilesParams(files=files))
    assert edit is not None and len(edit.document_changes or []) == 2
    moved = applied(root, edit, versions={"records/facts/traffic.yaml": 1})
    for old, new in renames:
        moved[new] = moved.pop(old)
    assert first != expected
    assert moved == expected

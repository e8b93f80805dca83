"""Code action "create the missing record": the file `flopkb new` writes, never over an existing one, never for an
anchor."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from kbfixture import accelerator, write_kb
from lsp_session import environment, lsp_session, open_file, settled

pytestmark = pytest.mark.asyncio

DANGLING = """\
id: flops/decode
kind: flop
category: memory-bandwidth
description: Decode streams the weights of [[notes/gamma]] on [[hw/alpha#nowhere]].
affected_by_hardware: [hw/beta]
"""


async def actions_for(lsp: object, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    found = await lsp.text_document_code_action_async(  # type: ignore[attr-defined]
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return [action for action in found or [] if isinstance(action, types.CodeAction) and "Create" in action.title]


def written_by_new(root: Path, twin: Path, kind: str, record_id: str) -> str:
    """The file `flopkb new KIND ID` writes in a copy of the base."""
    shutil.copytree(root, twin)
    run = subprocess.run(
        [sys.executable, "-m", "flopkb", "new", kind, record_id, "--root", str(twin)],
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return (twin / "records" / f"{record_id}.yaml").read_text(encoding="utf-8")


async def test_a_dangling_ref_offers_the_record_new_writes_and_the_problem_goes(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    expected = written_by_new(root, tmp_path / "twin", "accelerator", "hw/beta")
    async with lsp_session(root, watch=True) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", DANGLING)
        by_code = {item.code: item for item in await settled(lsp, uri)}
        assert {"dangling-link", "dangling-ref", "dangling-anchor"} <= by_code.keys()

        assert await actions_for(lsp, uri, by_code["dangling-anchor"]) == []
        prose = await actions_for(lsp, uri, by_code["dangling-link"])
        assert [action.title for action in prose] == [
            f"Create the {kind} record notes/gamma" for kind in ("flop", "fact", "engine", "accelerator", "source")
        ]

        (action,) = await actions_for(lsp, uri, by_code["dangling-ref"])
        assert action.title == "Create the accelerator record hw/beta"
        assert action.edit is not None and action.edit.document_changes is not None
        create, insert = action.edit.document_changes
        target = root / "records/hw/beta.yaml"
        assert isinstance(create, types.CreateFile) and create.uri == target.as_uri()
        assert create.options == types.CreateFileOptions(overwrite=False, ignore_if_exists=False)
        assert isinstance(insert, types.TextDocumentEdit) and insert.text_document.uri == target.as_uri()
        (edit,) = insert.edits
        assert isinstance(edit, types.TextEdit) and edit.new_text == expected

        target.write_text(edit.new_text, encoding="utf-8")  # what the client does with the edit
        lsp.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=target.as_uri(), type=types.FileChangeType.Created)]
            )
        )
        codes = {item.code for item in await settled(lsp, uri)}
        assert "dangling-ref" not in codes and "dangling-link" in codes


async def test_a_file_already_on_disk_is_never_offered(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", DANGLING)
        (dangling,) = [item for item in await settled(lsp, uri) if item.code == "dangling-link"]
        assert await actions_for(lsp, uri, dangling)
        (root / "records/notes").mkdir()
        (root / "records/notes/gamma.yml").write_text("# the author's words, not yet a record\n", encoding="utf-8")
        assert await actions_for(lsp, uri, dangling) == []  # the check has not seen it: the disk has
        assert (root / "records/notes/gamma.yml").read_text(encoding="utf-8").startswith("# the author's words")


async def test_a_client_that_cannot_create_files_is_not_offered_it(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    async with lsp_session(root, client="emacs@v29.1") as lsp:  # eglot: no resource operations in workspace edits
        uri = open_file(lsp, root, "records/flops/decode.yaml", DANGLING)
        (dangling,) = [item for item in await settled(lsp, uri) if item.code == "dangling-ref"]
        assert await actions_for(lsp, uri, dangling) == []


async def test_a_record_under_a_folder_that_is_a_symlink_out_of_the_base_is_never_offered(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    (tmp_path / "outside").mkdir()
    (root / "records/notes").symlink_to(tmp_path / "outside", target_is_directory=True)  # committed by a pull request
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", DANGLING)
        by_code = {item.code: item for item in await settled(lsp, uri)}
        assert await actions_for(lsp, uri, by_code["dangling-link"]) == []  # [[notes/gamma]]: it would land outside
        (offered,) = await actions_for(lsp, uri, by_code["dangling-ref"])  # hw/beta: inside, offered as ever
        assert offered.title == "Create the accelerator record hw/beta"

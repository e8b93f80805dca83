"""Rename gives the edits `flopkb mv` makes, as one workspace edit; a file renamed in the editor gets the same."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from test_lsp_edits import CLAIM

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


def applied(root: Path, edit: types.WorkspaceEdit) -> dict[str, str]:
    """The records after `edit` (renames, then whole-text replacements, as the server sends them)."""
    files = files_of(root)
    for change in edit.document_changes or []:
        if isinstance(change, types.RenameFile):
            old = Path(change.old_uri.removeprefix("file://")).relative_to(root).as_posix()
            new = Path(change.new_uri.removeprefix("file://")).relative_to(root).as_posix()
            files[new] = files.pop(old)
        else:
            assert isinstance(change, types.TextDocumentEdit)
            rel = Path(change.text_document.uri.removeprefix("file://")).relative_to(root).as_posix()
            (whole,) = change.edits
            assert isinstance(whole, types.TextEdit) and whole.range.start == types.Position(line=0, character=0)
            files[rel] = whole.new_text
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
        assert applied(root, edit) == expected
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
        moved = applied(root, renamed)  # the edits land before the editor renames the file
        moved["records/hw/nvidia/h100.yaml"] = moved.pop("records/hw/h100.yaml")
        assert moved == expected

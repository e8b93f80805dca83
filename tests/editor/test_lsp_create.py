"""Code action "create the missing record": the file `flopkb new` writes, never over an existing one, never for an
anchor."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from flopkb.config import load_config
from flopkb.editor.checked import Checked
from flopkb.editor.create import create_actions
from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import diagnostic_range
from kbfixture import accelerator, compile_kb, write_kb
from lsp_session import environment, lsp_session, open_file, replaced, settled

pytestmark = pytest.mark.asyncio

DANGLING = """\
id: flops/decode
kind: flop
category: memory-bandwidth
description: Decode streams the weights of [[notes/gamma]] on [[hw/alpha#nowhere]].
affected_by_hardware: [hw/beta]
"""
IN_FACTS = DANGLING.replace("notes/gamma", "facts/gamma")
"""The prose link in the folder of facts: it is offered as a fact."""


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
    """`affected_by_hardware: [hw/beta]` (hw/ is no kind's folder) offers accelerators/beta, where `flopkb new
    accelerator hw/beta` says it belongs, the ref rewritten to it in the same edit; `[[notes/gamma]]` may be a record
    of any kind: nothing is offered, and the hint says why."""
    root = write_kb(tmp_path / "kb", {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    expected = written_by_new(root, tmp_path / "twin", "accelerator", "accelerators/beta")
    async with lsp_session(root, watch=True) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", DANGLING)
        by_code = {item.code: item for item in await settled(lsp, uri)}
        assert {"dangling-link", "dangling-ref", "dangling-anchor"} <= by_code.keys()

        assert await actions_for(lsp, uri, by_code["dangling-anchor"]) == []
        assert await actions_for(lsp, uri, by_code["dangling-link"]) == []
        assert by_code["dangling-link"].message.endswith(
            "\nhint: notes/ is the folder of no kind: to create the record, write its id in its kind's folder"
            " (flops/gamma or facts/gamma or engines/gamma or accelerators/gamma or sources/gamma)"
        )

        (action,) = await actions_for(lsp, uri, by_code["dangling-ref"])
        assert action.title == "Create the accelerator record accelerators/beta, and link to it"
        assert action.edit is not None and action.edit.document_changes is not None
        create, insert, rewrite = action.edit.document_changes
        target = root / "records/accelerators/beta.yaml"
        assert isinstance(create, types.CreateFile) and create.uri == target.as_uri()
        assert create.options == types.CreateFileOptions(overwrite=False, ignore_if_exists=False)
        assert isinstance(insert, types.TextDocumentEdit) and insert.text_document.uri == target.as_uri()
        (edit,) = insert.edits
        assert isinstance(edit, types.TextEdit) and edit.new_text == expected
        assert isinstance(rewrite, types.TextDocumentEdit)
        assert rewrite.text_document == types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=1)
        (written,) = rewrite.edits
        line = DANGLING.split("\n")[4]
        assert written == types.TextEdit(
            range=types.Range(
                start=types.Position(line=4, character=line.index("hw/beta")),
                end=types.Position(line=4, character=line.index("hw/beta") + len("hw/beta")),
            ),
            new_text="accelerators/beta",
        )

        target.parent.mkdir()
        target.write_text(edit.new_text, encoding="utf-8")  # what the client does with the edit
        replaced(lsp, uri, 2, DANGLING.replace("[hw/beta]", "[accelerators/beta]"))
        lsp.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=target.as_uri(), type=types.FileChangeType.Created)]
            )
        )
        codes = {item.code for item in await settled(lsp, uri)}
        assert "dangling-ref" not in codes and "dangling-link" in codes


MISPLACED = """\
id: flops/decode
kind: flop
category: memory-bandwidth
description: Decode streams the weights of [[flops/prefill]], see [[facts/gamma]].
affected_by_hardware: [flops/beta]
"""


async def test_a_link_in_a_kinds_folder_creates_that_kind_and_a_ref_in_another_kinds_folder_its_own(
    tmp_path: Path,
) -> None:
    """`[[facts/gamma]]`: a fact, as written; `affected_by_hardware: [flops/beta]` takes an accelerator:
    accelerators/beta, the ref rewritten to it."""
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", MISPLACED)
        found = await settled(lsp, uri)
        prose = sorted((item for item in found if item.code == "dangling-link"), key=lambda item: item.range.start)
        (ref,) = [item for item in found if item.code == "dangling-ref"]
        assert [[action.title for action in await actions_for(lsp, uri, link)] for link in prose] == [
            ["Create the flop record flops/prefill"],
            ["Create the fact record facts/gamma"],
        ]
        (action,) = await actions_for(lsp, uri, ref)
        assert action.title == "Create the accelerator record accelerators/beta, and link to it"


async def test_a_file_already_on_disk_is_never_offered(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", IN_FACTS)
        (dangling,) = [item for item in await settled(lsp, uri) if item.code == "dangling-link"]
        assert await actions_for(lsp, uri, dangling)
        (root / "records/facts").mkdir()
        (root / "records/facts/gamma.yml").write_text("# the author's words, not yet a record\n", encoding="utf-8")
        assert await actions_for(lsp, uri, dangling) == []  # the check has not seen it: the disk has
        assert (root / "records/facts/gamma.yml").read_text(encoding="utf-8").startswith("# the author's words")


async def test_a_client_that_cannot_create_files_is_not_offered_it(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    async with lsp_session(root, client="emacs@v29.1") as lsp:  # eglot: no resource operations in workspace edits
        uri = open_file(lsp, root, "records/flops/decode.yaml", IN_FACTS)
        (dangling,) = [item for item in await settled(lsp, uri) if item.code == "dangling-ref"]
        assert await actions_for(lsp, uri, dangling) == []


async def test_a_record_under_a_folder_that_is_a_symlink_out_of_the_base_is_never_offered(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    (tmp_path / "outside").mkdir()
    (root / "records/facts").symlink_to(tmp_path / "outside", target_is_directory=True)  # committed by a pull request
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", IN_FACTS)
        by_code = {item.code: item for item in await settled(lsp, uri)}
        assert await actions_for(lsp, uri, by_code["dangling-link"]) == []  # [[facts/gamma]]: it would land outside
        (offered,) = await actions_for(lsp, uri, by_code["dangling-ref"])  # accelerators/beta: inside, offered
        assert offered.title == "Create the accelerator record accelerators/beta, and link to it"


SHORT_AND_HOST = """\
id: facts/t
kind: fact
statement: Speculative decoding, see [[speculation]].
sources: [medusa-2025, github.com/org/repo]
"""


async def test_a_short_link_is_created_in_its_kinds_folder_and_a_url_without_scheme_is_never_offered(
    tmp_path: Path,
) -> None:
    """`sources: [medusa-2025]` offers sources/medusa-2025 (where `flopkb new` has sources), which the ref resolves to
    once written, and `[[speculation]]` the id in each kind's folder; `github.com/org/repo` is a URL whose scheme is
    left out (its fix writes it): no record."""
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s")})
    async with lsp_session(root, watch=True) as lsp:
        uri = open_file(lsp, root, "records/facts/t.yaml", SHORT_AND_HOST)
        short, host = sorted(
            (item for item in await settled(lsp, uri) if item.code == "dangling-ref"),
            key=lambda item: item.range.start.character,
        )
        assert "did you mean https://github.com/org/repo?" in host.message
        assert await actions_for(lsp, uri, host) == []
        (link,) = [item for item in await settled(lsp, uri) if item.code == "dangling-link"]
        assert [action.title for action in await actions_for(lsp, uri, link)] == [
            f"Create the {kind} record {kind}s/speculation"
            for kind in ("flop", "fact", "engine", "accelerator", "source")
        ]
        (action,) = await actions_for(lsp, uri, short)
        assert action.title == "Create the source record sources/medusa-2025"
        assert action.edit is not None and action.edit.document_changes is not None
        create, insert = action.edit.document_changes
        target = root / "records/sources/medusa-2025.yaml"
        assert isinstance(create, types.CreateFile) and create.uri == target.as_uri()
        assert isinstance(insert, types.TextDocumentEdit) and isinstance(insert.edits[0], types.TextEdit)
        assert insert.edits[0].new_text.count("id: sources/medusa-2025\n") == 1
        target.parent.mkdir()
        target.write_text(insert.edits[0].new_text, encoding="utf-8")
        lsp.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=target.as_uri(), type=types.FileChangeType.Created)]
            )
        )
        left = [item.message for item in await settled(lsp, uri) if item.code == "dangling-ref"]
        assert left == [host.message]  # medusa-2025 resolves to sources/medusa-2025


@pytest.mark.parametrize(
    ("current", "offered"),
    [
        (IN_FACTS, 1),  # the buffer the check read
        (IN_FACTS.replace("facts/gamma", "facts/delta"), 0),  # the link edited since
        (IN_FACTS.replace("description:", "description: The"), 0),  # text added before it on its line
    ],
)
async def test_no_record_is_offered_for_a_link_the_buffer_no_longer_holds_there(
    tmp_path: Path, current: str, offered: int
) -> None:
    """The editor asks with the last check's diagnostic once the buffer changed, before the next check is done."""
    rel = "records/flops/decode.yaml"
    root = write_kb(
        tmp_path, {"records/hw/alpha.yaml": accelerator("hw/alpha", memory_bandwidth="4 TB/s"), rel: IN_FACTS}
    )
    config = load_config(root)
    checked = Checked(config, 1, {}, compile_kb(root))
    line = IN_FACTS.split("\n")[3]
    where = diagnostic_range(IN_FACTS, 4, line.index("[[facts/gamma]]") + 1, types.PositionEncodingKind.Utf16)
    told = types.Diagnostic(range=where, message="m", code="dangling-link", source=SOURCE)
    actions = create_actions(
        checked, config, rel, current, 2, [told], lambda path: (root / path).as_uri(), types.PositionEncodingKind.Utf16
    )
    assert len(actions) == offered

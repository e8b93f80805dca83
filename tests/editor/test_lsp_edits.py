"""Unsaved edits: whatever is typed, the server's diagnostics equal a cold check of the files as typed.

Edits are sent as incremental `didChange` ranges (UTF-16 positions); an edit
of one record re-publishes the diagnostics of the records that compute
with it, open or not; files changed on disk come in through watched-file
notifications; hostile buffers and sustained typing leave the server up.
"""

from __future__ import annotations

import asyncio
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.config import load_config
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from kbfixture import H100, accelerator, write_kb
from lsp_session import (
    UTF16,
    Seen,
    ThreadedSession,
    checked,
    lsp_session,
    open_file,
    pushed,
    record_files,
    seen,
    settled,
)
from random_kb import initial

INSERTS = ["", "x", " ", "\n", "[[", "]]", "hw/a1", "#", ": ", "- ", "é", "😀", "value: ", "{", '"', "  "]


def utf16_position(text: str, offset: int) -> types.Position:
    line_start = text.rfind("\n", 0, offset) + 1
    return types.Position(
        line=text.count("\n", 0, offset), character=len(text[line_start:offset].encode("utf-16-le")) // 2
    )


def cold(root: Path, texts: dict[str, str], mirror: Path) -> list[Seen]:
    """The diagnostics of a cold, in-process check of the base at `root` with `texts` written over its files."""
    if mirror.exists():
        shutil.rmtree(mirror)
    shutil.copytree(root, mirror, ignore=shutil.ignore_patterns("build"))
    for rel, text in texts.items():
        (mirror / rel).write_text(text, encoding="utf-8", newline="")
    kb = compile_knowledge_base(load_config(mirror), CHECK_STAGES)
    return seen(mirror, [diagnostic.to_dict() for diagnostic in kb.diagnostics], UTF16)


class Editor:
    """The open buffers of a session, edited as an editor sends edits: incremental ranges, versions counted."""

    def __init__(self, session: ThreadedSession, root: Path) -> None:
        self.session, self.root = session, root
        self.texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in record_files(root)}
        self.versions = dict.fromkeys(self.texts, 1)
        for rel, text in self.texts.items():
            session.call(open_file, session.lsp, root, rel, text)

    def replace(self, rel: str, start: int, end: int, new: str) -> None:
        text = self.texts[rel]
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=utf16_position(text, start), end=utf16_position(text, end)), text=new
        )
        self.texts[rel] = text[:start] + new + text[end:]
        self.versions[rel] += 1
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=(self.root / rel).as_uri(), version=self.versions[rel]
            ),
            content_changes=[change],
        )
        self.session.call(self.session.lsp.text_document_did_change, params)

    def reset(self) -> None:
        """Every buffer back to its file's text, in one whole-buffer edit each."""
        for rel in self.texts:
            disk = (self.root / rel).read_text(encoding="utf-8")
            if self.texts[rel] != disk:
                self.replace(rel, 0, len(self.texts[rel]), disk)

    def settle(self) -> list[Seen]:
        any_uri = (self.root / next(iter(self.texts))).as_uri()
        self.session.run(settled(self.session.lsp, any_uri))
        return pushed(self.session.lsp, self.root)


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    root = write_kb(tmp_path_factory.mktemp("edits"), initial(random.Random(17)))
    session = ThreadedSession(root)
    try:
        yield Editor(session, root)
    finally:
        session.close()


edit = st.tuples(st.integers(0, 10_000), st.floats(0, 1), st.integers(0, 40), st.sampled_from(INSERTS))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(edit, min_size=1, max_size=8))
def test_random_incremental_edits_leave_the_diagnostics_of_a_cold_check(
    editor: Editor, tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[int, float, int, str]]
) -> None:
    editor.reset()
    files = sorted(editor.texts)
    for which, where, length, new in edits:
        rel = files[which % len(files)]
        text = editor.texts[rel]
        start = round(where * len(text))
        editor.replace(rel, start, min(start + length, len(text)), new)
    mirror = tmp_path_factory.getbasetemp() / "mirror"
    assert editor.settle() == cold(editor.root, editor.texts, mirror)


CLAIM = """\
id: facts/traffic
kind: fact
statement: One second of streaming at full bandwidth.
formulas:
  - id: second
    expr: hw.memory_bandwidth * t
    unit: TB
    inputs: {t: 1 s}
    hardware: [hw/h100]
    expect:
      - hardware: hw/h100
        value: 3.35
"""


@pytest.mark.asyncio
async def test_an_accelerator_edit_republishes_the_claims_of_records_not_open(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {
            "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
            "records/facts/traffic.yaml": CLAIM,
        },
    )
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, uri)
        assert "claim-mismatch" not in {item[3] for item in pushed(lsp, root)}
        text = (root / "records/hw/h100.yaml").read_text(encoding="utf-8")
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text.replace("3.35", "2"))],
            )
        )
        await settled(lsp, uri)
        (root / "records/hw/h100.yaml").write_text(text.replace("3.35", "2"), encoding="utf-8")
        expected = checked(root, UTF16)
        assert "claim-mismatch" in {item[3] for item in expected if item[0] == "records/facts/traffic.yaml"}
        assert pushed(lsp, root) == expected


@pytest.mark.asyncio
async def test_files_changed_on_disk_come_in_through_watched_file_notifications(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s")})
    async with lsp_session(root, watch=True) as lsp:
        registered: list[types.Registration] = []

        @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registered.extend(params.registrations)

        uri = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, uri)
        assert pushed(lsp, root) == checked(root, UTF16)
        (root / "records/facts").mkdir()
        (root / "records/facts/traffic.yaml").write_text(CLAIM.replace("hw/h100", "hw/h200"), encoding="utf-8")
        lsp.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=(root / "records/facts/traffic.yaml").as_uri(), type=types.FileChangeType.Created
                    )
                ]
            )
        )
        await settled(lsp, uri)
        assert "dangling-ref" in {item[3] for item in pushed(lsp, root)}
        assert pushed(lsp, root) == checked(root, UTF16)
        assert [registration.method for registration in registered] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]


@pytest.mark.asyncio
async def test_a_watching_editor_is_trusted_for_changes_on_disk_and_a_rescan_reads_the_disk(tmp_path: Path) -> None:
    """With file watching, no check walks the records folder or stats every file: a file changed behind the editor's
    back is seen on `flopkb.rescan`."""
    root = write_kb(tmp_path, {"records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s")})
    async with lsp_session(root, watch=True) as lsp:
        uri = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, uri)
        # the first check may have begun before the client said it watches files (and, the document opened as on
        # disk, be that document's check): the listing is kept from the first check that reads the disk after that
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangePartial(range=_at(0, 0), text="# h100\n")],
            )
        )
        await settled(lsp, uri)
        before = pushed(lsp, root)
        (root / "records/facts").mkdir()
        (root / "records/facts/traffic.yaml").write_text(CLAIM.replace("hw/h100", "hw/h200"), encoding="utf-8")
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=accelerator("hw/h100"))],
            )
        )
        await settled(lsp, uri)
        assert "dangling-ref" not in {item[3] for item in pushed(lsp, root)}, before
        await lsp.workspace_execute_command_async(types.ExecuteCommandParams(command="flopkb.rescan"))
        await settled(lsp, uri)
        (root / "records/hw/h100.yaml").write_text(accelerator("hw/h100"), encoding="utf-8")
        assert "dangling-ref" in {item[3] for item in pushed(lsp, root)}
        assert pushed(lsp, root) == checked(root, UTF16)


HOSTILE_BUFFERS = {
    "too large": "id: hw/h100\nkind: accelerator\nvendor: V\ndescription: " + "é" * 600_000 + "\n",
    "deep": "id: hw/h100\nkind: accelerator\nx: " + "[" * 5000 + "]" * 5000 + "\n",
    "aliases": "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(12)),
    "not text": "\x00\x01\ufffe id: x\n",
    "tabs and a BOM": "\ufeffid:\thw/h100\n\tkind: accelerator\n",
}


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(HOSTILE_BUFFERS))
async def test_a_hostile_buffer_gets_check_s_diagnostics_and_the_server_stays_up(tmp_path: Path, name: str) -> None:
    root = write_kb(tmp_path, {"records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s")})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/h100.yaml", HOSTILE_BUFFERS[name])
        await settled(lsp, uri)
        (root / "records/hw/h100.yaml").write_text(HOSTILE_BUFFERS[name], encoding="utf-8", newline="")
        assert pushed(lsp, root) == checked(root, UTF16) != []
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=H100)],
            )
        )
        assert [item.code for item in await settled(lsp, uri)] == ["orphan"]


@pytest.mark.asyncio
async def test_sustained_typing_leaves_the_last_text_checked_and_shutdown_answered(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {
            "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
            "records/facts/traffic.yaml": CLAIM,
        },
    )
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/traffic.yaml")
        text = CLAIM
        for version, character in enumerate("See [[hw/h100]] and [[hw/h200]]. " * 6, start=2):
            at = text.index("\nformulas:")
            text = text[:at] + character + text[at:]
            lsp.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(start=utf16_position(CLAIM, 0), end=utf16_position(CLAIM, 0)), text=""
                        ),
                        types.TextDocumentContentChangeWholeDocument(text=text),
                    ],
                )
            )
            await asyncio.sleep(0)
        await settled(lsp, uri)
        (root / "records/facts/traffic.yaml").write_text(text, encoding="utf-8")
        assert pushed(lsp, root) == checked(root, UTF16)
        assert "dangling-link" in {item[3] for item in pushed(lsp, root)}


def _at(line: int, character: int) -> types.Range:
    return types.Range(
        start=types.Position(line=line, character=character), end=types.Position(line=line, character=character)
    )

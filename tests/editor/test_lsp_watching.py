"""An editor that watches files for the server: a folder deleted or renamed is seen (one event for the folder, as VS
Code sends it), and a settings change that names no records folder is told, the settings before it kept."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from test_lsp_edits import CLAIM

from flopkb.editor.disk import Remembered
from flopkb.load.sources import WorkTree
from kbfixture import accelerator, write_kb
from lsp_session import UTF16, checked, lsp_session, open_file, pushed, replaced, settled

FILES = {
    "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
    "records/facts/traffic.yaml": CLAIM,
}


def told(lsp: LanguageClient, *events: tuple[Path, types.FileChangeType]) -> None:
    lsp.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in events]
        )
    )


def renamed(lsp: LanguageClient, old: Path, new: Path) -> None:
    """A folder renamed, told as VS Code tells it: the old folder deleted, the new one created."""
    shutil.move(old, new)
    told(lsp, (old, types.FileChangeType.Deleted), (new, types.FileChangeType.Created))


def registrations(lsp: LanguageClient) -> list[types.Registration]:
    """The registrations the server asks of the client, as they come."""
    return asked(lsp)[0]


def asked(lsp: LanguageClient) -> tuple[list[types.Registration], list[types.Unregistration]]:
    """The registrations the server asks of the client, and those it withdraws, as they come."""
    registered: list[types.Registration] = []
    withdrawn: list[types.Unregistration] = []

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registered.extend(params.registrations)

    @lsp.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister(params: types.UnregistrationParams) -> None:
        withdrawn.extend(params.unregisterations)

    return registered, withdrawn


def watched(watchers: list[dict[str, Any]], path: Path, kind: types.WatchKind) -> bool:
    """Whether a watcher (as the client receives it) reports `kind` of event at `path`, its glob matched against the
    absolute path as VS Code matches a string pattern (`fnmatch`'s `*` crosses folders as `**/` does)."""
    return any(fnmatchcase(str(path), watcher["globPattern"]) and watcher.get("kind", 7) & kind for watcher in watchers)


@pytest.mark.asyncio
async def test_a_folder_deleted_or_renamed_as_one_event_gets_check_s_diagnostics(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    async with lsp_session(root, watch=True) as lsp:
        registered = registrations(lsp)
        uri = open_file(lsp, root, "records/facts/traffic.yaml")
        await settled(lsp, uri)
        replaced(lsp, uri, 2, CLAIM)  # a check that keeps the listing and the stats (see test_lsp_edits)
        await settled(lsp, uri)
        assert pushed(lsp, root) == checked(root, UTF16)
        (registration,) = registered
        watchers = registration.register_options["watchers"]
        for folder in ("records/hw", "records", "schema"):
            assert watched(watchers, root / folder, types.WatchKind.Delete), folder
            assert watched(watchers, root / folder, types.WatchKind.Create), folder
        assert watched(watchers, root / "records/hw/h100.yaml", types.WatchKind.Change)

        renamed(lsp, root / "records/hw", root / "records/gear")
        await settled(lsp, uri)
        assert "id-path-mismatch" in {item[3] for item in pushed(lsp, root)}  # the record is there, its id off
        assert pushed(lsp, root) == checked(root, UTF16)

        moved = root / "records/gear/h100.yaml"
        moved.write_text(accelerator("hw/h100", memory_bandwidth="2 TB/s"), encoding="utf-8")
        told(lsp, (moved, types.FileChangeType.Changed))
        renamed(lsp, root / "records/gear", root / "records/hw")
        await settled(lsp, uri)
        assert "claim-mismatch" in {item[3] for item in pushed(lsp, root)}  # its file as changed under the other name
        assert pushed(lsp, root) == checked(root, UTF16)

        shutil.rmtree(root / "records/hw")
        told(lsp, (root / "records/hw", types.FileChangeType.Deleted))
        await settled(lsp, uri)
        assert "dangling-ref" in {item[3] for item in pushed(lsp, root)}
        assert pushed(lsp, root) == checked(root, UTF16)


@pytest.mark.asyncio
async def test_a_records_setting_naming_no_folder_is_told_and_the_settings_before_are_kept(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    pyproject = root / "pyproject.toml"
    async with lsp_session(root, watch=True) as lsp:
        registrations(lsp)
        uri = open_file(lsp, root, "records/facts/traffic.yaml")
        await settled(lsp, uri)
        before = pushed(lsp, root)
        assert before == checked(root, UTF16)
        pyproject.write_text('[tool.flopkb]\nrecords = "nothere"\n', encoding="utf-8")
        told(lsp, (pyproject, types.FileChangeType.Changed))
        await settled(lsp, uri)
        assert [(message.type, message.message) for message in lsp.messages] == [
            (
                types.MessageType.Error,
                f"flopkb: pyproject.toml [tool.flopkb] records = 'nothere': no such folder in {root}; the settings"
                " before this change are kept: fix the setting, or create the folder and save pyproject.toml again",
            )
        ]
        assert pushed(lsp, root) == before
        pyproject.write_text('[tool.flopkb]\nrecords = "records"\n', encoding="utf-8")
        told(lsp, (pyproject, types.FileChangeType.Changed))
        await settled(lsp, uri)
        assert len(lsp.messages) == 1
        assert pushed(lsp, root) == before


async def until(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Wait for `condition` to hold: what the server asks of the client comes in its own time."""
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_a_records_folder_renamed_in_the_settings_is_watched_from_then_on(tmp_path: Path) -> None:
    """`records = "notes"` saved: the watchers of records/ are withdrawn and notes/ watched, its subfolder deleted as
    one event (which the first watchers do not report) seen as `flopkb check` sees it."""
    root = write_kb(tmp_path, {**FILES, **{rel.replace("records/", "notes/"): text for rel, text in FILES.items()}})
    pyproject = root / "pyproject.toml"
    async with lsp_session(root, watch=True) as lsp:
        registered, withdrawn = asked(lsp)
        uri = open_file(lsp, root, "notes/facts/traffic.yaml")
        await settled(lsp, uri)
        (first,) = registered
        assert not watched(first.register_options["watchers"], root / "notes/hw", types.WatchKind.Delete)

        pyproject.write_text('[tool.flopkb]\nrecords = "notes"\n', encoding="utf-8")
        told(lsp, (pyproject, types.FileChangeType.Changed))
        await settled(lsp, uri)
        await until(lambda: len(registered) == 2)  # asked once the client answered the withdrawal
        assert [(item.id, item.method) for item in withdrawn] == [(first.id, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)]
        (_, second) = registered
        assert second.id != first.id and second.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        watchers = second.register_options["watchers"]
        for folder in ("notes", "notes/hw", "schema"):
            assert watched(watchers, root / folder, types.WatchKind.Delete), folder
        assert not watched(watchers, root / "records/hw", types.WatchKind.Delete)
        assert pushed(lsp, root) == checked(root, UTF16)

        shutil.rmtree(root / "notes/hw")
        told(lsp, (root / "notes/hw", types.FileChangeType.Deleted))
        await settled(lsp, uri)
        assert "dangling-ref" in {item[3] for item in pushed(lsp, root) if item[0] == "notes/facts/traffic.yaml"}
        assert pushed(lsp, root) == checked(root, UTF16)

        pyproject.write_text('[tool.flopkb]\nrecords = "notes"\n# the same folders\n', encoding="utf-8")
        told(lsp, (pyproject, types.FileChangeType.Changed))
        await settled(lsp, uri)
        assert len(registered) == 2 and len(withdrawn) == 1  # watching what it watches: nothing asked


def test_a_folder_told_of_forgets_every_file_under_it_and_no_other() -> None:
    """A folder renamed away and back, a file in it changed meanwhile: the stat kept from before is not the file's
    (the load cache would take the file for unchanged)."""
    kept = {"records/hw/h100.yaml": 1, "records/hw/b200.yaml": 1, "records/hwx/a.yaml": 1, "records/facts/f.yaml": 1}
    disk = Remembered(Stats(kept))
    for rel in kept:
        disk.stat(rel)
    kept.update(dict.fromkeys(kept, 2))
    disk.forget(["records/hw"])
    assert {rel: disk.stat(rel).st_size for rel in kept} == {
        "records/hw/h100.yaml": 2,
        "records/hw/b200.yaml": 2,
        "records/hwx/a.yaml": 1,
        "records/facts/f.yaml": 1,
    }


class Stats(WorkTree):
    """Files whose stats are given: their size."""

    def __init__(self, sizes: dict[str, int]) -> None:
        super().__init__(Path("/nowhere"))
        self.sizes = sizes

    def stat(self, rel: str) -> os.stat_result:
        return os.stat_result((0, 0, 0, 0, 0, 0, self.sizes[rel], 0, 0, 0))

"""The build state that `flopkb serve` holds in memory between saves (`flopkb.site.incremental.held`), and the one
on disk: a state is trusted only whole and only for the folders it was written for, so that a server killed
after a save, a damaged file or folders replaced since cost a full build, never a wrong site (issue 22)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_incremental_site import EPOCH, START, build_with_cache, records, tree
from test_serve_memory import ACCELERATOR, FILES, FLOP, accelerator

from flopkb.config import load_config
from flopkb.site.incremental.state import BuildState, folders_of
from flopkb.site.publishing.publish import state_path
from flopkb.site.publishing.search import BUNDLE
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb


def folders(root: Path) -> tuple[Path, Path]:
    return root / "build/site", root / "build/site-docs"


def saved_state(root: Path) -> BuildState | None:
    site, docs = folders(root)
    return BuildState.load(state_path(site), folders_of(site, docs))


def serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Server]:
    """A base of `FILES` and its server, after its first build."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    root = write_kb(tmp_path / "kb", FILES)
    server = Server(load_config(root), port=0)
    assert server.rebuild()
    return root, server


def test_a_server_killed_after_a_save_leaves_no_state_and_the_next_build_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, server = serving(tmp_path, monkeypatch)
    assert saved_state(root) is not None  # the first build's, for its folders
    (root / FLOP).write_text(FILES[FLOP].replace("Rests", "Still rests"))
    assert server.rebuild()
    (root / ACCELERATOR).write_text(accelerator("4"))
    assert server.rebuild()
    # Killed here (no stop): the site changed in place after the state on disk, which is gone.
    assert not state_path(folders(root)[0]).exists()
    again = build_with_cache(root)
    assert again.rendered == len(FILES)
    fresh = write_kb(
        tmp_path / "fresh",
        {FLOP: FILES[FLOP].replace("Rests", "Still rests")}
        | {rel: text for rel, text in FILES.items() if rel != FLOP}
        | {ACCELERATOR: accelerator("4")},
    )
    build_with_cache(fresh)
    assert tree(root / "build/site") == tree(fresh / "build/site")


def test_a_stopped_server_writes_the_state_its_next_start_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, server = serving(tmp_path, monkeypatch)
    (root / FLOP).write_text(FILES[FLOP].replace("Rests", "Still rests"))
    assert server.rebuild()
    server.stop()
    assert saved_state(root) is not None
    assert build_with_cache(root).rendered == 0  # the state describes the site as it is


@pytest.mark.parametrize("damage", ["truncated", "flipped", "other folders"])
def test_a_damaged_or_foreign_state_costs_a_full_build(tmp_path: Path, damage: str) -> None:
    root = write_kb(tmp_path / "kb", records(START))
    build_with_cache(root)
    state = state_path(folders(root)[0])
    data = state.read_bytes()
    if damage == "truncated":
        state.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":
        at = data.index(b'"docs"') + 20
        state.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    else:  # the folders were replaced by copies after the state was written (a restore, another build)
        for folder in folders(root):
            shutil.copytree(folder, folder.with_name("copy"))
            shutil.rmtree(folder)
            folder.with_name("copy").rename(folder)
    assert saved_state(root) is None
    (root / "records/flops/f.yaml").write_text(records(START)["records/flops/f.yaml"].replace("Rests", "Now rests"))
    again = build_with_cache(root)
    assert again.rendered == len(START)
    assert "Now rests" in (root / "build/site/records/flops/f.html").read_text()


def test_the_held_state_is_not_used_after_another_build_swapped_the_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, server = serving(tmp_path, monkeypatch)
    try:
        (root / FLOP).write_text(FILES[FLOP].replace("Rests", "Still rests"))
        assert server.rebuild()
        (root / ACCELERATOR).write_text(accelerator("4"))
        build_with_cache(root)  # `flopkb build` meanwhile: new folders, and its own state on disk
        (root / ACCELERATOR).write_text(accelerator("2"))  # back to what the server's held state describes
        assert server.rebuild()
    finally:
        server.stop()
    fresh = write_kb(tmp_path / "fresh", FILES | {FLOP: FILES[FLOP].replace("Rests", "Still rests")})
    build_with_cache(fresh)
    served, full = tree(root / "build/site"), tree(fresh / "build/site")
    assert {k: v for k, v in served.items() if not k.startswith(BUNDLE)} == {
        k: v for k, v in full.items() if not k.startswith(BUNDLE)
    }  # the search index, left to the first search after a save

"""Atomic writes: the old content or the new, never over a save, permissions and links kept, nothing left behind."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flopkb.atomic import (
    Changed,
    LinkedOutside,
    ReadOnly,
    WriteError,
    create_atomically,
    interruptible,
    replace_if_unchanged,
    sweep_temporaries,
    write_atomically,
)


def test_a_new_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "new.yaml", b"id: a\n")
    finally:
        os.umask(mask)
    assert (tmp_path / "new.yaml").read_bytes() == b"id: a\n"
    assert (tmp_path / "new.yaml").stat().st_mode & 0o777 == 0o644


def test_an_existing_file_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_bytes(b"old")
    path.chmod(0o600)
    write_atomically(path, b"new")
    assert path.read_bytes() == b"new" and path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    path = tmp_path / "old.yaml"
    path.write_bytes(b"old")

    def broken(source: str, target: str) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(WriteError) as failure:
        write_atomically(path, b"new")
    assert str(failure.value).startswith(f"{path}: cannot write: ") and "\n" not in str(failure.value)
    assert path.read_bytes() == b"old"
    assert [child.name for child in tmp_path.iterdir()] == ["old.yaml"]


def test_a_file_saved_since_it_was_read_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"the author's save")
    with pytest.raises(Changed):
        replace_if_unchanged(path, b"what the command read", b"formatted", tmp_path)
    assert path.read_bytes() == b"the author's save"
    assert [child.name for child in tmp_path.iterdir()] == ["a.yaml"]
    replace_if_unchanged(path, b"the author's save", b"formatted", tmp_path)
    assert path.read_bytes() == b"formatted"


def test_a_removed_file_is_not_brought_back(tmp_path: Path) -> None:
    with pytest.raises(Changed):
        replace_if_unchanged(tmp_path / "gone.yaml", b"old", b"new", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_file_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"old")
    path.chmod(0o444)
    with pytest.raises(ReadOnly):
        replace_if_unchanged(path, b"old", b"new", tmp_path)
    assert path.read_bytes() == b"old" and path.stat().st_mode & 0o777 == 0o444


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "a.yaml"
    target.write_bytes(b"old")
    link = tmp_path / "a.yaml"
    link.symlink_to(target)
    replace_if_unchanged(link, b"old", b"new", tmp_path)
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(child.name for child in (tmp_path / "shared").iterdir()) == ["a.yaml"]


def test_a_symlink_out_of_the_base_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    outside = tmp_path / "elsewhere.yaml"
    outside.write_bytes(b"old")
    link = tmp_path / "base" / "a.yaml"
    link.symlink_to(outside)
    with pytest.raises(LinkedOutside):
        replace_if_unchanged(link, b"old", b"new", tmp_path / "base")
    assert link.is_symlink() and outside.read_bytes() == b"old"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_flopkbs_own_writes_replace_a_link_and_never_follow_it(tmp_path: Path, device: str) -> None:
    """A cache shard planted as a link to a device: the write replaces the link, the device is untouched."""
    before = os.stat(device)
    link = tmp_path / "00.shard"
    link.symlink_to(device)
    write_atomically(link, b"data")
    assert not link.is_symlink() and link.read_bytes() == b"data"
    after = os.stat(device)
    assert (after.st_mode, after.st_rdev, after.st_ino) == (before.st_mode, before.st_rdev, before.st_ino)


def test_create_refuses_an_existing_file_and_leaves_nothing_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        create_atomically(path, b"new")
    assert path.read_bytes() == b"mine"
    dangling = tmp_path / "b.yaml"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        create_atomically(dangling, b"new")

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(WriteError, match="the disk is full"):
        create_atomically(tmp_path / "c.yaml", b"x" * 100_000)
    assert sorted(child.name for child in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


def test_sigterm_during_a_write_removes_its_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"old")
    real_replace = os.replace

    def terminated(source: str, target: str) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)  # the signal arrives before this returns
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", terminated)
    with interruptible(), pytest.raises(KeyboardInterrupt):
        write_atomically(path, b"new")
    assert path.read_bytes() == b"old"
    assert [child.name for child in tmp_path.iterdir()] == ["a.yaml"]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_the_temporaries_of_dead_runs_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    (tmp_path / "flops").mkdir()
    killed = tmp_path / "flops" / f".a.yaml.{dead_pid}-abcd1234.tmp"
    old_style = tmp_path / ".b.yaml.k2j3h4g5.tmp"
    recent_old_style = tmp_path / ".c.yaml.q2w3e4r5.tmp"
    live = tmp_path / f".d.yaml.{os.getpid()}-abcd1234.tmp"
    authors = tmp_path / ".notes.tmp"
    for path in (killed, old_style, recent_old_style, live, authors):
        path.write_bytes(b"partial")
    an_hour_ago = time.time() - 3600
    os.utime(old_style, (an_hour_ago, an_hour_ago))
    assert sweep_temporaries(tmp_path) == sorted([killed, old_style])
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [".c.yaml.q2w3e4r5.tmp", live.name, ".notes.tmp", "flops"]
    )

"""Atomic writes: the old content or the new, the file's permissions kept, nothing left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flopkb.atomic import write_atomically


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


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.yaml"
    path.write_bytes(b"old")

    def broken(source: str, target: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_atomically(path, b"new")
    assert path.read_bytes() == b"old"
    assert [child.name for child in tmp_path.iterdir()] == ["old.yaml"]

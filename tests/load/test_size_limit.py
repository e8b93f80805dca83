"""A record file is read up to its size limit: one byte more is refused, never read as a truncated record."""

from __future__ import annotations

from pathlib import Path

import pytest

from flopkb.load.files import Unreadable, read_bytes


@pytest.mark.parametrize("extra", [1, 2, 1000])
def test_a_file_over_the_limit_is_refused(tmp_path: Path, extra: int) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * (64 + extra))
    with pytest.raises(Unreadable, match="more than 64 bytes"):
        read_bytes(str(path), limit=64)


def test_a_file_at_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 64)
    assert read_bytes(str(path), limit=64) == b"x" * 64

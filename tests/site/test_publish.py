"""`flopkb build`'s swap and its failures: no moment without build/site, no debris of killed builds, no traceback."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flopkb.config import load_config
from flopkb.site.publishing import publish
from flopkb.site.publishing.publish import BuildError, build, swap_in
from kbfixture import write_kb
from site_fixtures import EPOCH, build_base

FINE = {"records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n"}


def _folder(path: Path, text: str) -> Path:
    path.mkdir()
    (path / "index.html").write_text(text)
    return path


@pytest.mark.parametrize("exchange", [True, False])
def test_swap_replaces_the_folder_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:
        monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
    target = _folder(tmp_path / "site", "old")
    old = swap_in(_folder(tmp_path / "new", "new"), target)
    assert (target / "index.html").read_text() == "new"
    assert old is not None and (old / "index.html").read_text() == "old"  # for the caller to discard
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([old.name, "site"])
    assert swap_in(_folder(tmp_path / "first", "first"), tmp_path / "absent") is None  # nothing to replace
    assert (tmp_path / "absent/index.html").read_text() == "first"


@pytest.mark.skipif(sys.platform != "linux", reason="the one-step exchange is Linux's")
def test_on_linux_the_site_is_there_at_every_moment_of_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _folder(tmp_path / "site", "old")
    rename = os.rename

    def watched(a: object, b: object) -> None:
        if Path(str(a)) == target:
            pytest.fail(f"renamed {a} to {b}: a moment without {target}")
        rename(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "rename", watched)
    swap_in(_folder(tmp_path / "new", "new"), target)
    assert (target / "index.html").read_text() == "new"


def test_leftovers_of_killed_builds_are_removed_by_the_next(tmp_path: Path) -> None:
    base = write_kb(tmp_path / "kb", FINE)
    build_base(base)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftovers = [
        f".site-build-{dead.stdout.strip()}-abcd",
        ".site-build-x7f3k2",  # named before build folders carried their process id
        f".site-old-{dead.stdout.strip()}-12345678",
    ]
    for name in leftovers:
        _folder(base / "build" / name, "debris")
    live = _folder(base / "build" / f".site-build-{os.getppid()}-live", "another build, still running")
    build_base(base)
    left = {p.name for p in (base / "build").iterdir()} - {"cache", "site-state.json"}
    assert left == {live.name, "site", "site-docs", "site-mkdocs.yml"}


@pytest.mark.parametrize("where", ["mkdocs", "render"])
def test_a_failure_to_write_is_a_build_error_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    base = write_kb(tmp_path / "kb", FINE)
    full = OSError(errno.ENOSPC, "No space left on device", str(base / "build/x/index.html"))

    def write_file(*args: object, **kwargs: object) -> None:
        raise full

    if where == "mkdocs":
        monkeypatch.setattr("mkdocs.utils.write_file", write_file)
    else:
        monkeypatch.setattr("flopkb.site.render.render_docs", write_file)
    with pytest.raises(BuildError, match=r"cannot write the site: .*index.html: No space left on device"):
        build(load_config(base), epoch=EPOCH)
    assert {p.name for p in (base / "build").iterdir()} <= {"cache"}  # no work folder, no half site


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    base = write_kb(tmp_path / "kb", FINE)
    (base / "build").mkdir()
    (base / "build").chmod(0o500)
    try:
        if os.access(base / "build", os.W_OK):
            pytest.skip("root writes everywhere")
        done = subprocess.run(
            [sys.executable, "-m", "flopkb", "build", "--root", str(base)], capture_output=True, text=True, check=False
        )
    finally:
        (base / "build").chmod(0o755)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "cannot write the site" in done.stderr and str(base / "build") in done.stderr


def test_the_cli_reports_a_full_disk_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from flopkb.cli import main

    base = write_kb(tmp_path / "kb", FINE)

    def write_file(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(base / "build/x/index.html"))

    monkeypatch.setattr("mkdocs.utils.write_file", write_file)
    result = CliRunner().invoke(main, ["build", "--root", str(base), "--format", "json"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: cannot write the site: {base}/build/x/index.html: No space left on device"
    )

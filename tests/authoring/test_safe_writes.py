"""`fmt` and `new` never lose an author's words: a save made meanwhile, a read-only or symlinked record, a full disk,
the temporary files of killed runs."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from flopkb.authoring import fmt as fmt_module
from flopkb.cli import main
from kbfixture import write_kb

MESSY = "kind: flop\nid: flops/{name}\ncategory: kv-cache\ndescription: D.\n"
CANONICAL = "id: flops/{name}\nkind: flop\ncategory: kv-cache\ndescription: D.\n"
NAMES = ("a", "b", "c")


@pytest.fixture
def kb_root(tmp_path: Path) -> Path:
    return write_kb(tmp_path, {f"records/flops/{name}.yaml": MESSY.format(name=name) for name in NAMES})


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, [args[0], "--root", str(root), *args[1:]])


def test_saves_made_while_fmt_runs_are_kept_and_reported(kb_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fmt_module.format_file
    saved = {
        name: f"id: flops/{name}\nkind: flop  # the author's save\ncategory: kv-cache\ndescription: D.\n"
        for name in "ab"
    }

    def then_the_author_saves(root: Path, rel: str, records: str) -> fmt_module.Outcome:
        outcome = real(root, rel, records)
        if rel.endswith("c.yaml"):  # every file is read: the author saves two of them before fmt writes
            for name, text in saved.items():
                (root / f"records/flops/{name}.yaml").write_text(text)
        return outcome

    monkeypatch.setattr(fmt_module, "format_file", then_the_author_saves)
    result = run(kb_root, "fmt")
    assert result.exit_code == 1
    for name, text in saved.items():
        assert (kb_root / f"records/flops/{name}.yaml").read_text() == text
        assert f"left as it is: records/flops/{name}.yaml: it changed since it was read" in result.output
        assert f"reformatted: records/flops/{name}.yaml" not in result.output
    assert (kb_root / "records/flops/c.yaml").read_text() == CANONICAL.format(name="c")
    assert "1 of 3 record files reformatted" in result.output


def test_a_read_only_record_is_left_and_reported(kb_root: Path) -> None:
    path = kb_root / "records/flops/a.yaml"
    path.chmod(0o444)
    result = run(kb_root, "fmt")
    assert result.exit_code == 1
    assert "left as it is: records/flops/a.yaml: the file is read-only" in result.output
    assert path.read_text() == MESSY.format(name="a") and path.stat().st_mode & 0o777 == 0o444


def test_a_record_linked_out_of_the_base_is_left_unread_and_reported(kb_root: Path, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
    outside.write_text(MESSY.format(name="d"))
    (kb_root / "records/flops/d.yaml").symlink_to(outside)
    result = run(kb_root, "fmt")
    assert result.exit_code == 1
    assert (
        "records/flops/d.yaml:1:1: error not-a-record: a symlink that leads out of records/ is not a record"
        " file; copy the file in\n" in result.output
    )
    assert outside.read_text() == MESSY.format(name="d")


def test_a_symlinked_record_is_formatted_through_its_link(kb_root: Path, tmp_path: Path) -> None:
    shared = kb_root / "records/d.shared"  # in records/, not walked: what a link may lead to
    shared.write_text(MESSY.format(name="d"))
    link = kb_root / "records/flops/d.yaml"
    link.symlink_to(shared)
    assert run(kb_root, "fmt").exit_code == 0
    assert link.is_symlink() and shared.read_text() == CANONICAL.format(name="d")


@pytest.mark.parametrize(("code", "reason"), [(errno.ENOSPC, "the disk is full"), (errno.EACCES, "Permission denied")])
def test_a_failed_write_is_one_line_with_exit_2(
    kb_root: Path, monkeypatch: pytest.MonkeyPatch, code: int, reason: str
) -> None:
    def fails(source: str, target: str) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", fails)
    result = run(kb_root, "fmt")
    assert result.exit_code == 2
    assert result.output == f"Error: {kb_root}/records/flops/a.yaml: cannot write: {reason}\n"
    assert sorted(path.name for path in (kb_root / "records/flops").iterdir()) == ["a.yaml", "b.yaml", "c.yaml"]


def test_fmt_sweeps_the_temporaries_of_killed_runs(kb_root: Path) -> None:
    dead_pid = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True).stdout)
    left = kb_root / f"records/flops/.a.yaml.{dead_pid}-x1y2z3w4.tmp"
    left.write_text("id: half")
    result = run(kb_root, "fmt")
    assert result.exit_code == 0 and "removed 1 temporary file of killed runs" in result.output
    assert not left.exists()


def test_new_on_a_full_disk_leaves_nothing_and_the_retry_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_kb(tmp_path, {})
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    result = run(root, "new", "fact", "facts/ridge")
    assert result.exit_code == 2
    assert result.output == f"Error: {root}/records/facts/ridge.yaml: cannot write: the disk is full\n"
    assert [path.name for path in (root / "records/facts").iterdir()] == []
    monkeypatch.setattr(os, "write", real_write)
    assert run(root, "new", "fact", "facts/ridge").exit_code == 0
    assert (root / "records/facts/ridge.yaml").read_text().count("id: facts/ridge") == 1

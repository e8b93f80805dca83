"""`flopkb mv` as a transaction: killed anywhere, it ends finished or untouched after the next command; a save made
while it runs is never overwritten; a failed write is one line with exit 2 and undoes the move."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.cli import main
from kbfixture import compile_kb, located, write_kb
from repo import REPO

FILES = {
    "records/facts/ridge.yaml": "id: facts/ridge\nkind: fact\ntitle: Ridge point\nstatement: The ridge.\n",
    **{
        f"records/flops/user{index}.yaml": (
            f"id: flops/user{index}\nkind: flop\ncategory: arithmetic-intensity\n"
            f"description: See [[facts/ridge]] and [[ridge|the ridge]].  # {index}\n"
        )
        for index in range(2)
    },
}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under records/ and the journal, by root-relative path."""
    found = {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and (path.parts[len(root.parts)] == "records" or path.name == ".flopkb-mv.json")
    }
    return found


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args[:1], "--root", str(root), *args[1:]])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The base before the move and after an uninterrupted one."""
    root = write_kb(tmp_path_factory.mktemp("reference"), dict(FILES))
    before = snapshot(root)
    assert run(root, "mv", "facts/ridge", "facts/roofline/ridge")[0] == 0
    return before, snapshot(root)


def killed_mv(
    root: Path, kill_at: int, old: str = "facts/ridge", new: str = "facts/roofline/ridge"
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"), str(REPO / "tests")])}
    script = str(REPO / "tests" / "killed_mv.py")
    return subprocess.run(
        [sys.executable, script, str(root), old, new, str(kill_at)],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )


def test_a_mv_killed_at_any_write_ends_finished_or_untouched_after_the_next_command(
    tmp_path: Path, states: tuple[dict[str, bytes], dict[str, bytes]]
) -> None:
    before, after = states
    assert killed_at_every_write(tmp_path, "facts/ridge", "facts/roofline/ridge", before, after) >= 7


def test_a_folder_mv_killed_at_any_write_ends_finished_or_untouched_after_the_next_command(tmp_path: Path) -> None:
    """Every record of the folder moved, or none: never a base half moved once the next command ran."""
    root = write_kb(tmp_path / "reference", dict(FILES))
    before = snapshot(root)
    assert run(root, "mv", "flops/", "ops")[0] == 0
    assert (
        killed_at_every_write(tmp_path, "flops/", "ops", before, snapshot(root)) >= 9
    )  # two files moved: two removals


def killed_at_every_write(tmp_path: Path, old: str, new: str, before: dict[str, bytes], after: dict[str, bytes]) -> int:
    """How many writes `flopkb mv OLD NEW` makes, once it was killed at each of them in turn, and the next command
    left the base as it was `before` the move, or as it is `after` it (both seen)."""
    whole = killed_mv(write_kb(tmp_path / "whole", dict(FILES)), 0, old, new)
    assert whole.returncode == 0, whole.stderr
    writes = int(whole.stderr.rsplit("calls=", 1)[1])
    outcomes = set()
    for kill_at in range(1, writes + 1):
        root = write_kb(tmp_path / str(kill_at), dict(FILES))
        killed = killed_mv(root, kill_at, old, new)
        assert killed.returncode == -9, (kill_at, killed.stderr)
        if (root / ".flopkb-mv.json").exists():
            diagnostics = located(compile_kb(root), ignore=("orphan", "broken-link", "alias-shadows-id"))
            assert ("unfinished-move", ".flopkb-mv.json", 1, 1) in diagnostics
        status, output = run(root, "fmt")
        assert status == 0, (kill_at, output)
        state = snapshot(root)
        assert state in (before, after), kill_at
        outcomes.add("finished" if state == after else "untouched")
        assert not [path for path in root.rglob("*.tmp")], kill_at
    assert outcomes == {"finished", "untouched"}
    return writes


def test_undo_puts_every_file_back(tmp_path: Path, states: tuple[dict[str, bytes], dict[str, bytes]]) -> None:
    before, _ = states
    root = write_kb(tmp_path, dict(FILES))
    whole = killed_mv(root, 0)
    writes = int(whole.stderr.rsplit("calls=", 1)[1])
    root = write_kb(tmp_path / "again", dict(FILES))
    assert killed_mv(root, writes - 3).returncode == -9  # the files written, the old one not yet removed
    assert run(root, "mv", "--undo") == (
        0,
        "undid the interrupted `flopkb mv facts/ridge facts/roofline/ridge`: every file is as it was before it\n",
    )
    assert snapshot(root) == before
    assert run(root, "mv", "--finish") == (0, "no move was interrupted: nothing to do\n")


def test_a_save_during_the_move_is_kept_and_the_move_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, states: tuple[dict[str, bytes], dict[str, bytes]]
) -> None:
    before, _ = states
    root = write_kb(tmp_path, dict(FILES))
    from flopkb.links import journal

    real_begin = journal.begin

    def begin_then_author_saves(config: object, plan: journal.Journal) -> None:
        real_begin(config, plan)  # type: ignore[arg-type]
        (root / "records/flops/user1.yaml").write_bytes(b"id: flops/user1\nkind: flop\n# the author's save\n")

    monkeypatch.setattr("flopkb.links.mv.begin", begin_then_author_saves)
    status, output = run(root, "mv", "facts/ridge", "facts/roofline/ridge")
    assert status == 2
    assert output.strip().splitlines() == [
        "Error: records/flops/user1.yaml was edited since the move began; it was left as it is; "
        "the move was undone, every file is as it was"
    ]
    saved = dict(before, **{"records/flops/user1.yaml": b"id: flops/user1\nkind: flop\n# the author's save\n"})
    assert snapshot(root) == saved


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_failed_write_is_one_line_with_exit_2_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, states: tuple[dict[str, bytes], dict[str, bytes]]
) -> None:
    before, _ = states
    root = write_kb(tmp_path, dict(FILES))
    real_replace = os.replace

    def fails_on_user1(source: str, target: str) -> None:
        if str(target).endswith("user0.yaml"):
            raise OSError(code, os.strerror(code))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", fails_on_user1)
    status, output = run(root, "mv", "facts/ridge", "facts/roofline/ridge")
    assert status == 2
    assert len(output.strip().splitlines()) == 1 and "Traceback" not in output
    assert "user0.yaml: cannot write" in output and "the move was undone" in output
    assert snapshot(root) == before


def test_a_journal_naming_a_file_outside_records_is_refused(tmp_path: Path) -> None:
    root = write_kb(tmp_path, dict(FILES))
    (root / "outside.yaml").write_text("precious\n")
    hostile = {
        "format": 1,
        "old": "a",
        "new": "b",
        "files": [{"path": "outside.yaml", "before": "precious\n", "after": "overwritten\n"}],
    }
    (root / ".flopkb-mv.json").write_text(json.dumps(hostile))
    status, output = run(root, "fmt")
    assert status == 2 and "is not inside records/" in output
    assert (root / "outside.yaml").read_text() == "precious\n"
    assert located(compile_kb(root), ignore=("orphan",)) == [("unfinished-move", ".flopkb-mv.json", 1, 1)]


def test_a_rerun_of_a_finished_move_says_it_is_done(tmp_path: Path) -> None:
    root = write_kb(tmp_path, dict(FILES))
    assert run(root, "mv", "facts/ridge", "facts/r2")[0] == 0
    assert run(root, "mv", "facts/ridge", "facts/r2") == (
        2,
        "Error: 'facts/ridge' is moved already: it is an alias of facts/r2\n",
    )


def test_a_half_made_move_without_journal_names_the_stale_copy(tmp_path: Path) -> None:
    root = write_kb(tmp_path, dict(FILES))
    moved = FILES["records/facts/ridge.yaml"].replace("id: facts/ridge", "id: facts/r2\naliases: [facts/ridge]")
    (root / "records/facts/r2.yaml").write_text(moved)
    status, output = run(root, "mv", "facts/ridge", "facts/r2")
    assert status == 2
    assert (
        "lists 'facts/ridge' as an alias" in output
        and "records/facts/ridge.yaml is the stale copy, remove it" in output
    )

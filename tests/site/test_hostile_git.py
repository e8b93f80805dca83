"""The git commands `flopkb build` runs (last-changed dates, SOURCE_DATE_EPOCH) start no program that a pull request's
files or a repository's configuration name.

The attack of security review s12, finding 1: a base folder committed with the files of a bare git directory
(`HEAD`, `config`, `objects/`, `refs/`) was taken by git for the repository, so its `config` (`log.showSignature`
with `gpg.program = ./evil.sh`) made `git log` run the pull request's script.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_last_changed import git as run

from flopkb.cli import main
from flopkb.config import load_config
from flopkb.load.sources import GitError, git
from flopkb.site.pages.last_changed import last_changes
from kbfixture import write_kb

FINE = {"records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n"}


def signed_commit(repository: Path, parent: str | None = None) -> str:
    """A commit of the index with a signature header that no key made: checking it runs `gpg.program`."""
    tree = run(repository, "write-tree")
    head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
    body = (
        f"{head}author a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    written = repository.parent / "commit.txt"
    written.write_text(body, encoding="utf-8")
    return run(repository, "hash-object", "-t", "commit", "-w", "--literally", str(written))


def evil_script(folder: Path, marker: Path) -> Path:
    script = folder / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def build(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)  # the build asks git for it
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 0, result.output
    return result.output


def page(root: Path) -> str:
    return (root / "build/site/records/facts/a.html").read_text(encoding="utf-8")


def test_a_base_folder_that_is_a_git_directory_runs_none_of_its_programs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = tmp_path / "repo"
    root = write_kb(repository / "kb", FINE)
    scratch = tmp_path / "scratch"
    shutil.copytree(root, scratch)
    run(scratch, "init", "-q")
    run(scratch, "add", "-A")
    sha = signed_commit(scratch)
    # What the pull request commits in kb/: a bare git directory whose config checks signatures with its script.
    shutil.copytree(scratch / ".git/objects", root / "objects")
    (root / "refs/heads").mkdir(parents=True)
    (root / "refs/heads/main").write_text(f"{sha}\n")
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n[log]\n\tshowSignature = true\n"
        "[gpg]\n\tprogram = ./evil.sh\n[core]\n\tfsmonitor = ./evil.sh\n"
    )
    marker = tmp_path / "PWNED"
    evil_script(root, marker)
    run(repository, "init", "-q")
    run(repository, "add", "-A")
    run(repository, "commit", "-q", "-m", "hostile pull request")

    said = build(root, monkeypatch)
    assert not marker.exists()
    assert "built" in said and "Traceback" not in said
    assert "last changed" not in page(root)  # git refused the folder: no dates, as outside a repository
    with pytest.raises(GitError, match=r"kb holds the files of a git directory \(HEAD, objects/\)"):
        git(root, "log", "-1")  # refused before git runs, for git older than 2.38 (no safe.bareRepository)
    refused = CliRunner().invoke(main, ["diff", "--root", str(root), "HEAD"])
    assert refused.exit_code == 2 and "kb holds the files of a git directory" in refused.output  # not "no repository"

    # The attack is real: git run there without flopkb's settings runs the script.
    subprocess.run(["git", "log", "-1"], cwd=root, capture_output=True, check=False)
    assert marker.exists()


def test_the_repository_configuration_runs_no_program_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    marker = tmp_path / "PWNED"
    script = evil_script(tmp_path, marker)
    run(root, "init", "-q")
    run(root, "add", "-A")
    run(root, "update-ref", "HEAD", signed_commit(root))
    for key in ("core.fsmonitor", "gpg.program", "core.pager"):
        run(root, "config", key, str(script))
    run(root, "config", "log.showSignature", "true")

    build(root, monkeypatch)
    assert not marker.exists()
    assert re.search(r'last changed <time datetime="2023-11-14">', page(root))  # the log still parses


def test_a_repository_without_a_work_tree_dates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # git status fails there ("must be run in a work tree"): the build said so with a traceback.
    root = write_kb(tmp_path / "kb", FINE)
    run(root, "init", "-q")
    run(root, "add", "-A")
    run(root, "commit", "-q", "-m", "first")
    run(tmp_path, "clone", "-q", "--bare", str(root), str(tmp_path / "bare.git"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "bare.git"))
    assert last_changes(load_config(root)) is None

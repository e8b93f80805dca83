"""Real git repositories for the tests of `flopkb diff`: commits made with fixed names and dates."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from repo import REPO

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV}, check=True
    )
    return done.stdout


def init(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    return root


def commit(root: Path, message: str) -> str:
    """Commit everything in the work tree; the new commit's sha."""
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def tag(root: Path, name: str) -> None:
    """Commit everything in the work tree, and tag the commit `name`."""
    commit(root, name)
    git(root, "tag", name)


def project_base(root: Path) -> Path:
    """A repository whose first commit holds the project's own records and vocabulary."""
    init(root)
    shutil.copytree(REPO / "records", root / "records")
    shutil.copytree(REPO / "schema", root / "schema")
    commit(root, "the project's records")
    return root


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")

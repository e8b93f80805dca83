"""The git plumbing of `flopkb diff`: which commits are compared, resolved once, with errors that say what to run.

`BASE..HEAD` compares the merge base of the two with HEAD, as a pull
request's "files changed" does; `BASE` alone compares BASE with the work
tree. Without a BASE, the default is `origin/$GITHUB_BASE_REF` under GitHub
Actions, else `origin/main`, else `HEAD~1`, and its merge base with HEAD is
compared with the work tree. Every failure is a `GitError` (`flopkb.load.sources`): `flopkb diff`
exits 2 with its message (an unknown revision, not a git repository, a
shallow clone that lacks the base, with the `git fetch` that fixes it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from flopkb.load.sources import GitError, LookalikeRepository, git

SHORT = 7


@dataclass(frozen=True, slots=True)
class Revision:
    """One side of a diff: a commit, or the work tree (`sha` None)."""

    label: str
    """As the user named it (`origin/main`, `HEAD`), or `work tree`."""
    sha: str | None

    @property
    def short(self) -> str:
        return self.label if self.sha is None else f"{self.label}@{self.sha[:SHORT]}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """What is compared: `base` (the merge base, when there is one) with `head`; `named` is the base as given."""

    named: Revision
    base: Revision
    head: Revision
    fell_back: str | None = None
    """Why the default base is not the first choice (`origin/main does not exist here`), or None."""


class Git:
    """Runs git in a repository (`flopkb.load.sources.git`); every command's failure is a `GitError`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.top = Path(git(root, "rev-parse", "--show-toplevel").strip())
        except LookalikeRepository:
            raise
        except GitError as error:
            raise GitError(f"{root} is not in a git repository: flopkb diff compares commits of one") from error

    def run(self, *args: str) -> str:
        return git(self.root, *args)

    def resolve(self, name: str) -> str | None:
        """The commit `name` names, or None."""
        try:
            return self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}").strip()
        except GitError:
            return None

    @property
    def prefix(self) -> str:
        """The repository's path to `root` ('' when `root` is its top folder)."""
        relative = os.path.relpath(self.root.resolve(), self.top.resolve())
        return "" if relative == "." else Path(relative).as_posix()

    def shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository").strip() == "true"

    def merge_base(self, one: str, other: str) -> str | None:
        try:
            return self.run("merge-base", one, other).strip()
        except GitError:
            return None

    def commit(self, name: str) -> Revision:
        """`name` resolved, or a `GitError` that says how to fetch it when this is a shallow clone."""
        sha = self.resolve(name)
        if sha is not None:
            return Revision(name, sha)
        if self.shallow():
            raise GitError(
                f"{name} is not in this shallow clone: fetch it (git fetch --unshallow, or "
                f"git fetch --deepen=100 origin {_remote_branch(name)}), or check out with fetch-depth: 0"
            )
        raise GitError(f"unknown revision {name!r}: name a commit, a branch or a tag (git log --oneline shows some)")

    def compare(self, spec: str | None, env: Mapping[str, str]) -> Comparison:
        """The commits `flopkb diff [spec]` compares (see the module)."""
        if spec is None:
            named, fell_back = self._default_base(env)
            return self._against_work_tree(named, merge=True, fell_back=fell_back)
        if ".." not in spec:
            return self._against_work_tree(self.commit(spec), merge=False)
        base_name, _, head_name = spec.partition("..")
        if head_name.startswith("."):
            raise GitError(f"{spec!r}: flopkb diff takes BASE..HEAD (two dots); it always compares with the merge base")
        named, head = self.commit(base_name or "HEAD"), self.commit(head_name or "HEAD")
        assert named.sha is not None and head.sha is not None
        return Comparison(named, self._merge_base(named, head.sha), head)

    def _against_work_tree(self, named: Revision, *, merge: bool, fell_back: str | None = None) -> Comparison:
        assert named.sha is not None
        base = named
        if merge:
            head = self.resolve("HEAD")
            if head is not None:
                base = self._merge_base(named, head)
        return Comparison(named, base, Revision("work tree", None), fell_back)

    def _merge_base(self, named: Revision, head: str) -> Revision:
        assert named.sha is not None
        found = self.merge_base(named.sha, head)
        if found is not None:
            return named if found == named.sha else Revision("merge base", found)
        if self.shallow():
            raise GitError(
                f"{named.label} and HEAD have no common commit in this shallow clone: deepen it "
                f"(git fetch --deepen=100 origin {_remote_branch(named.label)}, or git fetch --unshallow), "
                "or check out with fetch-depth: 0"
            )
        raise GitError(f"{named.label} and HEAD have no common commit: name the base to compare with as BASE..HEAD")

    def _default_base(self, env: Mapping[str, str]) -> tuple[Revision, str | None]:
        tried: list[str] = []
        pull_request_base = env.get("GITHUB_BASE_REF") if env.get("GITHUB_ACTIONS") == "true" else None
        names = [f"origin/{pull_request_base}"] if pull_request_base else []
        for name in dict.fromkeys([*names, "origin/main", "HEAD~1"]):
            sha = self.resolve(name)
            if sha is not None:
                note = f"{', '.join(tried)} not found here" if tried else None
                return Revision(name, sha), note
            tried.append(name)
        if self.shallow():
            raise GitError(
                f"none of {', '.join(tried)} is in this shallow clone: fetch the base "
                "(git fetch --deepen=100 origin main, or git fetch --unshallow), or check out with fetch-depth: 0"
            )
        raise GitError(f"none of {', '.join(tried)} exists: name the commit to compare with (flopkb diff BASE)")


def _remote_branch(name: str) -> str:
    """What to fetch for a revision: `origin/main` is branch `main` of origin; anything else is fetched as named."""
    return name.removeprefix("origin/").split("~")[0].split("^")[0]

"""When each record last changed: the date (UTC) and commit of the last commit that touched its file.

    changes = last_changes(config)        # None outside a git repository
    changes.get("records/facts/x.yaml")   # LastChange(sha, date), or UNCOMMITTED

From commit history, never the clock or the file's time, so two builds of one
commit say the same. Two git commands per build, whatever the number of
records: one `git log --name-only` of the records folder (newest first, so a
file's first listing is its last change; a merge lists nothing of its own, so
a record changed on a branch keeps the commit that changed it) and one
`git status` for the files that differ from HEAD (edited, new, untracked),
which are UNCOMMITTED. Neither runs anything of the repository's: no hook, no
diff or text conversion driver, no file-system monitor, no signature check
(`flopkb.load.sources.git` turns them off, and refuses a base folder that is
itself a git directory). In a shallow clone, the files of its oldest commit
date from that commit. When git cannot tell (no repository, or one git
refuses), nothing is said.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from flopkb.load.sources import GitError, git

if TYPE_CHECKING:
    from flopkb.config import Config

_MARK = "\x01"
"""Starts each commit's line in the log (a byte no path and no hash holds)."""


@dataclass(frozen=True, slots=True)
class LastChange:
    sha: str
    """The full commit id; '' for a file with changes not committed."""
    date: str
    """The commit's date in UTC, `YYYY-MM-DD`; '' for a file with changes not committed."""

    @property
    def short(self) -> str:
        return self.sha[:7]


UNCOMMITTED = LastChange("", "")


def last_changes(config: Config) -> dict[str, LastChange] | None:
    """The last change of every file of the records folder that git knows, by its path from the base's root
    (`Entry.path`); a file that differs from HEAD is UNCOMMITTED, and so is one git does not list (`last_change`).
    None outside a git repository."""
    root = config.root
    try:
        prefix = git(root, "rev-parse", "--show-prefix").strip()  # the base's folder in the repository, ending in /
    except GitError:
        return None
    folder = f":(top){prefix}{config.records}"
    plain = ("-c", "core.quotePath=false")
    try:
        log = git(root, *plain, "log", "--no-renames", "--name-only", f"--format={_MARK}%H %ct", "HEAD", "--", folder)
    except GitError:  # a repository without a commit yet
        log = ""
    try:
        status = git(
            root, *plain, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all", "--", folder
        )
    except GitError:  # no work tree to compare (a bare repository given by GIT_DIR): no date can be told true
        return None
    found: dict[str, LastChange] = {}
    change = UNCOMMITTED
    for line in log.splitlines():
        if line.startswith(_MARK):
            sha, _, seconds = line[1:].partition(" ")
            change = LastChange(sha, datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%d"))
        elif line and line.startswith(prefix):
            found.setdefault(line[len(prefix) :], change)
    fields = iter(status.split("\0"))
    for item in fields:
        if len(item) < 4:
            continue
        state, path = item[:2], item[3:]
        if state[0] in "RC":
            next(fields, None)  # a rename's or copy's source path follows
        if path.startswith(prefix):
            found[path[len(prefix) :]] = UNCOMMITTED
    return found


def last_change(changes: dict[str, LastChange] | None, path: str) -> LastChange | None:
    """A record file's last change (UNCOMMITTED when git has none for it); None outside a git repository."""
    return None if changes is None else changes.get(path, UNCOMMITTED)

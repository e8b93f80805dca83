"""The diffs of the last commits that touched records: the site's Recent changes page reads them.

From commit history alone (`git log` of the records folder and the
vocabulary), never the work tree or the clock, so every build of one commit
gives the same reports. Each commit is compared with its first parent; every
commit is compiled once, all through one load cache (`SideCompiler`), so a
blob that several commits share is parsed once.
"""

from __future__ import annotations

from dataclasses import dataclass

from flopkb.config import Config
from flopkb.load.sources import GitError
from flopkb.review.compare import compare
from flopkb.review.git import Comparison, Git, Revision
from flopkb.review.model import Report
from flopkb.review.sides import Side, SideCompiler


@dataclass(frozen=True, slots=True)
class Change:
    sha: str
    date: str
    """The author date, `YYYY-MM-DD`."""
    subject: str
    report: Report


def recent_changes(config: Config, count: int) -> list[Change]:
    """The last `count` commits of HEAD's history that changed the records or the vocabulary, newest first, each
    with its diff against its parent (a root commit, which has none, is left out). [] outside a git repository."""
    try:
        git = Git(config.root)
        prefix = f"{git.prefix}/" if git.prefix else ""
        listed = git.run(
            "log",
            f"--max-count={count}",
            "--format=%H%x00%P%x00%ad%x00%s",
            "--date=short",
            "HEAD",
            "--",
            f":(top){prefix}{config.records}",
            f":(top){prefix}{config.schema}/vocabulary.yaml",
        )
    except GitError:
        return []
    key = (str(config.root), listed)
    if key in _LAST:
        return _LAST[key]
    commits = []
    for line in listed.splitlines():
        sha, parents, date, subject = line.split("\0", 3)
        if parents:
            commits.append((sha, parents.split()[0], date, subject))
    compiler = SideCompiler(config, git)
    compiled: dict[str, Side] = {}

    def side(sha: str) -> Side:
        if sha not in compiled:
            compiled[sha] = compiler.compile(Revision(sha[:7], sha))
        return compiled[sha]

    changes = []
    try:
        for sha, parent, date, subject in commits:
            base, head = side(parent), side(sha)
            comparison = Comparison(base.revision, base.revision, head.revision)
            changes.append(Change(sha, date, subject, compare(base, head, comparison)))
    finally:
        compiler.close()
    _LAST.clear()
    _LAST[key] = changes
    return changes


_LAST: dict[tuple[str, str], list[Change]] = {}
"""The last answer, by root and the commits it came from: `flopkb serve` rebuilds on every save, and history does
not change with the work tree."""

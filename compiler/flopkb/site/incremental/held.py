"""What a serving process keeps in memory from one build to the next: the build state and mkdocs' gathered files.

`flopkb serve` rebuilds on every save. Writing the build state after each (every record's key, every docs
file's digest: 0.4 to 0.9 s at 10,000 records) is work that only the next build reads, and the next build is
this process's. So a server holds its last build's state here, with the identities of the site and docs
folders it describes, and writes it to disk only when it swaps a whole site in (its first build) and when it
stops (`flush`). A held state is used only while the folders are still those very ones (an in-place update
keeps them, a `flopkb build` run meanwhile swaps them), and it is taken, not read: a build that fails
half-way leaves nothing held, and the next build is a full one. The state file on disk is removed before a
build changes the folders in place (`flopkb.site.publishing.publish`), so a server killed after a save leaves
no state that a later build could trust; one it wrote is checked on loading (`BuildState.load`).

The gathered files (`flopkb.site.incremental.kept`) are used only with a held state: the changes a build
gives them are the ones since the build that held it; and so is the nav the state was built with, under which
the next build converts the saved records' pages first (`flopkb.site.publishing.first`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flopkb.site.incremental.kept import KeptFiles
from flopkb.site.incremental.state import BuildState, Folders, folders_of

__all__ = ["Held"]


@dataclass(slots=True)
class Held:
    state: BuildState | None = None
    folders: Folders = (None, None)
    """The identities of the site and docs folders that `state` describes."""
    files: KeptFiles = field(default_factory=KeptFiles)
    nav: list[Any] = field(default_factory=list)
    """The nav of the build that held `state`."""

    def take(self, site: Path, docs: Path) -> BuildState | None:
        """The held state, if the folders are still the ones it describes; nothing is held after."""
        state, self.state = self.state, None
        if state is None or None in self.folders or folders_of(site, docs) != self.folders:
            return None
        return state

    def hold(self, state: BuildState, site: Path, docs: Path, nav: list[Any]) -> None:
        self.state, self.folders, self.nav = state, folders_of(site, docs), nav

    def flush(self, path: Path, site: Path, docs: Path) -> bool:
        """Write the held state to `path` if the folders are still the ones it describes; True when written."""
        state = self.take(site, docs)
        if state is None:
            return False
        state.save(path, self.folders)
        return True

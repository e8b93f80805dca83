"""The saved records' pages first: `flopkb serve` moves them into the site before the rest of a rebuild.

What an author waits for after a save is the page of the record saved; the rest of a rebuild (the listing
pages, mkdocs' gathering of every file, its sitemap) takes as long again at 10,000 records. So once the saved
records' pages are rendered (`flopkb.site.render.render_docs(..., first=)`), `FirstPages` converts them with
mkdocs' own build of those files alone, under the previous build's configuration and nav
(`flopkb.site.incremental.kept.ChangedOnly`: the nav's pages gathered, never read), moves them into the site,
each file by one atomic rename under the lock that the server's readers take, and reloads the readers' pages.
A page's HTML is a function of its markdown and of what every page shares (`mkdocs_base`), and the pages are
moved in only when that is the previous build's: they are then the pages that the rest of the rebuild writes
again, byte for byte (`tests/site/test_first.py`). When the rest of the rebuild changes what every page shares
(a category's first record adds it to the nav), it swaps a whole new site in.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flopkb.site.incremental.kept import ChangedOnly
from flopkb.site.incremental.partial import Reuse, output_of
from flopkb.site.incremental.state import move_files
from flopkb.site.publishing.mkdocs import build_site

__all__ = ["FirstPages"]


@dataclass(frozen=True, slots=True)
class FirstPages:
    """Converts and moves in the saved records' pages, rendered into `work / "docs"`, before the rest of a rebuild."""

    work: Path
    """The rebuild's work folder: its docs folder holds the pages; their site is built beside it."""
    site: Path
    nav: list[Any]
    """The previous build's nav."""
    base: str
    """The previous build's `mkdocs_base`: the pages are moved in only when theirs is the same."""
    epoch: int
    lock: AbstractContextManager[Any]
    announce: Callable[[], None]
    template_cache: Path | None
    options: dict[str, Any]
    """What `build_site` passes on to `mkdocs_config` (site name, description, URL, presentation folder)."""

    def __call__(self, files: list[str]) -> None:
        """Convert these files of the docs folder, move their outputs into the site and announce them."""
        built = self.work / "first"
        result = build_site(
            self.work / "docs",
            built,
            config_file=self.work / "first.yml",
            source_date_epoch=self.epoch,
            install=False,
            reuse=Reuse(self.site, frozenset(files), frozenset(), link=False),
            template_cache=self.template_cache,
            nav=self.nav,
            search=False,
            kept=ChangedOnly(),
            **self.options,
        )
        if result.base != self.base:
            return
        outputs = [output_of(rel) for rel in files]
        with self.lock:
            # A file that mkdocs leaves out of a site (a dot file) has no output to move.
            move_files(built, self.site, [rel for rel in outputs if (built / rel).is_file()])
        self.announce()

"""mkdocs for the changed pages only: the others' HTML comes from the previous site.

A page's HTML is a function of its markdown and of what every page shares
(the configuration with its nav, the theme and its overrides, the mkdocs and
Material versions, the sitemap date): `mkdocs_base` in `flopkb.site.incremental.state`.
While that is unchanged, a page whose markdown is unchanged would come out
byte for byte as it did, so mkdocs does not convert it again. `PartialBuild`,
a plugin added to the configuration, runs mkdocs' own build in its `dirty`
mode with every file of the docs folder that did not change (and every theme
file) marked unmodified: mkdocs gathers all files and the nav as usual, but
converts, renders and writes only the changed pages and copies only the
changed static files, into an empty site folder. The files it did not write
are then hard-linked from the previous site (`link_missing`), but for the
outputs of files that are gone. What every build writes whole (the sitemap,
404.html) is written as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from flopkb.site.incremental.state import link_missing
from flopkb.site.publishing.search import BUNDLE


@dataclass(frozen=True, slots=True)
class Reuse:
    """What a build takes from the previous one: its site folder, less the files it must build again."""

    site: Path
    changed: frozenset[str]
    """Files of the docs folder (relative paths) that are new or whose bytes changed."""
    removed: frozenset[str]
    """Files of the previous docs folder that are gone."""
    link: bool = True
    """Hard-link the files not built from the previous site (False: the caller moves the built ones into it)."""
    since_kept: bool = False
    """`changed` and `removed` are the changes since the build whose gathered files are kept
    (`flopkb.site.incremental.kept`)."""


def output_of(rel: str) -> str:
    """The site file a docs file becomes (`use_directory_urls: false`)."""
    return rel[:-3] + ".html" if rel.endswith(".md") else rel


def _unmodified() -> bool:
    return False


class PartialBuild(BasePlugin):
    """Builds the changed pages only, with a `reuse`; without, it only counts the pages built."""

    def __init__(self, reuse: Reuse | None) -> None:
        super().__init__()
        self.reuse = reuse
        self.built = 0

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        if self.reuse is None:
            return files
        changed = self.reuse.changed
        for file in files:
            if file.src_uri not in changed:
                file.is_modified = _unmodified  # type: ignore[method-assign]
        return files

    def on_page_context(self, context: Any, *, page: Page, config: MkDocsConfig, nav: Any) -> Any:
        self.built += 1
        return context

    def link_previous(self, site_dir: Path) -> int:
        """Hard-link into `site_dir` what this build did not write (after mkdocs' build)."""
        if self.reuse is None or not self.reuse.link:
            return 0
        # The search index is written whole by every build (`flopkb.site.publishing.search`), never linked.
        return link_missing(
            self.reuse.site, site_dir, {output_of(rel) for rel in self.reuse.removed}, frozenset({BUNDLE})
        )

"""mkdocs for the changed pages only: the others' HTML comes from the previous site.

A page's HTML is a function of its markdown and of what every page shares
(the configuration with its nav, the theme and its overrides, the mkdocs and
Material versions, the sitemap date): `mkdocs_base` in `flopkb.site.state`.
While that is unchanged, a page whose markdown is unchanged would come out
byte for byte as it did, so mkdocs does not convert it again. `PartialBuild`,
a plugin added to the configuration, runs mkdocs' own build in its `dirty`
mode with every file of the docs folder that did not change (and every theme
file) marked unmodified: mkdocs gathers all files and the nav as usual, but
converts, renders and writes only the changed pages and copies only the
changed static files, into an empty site folder. The files it did not write
are then hard-linked from the previous site (`link_missing`), but for the
outputs of files that are gone. What every build writes whole (the sitemap,
404.html) is written as usual; the search index gets the previous entries
of the pages not rebuilt, in page order, so it is the one a full build
writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from flopkb.site.state import link_missing

SEARCH_INDEX = "search/search_index.json"


@dataclass(frozen=True, slots=True)
class Reuse:
    """What a build takes from the previous one: its site folder, less the files it must build again."""

    site: Path
    changed: frozenset[str]
    """Files of the docs folder (relative paths) that are new or whose bytes changed."""
    removed: frozenset[str]
    """Files of the previous docs folder that are gone."""


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
        self.files: Files | None = None
        self.built = 0
        self.search: Any = None
        self.mark = 0
        self.new_entries: dict[str, list[Any]] = {}

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        if self.reuse is None:
            return files
        changed = self.reuse.changed
        for file in files:
            if file.src_uri not in changed:
                file.is_modified = _unmodified  # type: ignore[method-assign]
        self.files = files
        self.search = next((p for name, p in config.plugins.items() if name.endswith("search")), None)
        return files

    @event_priority(-100)  # after the search plugin has indexed the page
    def on_page_context(self, context: Any, *, page: Page, config: MkDocsConfig, nav: Any) -> Any:
        self.built += 1
        if self.reuse is not None and self.search is not None:
            entries = self.search.search_index.entries
            self.new_entries[page.url] = entries[self.mark :]
            self.mark = len(entries)
        return context

    @event_priority(100)  # before the search plugin writes its index
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.reuse is not None and self.search is not None and self.files is not None:
            old = _entries_by_page(self.reuse.site / SEARCH_INDEX)
            entries: list[Any] = []
            for file in self.files.documentation_pages():
                url = file.page.url if file.page is not None else file.url
                found = self.new_entries.get(url)
                entries += found if found is not None else old.get(url, [])
            self.search.search_index.entries = entries

    def link_previous(self, site_dir: Path) -> int:
        """Hard-link into `site_dir` what this build did not write (after mkdocs' build)."""
        if self.reuse is None:
            return 0
        return link_missing(self.reuse.site, site_dir, {output_of(rel) for rel in self.reuse.removed})


def _entries_by_page(path: Path) -> dict[str, list[Any]]:
    try:
        docs = json.loads(path.read_bytes())["docs"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    found: dict[str, list[Any]] = {}
    for entry in docs:
        found.setdefault(entry["location"].split("#", 1)[0], []).append(entry)
    return found

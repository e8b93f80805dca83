"""mkdocs' gathered files, kept from one build to the next of a serving process: a save gathers only what changed.

mkdocs' build starts by walking the whole docs folder into a `Files` collection (a `File` per file: 23,000 at
10,000 records), adds the theme's files, and makes a `Page` per documentation file: about 4 s of a 10,000-record
save, profiled, for a folder in which a save changes a few files. `KeptFiles.gathering` hands mkdocs' build
the previous build's collection instead, updated with the files the caller knows changed (`Reuse.changed` and
`Reuse.removed`, which the kept docs folder was updated with): a new file goes where mkdocs' walk puts it
(`file_sort_key`), a removed one goes. What a build sets on the collection is undone before the next: every
file's destination is the new build's site folder and its source the docs folder's path (the first build's work
folder is renamed into place), the partial build's marks are taken off, and the pages that the build populated
(read, converted: they hold their HTML) are dropped, so that mkdocs makes them afresh, as it makes every page
of a fresh gathering; the others are as a fresh gathering makes them (a `Page` is its file's and the
configuration's until it is read). The nav is made by mkdocs' own `get_navigation` from the kept files and
pages: a dozen entries, which it links again. So the build sees what a fresh gathering gives
(`tests/site/test_kept.py` holds that, after random sequences of edits).

A kept collection serves only a build with the same configuration (`mkdocs_base`) on the same docs folder (its
identity: device and inode) whose changes the caller gives; a build that fails leaves nothing kept; a change
that a theme file could shadow, or that collides with another file's page, is gathered afresh. mkdocs' build
is a single function: the gathering is swapped into it (`mkdocs.commands.build.get_files`, which it looks up
at each call) for the length of one build only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs.structure.files import File, Files, file_sort_key, get_files, set_exclusions

from flopkb.site.incremental.partial import Reuse
from flopkb.site.incremental.state import Identity, identity

if TYPE_CHECKING:
    import jinja2
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.pages import Page

__all__ = ["ChangedOnly", "KeptFiles"]

# What a build leaves on a `File` that the next must not see: the paths derived from its folders (set again),
# and the partial build's mark (`flopkb.site.incremental.partial`).
_PER_BUILD = ("abs_src_path", "abs_dest_path", "is_modified")


class _Collection(Files):
    """mkdocs' `Files`, to which mkdocs' build adds the theme's files (a walk of the whole theme) unless `with_theme`
    says they are in it already (a kept collection) or not wanted (`ChangedOnly`)."""

    def __init__(self, files: Iterable[File], *, with_theme: bool) -> None:
        super().__init__(files)
        self.with_theme = with_theme

    def add_files_from_theme(self, env: jinja2.Environment, config: MkDocsConfig) -> None:
        if not self.with_theme:
            super().add_files_from_theme(env, config)
            self.with_theme = True


@dataclass(slots=True)
class _Kept:
    base: str
    folder: Identity
    docs: dict[str, File]
    """The docs folder's files, in the order of mkdocs' walk."""
    theme: list[File]


class KeptFiles:
    """The gathered files of the last good build, for the next one (see the module)."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self.reused = False
        """Whether the last build's gathering was the kept one (else: a fresh walk)."""

    def gathering(self, base: str, reuse: Reuse | None) -> contextlib.AbstractContextManager[None]:
        """For one mkdocs build (of the configuration keyed `base`): its gathering is the kept one, updated with
        `reuse`'s changed and removed files when they are the changes since it was kept; else a fresh one. The
        build's gathering is kept for the next when the build succeeds."""
        changed = reuse.changed if reuse is not None and reuse.since_kept else None
        removed = reuse.removed if reuse is not None else frozenset()
        kept, self._kept = self._kept, None  # a build that fails half-way leaves no collection half-updated
        made: list[tuple[_Collection, Identity, str]] = []

        def gather(config: MkDocsConfig) -> Files:
            folder = identity(Path(config.docs_dir))
            files = _updated(kept, base, folder, config, changed, removed) if changed is not None else None
            self.reused = files is not None
            if files is None:
                if kept is not None:
                    _release(kept.docs.values())
                files = _Collection(get_files(config), with_theme=False)
            if folder is not None:
                made.append((files, folder, config.docs_dir))
            return files

        def settle() -> None:
            if made:
                files, folder, docs_dir = made[0]
                self._kept = _settled(files, base, folder, docs_dir)

        return _gathered_by(gather, settle)


class ChangedOnly:
    """A gathering of the changed files alone, with the nav's pages so that the nav is the whole build's: they
    are gathered, not changed, so never read (`flopkb.site.incremental.partial`). The saved records' pages are
    converted with it before the rest of a rebuild (`flopkb.site.publishing.first`). No theme file is gathered:
    none is copied, and no page's HTML reads the collection's theme files."""

    def gathering(self, base: str, reuse: Reuse | None) -> contextlib.AbstractContextManager[None]:
        changed = reuse.changed if reuse is not None else frozenset()

        def gather(config: MkDocsConfig) -> Files:
            rels = dict.fromkeys([*sorted(changed), *_nav_pages(config.nav)])
            files = [File(rel, config.docs_dir, config.site_dir, config.use_directory_urls) for rel in rels]
            return _Collection(sorted(files, key=file_sort_key), with_theme=True)

        return _gathered_by(gather)


def _nav_pages(nav: object) -> Iterator[str]:
    """The docs files a nav configuration names (its entries are paths, `{title: path}` or `{title: [entries]}`)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)


@contextlib.contextmanager
def _gathered_by(gather: Callable[[MkDocsConfig], Files], settle: Callable[[], None] | None = None) -> Iterator[None]:
    """mkdocs' builds gather their files with `gather` for the length of the block; `settle` runs if it succeeded."""
    import mkdocs.commands.build as mkdocs_build

    swapped = mkdocs_build.get_files
    mkdocs_build.get_files = gather  # type: ignore[assignment]
    try:
        yield
    finally:
        mkdocs_build.get_files = swapped
    if settle is not None:
        settle()


def _updated(
    kept: _Kept | None,
    base: str,
    folder: Identity | None,
    config: MkDocsConfig,
    changed: frozenset[str],
    removed: frozenset[str],
) -> _Collection | None:
    """The kept collection with these changes, for this build's folders; None when it must be gathered afresh."""
    if kept is None or kept.base != base or kept.folder != folder:
        return None
    theme = {file.src_uri: file for file in kept.theme}
    added = [rel for rel in changed if rel not in kept.docs]
    gone = [rel for rel in removed if rel in kept.docs]
    if any(rel in theme for rel in added) or any(_in_theme(rel, config) for rel in gone):
        return None  # a docs file that shadows a theme file, or one that did and is gone
    docs = kept.docs
    _release([docs.pop(rel) for rel in gone])
    if added:
        new = [File(rel, config.docs_dir, config.site_dir, config.use_directory_urls) for rel in added]
        set_exclusions(new, config)
        pages = {file.dest_uri for file in docs.values()}
        if any(file.dest_uri in pages for file in new) or len({file.dest_uri for file in new}) < len(new):
            return None  # an index.md beside a README.md: mkdocs' walk decides which one stays
        docs.update((file.src_uri, file) for file in new)
        kept.docs = docs = {file.src_uri: file for file in sorted(docs.values(), key=file_sort_key)}
    for file in docs.values():
        file.src_dir = config.docs_dir
    for file in (*docs.values(), *kept.theme):
        file.dest_dir = config.site_dir
        for name in _PER_BUILD:
            file.__dict__.pop(name, None)
    return _Collection((*docs.values(), *kept.theme), with_theme=True)


def _in_theme(rel: str, config: MkDocsConfig) -> bool:
    return any(os.path.isfile(os.path.join(folder, rel)) for folder in config.theme.dirs)


def _settled(files: _Collection, base: str, folder: Identity, docs_dir: str) -> _Kept:
    """What the next build keeps of this one's collection: without the pages it populated or linked into its nav."""
    docs = {file.src_uri: file for file in files if file.src_dir == docs_dir}
    _release(
        file
        for file in docs.values()
        if file.page is not None and (file.page.markdown is not None or _linked(file.page))
    )
    return _Kept(base, folder, docs, [file for file in files if file.src_dir != docs_dir])


def _linked(page: Page) -> bool:
    return page.previous_page is not None or page.next_page is not None or page.parent is not None


def _release(files: Iterable[File]) -> None:
    """Drop the files' pages, with their links into a nav: a page frozen out of the collector's reach (as
    `flopkb serve` freezes what it keeps) is then freed by reference counting, which no cycle holds."""
    for file in files:
        page = file.page
        if page is not None:
            page.previous_page = page.next_page = None
            page.__dict__.pop("parent", None)
            file.page = None

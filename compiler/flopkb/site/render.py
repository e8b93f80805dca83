"""Render a compiled knowledge base into the docs folder that mkdocs builds: a page per record, and the index pages.

    from flopkb.site.render import render_docs
    result = render_docs(kb, "build/docs")   # kb from compile_knowledge_base(config, CHECK_STAGES)

Layout of the docs folder (each `.md` becomes `.html`, `use_directory_urls: false`):

| path | what |
| --- | --- |
| `index.md` | home: what the base holds, by kind and category |
| `kinds/<kind>.md`, `categories/<term>.md`, `tags/<tag>.md` | listings (page n: `kinds/<kind>/<n>.md`) |
| `records/<id>.md` | one page per record |
| `accelerators/compare.md` | every accelerator side by side, all rooflines on one chart |
| `graph.md`, `graph.json` | the link graph of the whole base |
| `evidence.md` | every unverified figure and the records that rest on it |
| `codes.md` | the diagnostic codes |
| `charts/**.svg` | rooflines and formula sweeps, static SVG |

The modules, each below the one that uses it: `pages` (the `Site`, a `Page`'s
URLs, links and prose, the template environment) under every renderer;
`records` (record pages), `formulas` (formula tables and charts), `hardware`
(accelerators, rooflines, the compare page), `index` (index pages), `graph`
(the link graph page); this module on top, deciding what to render.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from flopkb.site.incremental.keys import base_key, page_keys
from flopkb.site.incremental.state import BuildState, link_files
from flopkb.site.pages.changes import render_recent_changes
from flopkb.site.pages.common import RenderResult, Site, environment, template_dirs
from flopkb.site.pages.graph import render_graph_page
from flopkb.site.pages.hardware import render_compare_page
from flopkb.site.pages.index import render_index_pages
from flopkb.site.pages.last_changed import LastChange, last_changes
from flopkb.site.pages.records import render_records
from flopkb.site.pages.titles import TITLES, titles_script
from flopkb.site.publishing.mkdocs import SITE_ROOT

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase


# ---------------------------------------------------------------------------
# Record pages in several processes (large bases)

PARALLEL_FROM = 2000
"""Bases of at least this many records render their record pages in worker processes."""
MAX_RENDER_WORKERS = 4

_FORKED: tuple[KnowledgeBase, Path, jinja2.Environment, dict[str, LastChange] | None] | None = None
"""What a forked worker renders from: set in the parent just before the fork, inherited by the workers."""


def _render_share(ids: list[str]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """In a worker: render these records' pages (and their charts); return each one's files, and their digests."""
    assert _FORKED is not None
    kb, docs_dir, env, changes = _FORKED
    site = Site(kb, docs_dir, env)
    site.changes = changes
    try:
        files = render_records(site, ids)
    finally:
        site.close()
    return files, site.result.digests


def render_workers(records: int) -> int:
    """How many worker processes render record pages: none below PARALLEL_FROM records or on one core."""
    import multiprocessing
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if records < PARALLEL_FROM or cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    return min(cores, MAX_RENDER_WORKERS)


# ---------------------------------------------------------------------------
# The whole docs folder


FIRST_PAGES = 8
"""A save of more records than this (a checkout, a `flopkb mv`) gets no pages first (`render_docs`'s `first`)."""


def _render_first(
    site: Site,
    todo: list[str],
    prints: dict[str, str | None],
    previous: dict[str, str | None],
    first: Callable[[list[str]], None],
) -> dict[str, list[str]]:
    """Render the pages of the records saved since the previous build (their fingerprint changed), if there are at
    most FIRST_PAGES, and give `first` their files once written; return each one's files."""
    saved = [record_id for record_id in todo if prints.get(record_id) != previous.get(record_id)]
    if not saved or len(saved) > FIRST_PAGES:
        return {}
    rendered = render_records(site, saved)
    site.flush()
    first([rel for files in rendered.values() for rel in files])
    return rendered


def render_docs(
    kb: KnowledgeBase,
    docs_dir: str | Path,
    *,
    template_root: Path | None = None,
    site_root: Path = SITE_ROOT,
    parallel: bool = True,
    previous: BuildState | None = None,
    previous_docs: Path | None = None,
    link_kept: bool = True,
    first: Callable[[list[str]], None] | None = None,
) -> RenderResult:
    """Write every page, chart and data file of the site into `docs_dir` (which should be empty) and return the nav.

    With a `previous` build's state and its docs folder, a record page whose key (`flopkb.site.incremental.keys`) is
    the one it was rendered under there is not rendered: its files are hard-linked from `previous_docs`
    (unless not `link_kept`: the caller moves what was rendered into `previous_docs` instead).
    With `parallel` (the default), PARALLEL_FROM record pages or more are rendered in worker processes
    (`render_workers`). With `first`, the pages of the records whose fingerprint changed since the `previous` build
    (the records saved, up to FIRST_PAGES) are rendered before any other page, and `first` is given their files
    once they are written (`flopkb.site.publishing.first`); not when the record pages are rendered in workers."""
    global _FORKED
    root = template_root if template_root is not None else kb.config.root
    dirs = template_dirs(root, site_root)
    env = environment(dirs)
    site = Site(kb, Path(docs_dir), env)
    site.changes = last_changes(kb.config)
    site.docs_dir.mkdir(parents=True, exist_ok=True)
    result = site.result
    base = result.base = base_key(site, dirs)
    page = result.keys = page_keys(site, base, previous)
    keys = page.keys
    kept: dict[str, tuple[str | None, list[str]]] = {}
    if previous is not None and previous_docs is not None and previous.render_base == base:
        kept = {
            record_id: previous.records[record_id]
            for record_id, key in keys.items()
            if key is not None and previous.records.get(record_id, (None,))[0] == key
        }
        kept_files = [rel for _key, files in kept.values() for rel in files]
        if link_kept:
            link_files(previous_docs, site.docs_dir, kept_files)
        result.digests.update((rel, previous.docs[rel]) for rel in kept_files)
        site.kept_from = (previous, previous_docs, link_kept)
    result.records.update(kept)
    todo = [record_id for record_id in keys if record_id not in kept]
    result.rendered = todo
    workers = render_workers(len(todo)) if parallel else 0
    pool = shares = None
    rendered: dict[str, list[str]] = {}
    if workers:
        # Record pages are independent of each other: a large base renders them in forked workers (which
        # inherit the compiled base) while this process writes the index pages. Forked before this process
        # starts its writer threads. Each page's bytes do not depend on which process wrote it.
        import multiprocessing

        _FORKED = (kb, site.docs_dir, env, site.changes)
        pool = multiprocessing.get_context("fork").Pool(workers)
        shares = pool.map_async(_render_share, [todo[start::workers] for start in range(workers)])
    try:
        if pool is None:
            if first is not None and previous is not None:
                rendered = _render_first(site, todo, page.prints, previous.prints, first)
            rendered.update(render_records(site, [record_id for record_id in todo if record_id not in rendered]))
        render_compare_page(site)
        render_graph_page(site)
        result.nav = render_index_pages(site, with_changes=render_recent_changes(site))
        site.write(TITLES, titles_script(site))
        if pool is not None and shares is not None:
            for files, digests in shares.get():
                rendered.update(files)
                result.digests.update(digests)
                result.written.extend(rel for written in files.values() for rel in written)
        result.records.update((record_id, (keys[record_id], files)) for record_id, files in rendered.items())
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
            _FORKED = None
        site.close()
    return result

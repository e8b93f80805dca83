"""Render a compiled knowledge base into the docs folder that mkdocs builds: a page per record, and the index pages.

    from flopkb.site.render import render_docs
    result = render_docs(kb, "build/docs")   # kb from compile_knowledge_base(config, CHECK_STAGES)

Layout of the docs folder (each `.md` becomes `.html`, `use_directory_urls: false`):

| path | what |
| --- | --- |
| `index.md` | home: what the base holds, by kind and category |
| `kinds/<kind>.md`, `categories/<term>.md` | an index per kind and per category |
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

from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from flopkb.site.graph import render_graph_page
from flopkb.site.hardware import render_compare_page
from flopkb.site.index import render_index_pages
from flopkb.site.mkdocs import SITE_ROOT
from flopkb.site.pages import RenderResult, Site, environment, template_dirs
from flopkb.site.records import render_records

if TYPE_CHECKING:
    from flopkb.pipeline.compile import KnowledgeBase


# ---------------------------------------------------------------------------
# Record pages in several processes (large bases)

PARALLEL_FROM = 2000
"""Bases of at least this many records render their record pages in worker processes."""
MAX_RENDER_WORKERS = 4

_FORKED: tuple[KnowledgeBase, Path, jinja2.Environment] | None = None
"""What a forked worker renders from: set in the parent just before the fork, inherited by the workers."""


def _render_share(ids: list[str]) -> list[str]:
    """In a worker: render these records' pages (and their charts); return the files written."""
    assert _FORKED is not None
    kb, docs_dir, env = _FORKED
    site = Site(kb, docs_dir, env)
    try:
        render_records(site, ids)
    finally:
        site.close()
    return site.result.written


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


def render_docs(
    kb: KnowledgeBase,
    docs_dir: str | Path,
    *,
    template_root: Path | None = None,
    site_root: Path = SITE_ROOT,
    parallel: bool = True,
) -> RenderResult:
    """Write every page, chart and data file of the site into `docs_dir` (which should be empty) and return the nav.

    With `parallel` (the default), a base of PARALLEL_FROM records or more renders its record pages in
    worker processes (`render_workers`)."""
    global _FORKED
    root = template_root if template_root is not None else kb.config.root
    env = environment(template_dirs(root, site_root))
    site = Site(kb, Path(docs_dir), env)
    site.docs_dir.mkdir(parents=True, exist_ok=True)
    workers = render_workers(len(site.entries)) if parallel else 0
    pool = shares = None
    if workers:
        # Record pages are independent of each other: a large base renders them in forked workers (which
        # inherit the compiled base) while this process writes the index pages. Forked before this process
        # starts its writer threads. Each page's bytes do not depend on which process wrote it.
        import multiprocessing

        ids = sorted(site.entries)
        _FORKED = (kb, site.docs_dir, env)
        pool = multiprocessing.get_context("fork").Pool(workers)
        shares = pool.map_async(_render_share, [ids[start::workers] for start in range(workers)])
    try:
        if pool is None:
            render_records(site)
        render_compare_page(site)
        render_graph_page(site)
        site.result.nav = render_index_pages(site)
        if pool is not None and shares is not None:
            for written in shares.get():
                site.result.written.extend(written)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
            _FORKED = None
        site.close()
    return site.result

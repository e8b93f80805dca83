"""The site pages whose content a change alters, told by the site's own page keys (`flopkb.site.keys`).

A record page's key is made of everything the page reads: the record's
fingerprint (content digest and dependency key), its neighbours' faces, the
records computing with it, its evidence. Keys are computed, on both sides,
only for the records whose page can differ: those whose fingerprint
differs, and the records that read them (graph neighbours on either side,
the accelerators and evidence they compute with). Both sides are keyed under
one base key, so a page counts as changed when something it shows of the
records differs, not when flopkb's code or templates do.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jinja2

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.memo import reached
from flopkb.review.matching import Matching
from flopkb.site.keys import fingerprint, record_key
from flopkb.site.pages import Site

_BASE = "flopkb diff"


def changed_pages(match: Matching, changed: set[str], removed: set[str]) -> tuple[str, ...]:
    """Head ids of the records whose page differs, and the removed records (their page is gone), sorted."""
    with _site(match.base) as base, _site(match.head) as head:
        moved = {
            record_id
            for record_id in head.entries
            if match.old(record_id) not in base.entries
            or fingerprint(head, record_id) is None
            or fingerprint(head, record_id) != fingerprint(base, match.old(record_id))
        }
        moved |= {match.new(record_id) for record_id in removed}
        readers = set(moved)
        for record_id in moved:
            readers.update(_neighbours(head, record_id))
            readers.update(match.new(other) for other in _neighbours(base, match.old(record_id)))
            readers.update(reached(match.head, record_id) or ())
            readers.update(match.new(other) for other in reached(match.base, match.old(record_id)) or ())
        pages = set(removed) | (changed & head.entries.keys())
        for record_id in readers & head.entries.keys():
            old = match.old(record_id)
            if old not in base.entries:
                pages.add(record_id)
                continue
            mine, _ = record_key(head, record_id, _BASE)
            if mine is None or mine != record_key(base, old, _BASE)[0]:
                pages.add(record_id)
    return tuple(sorted(pages))


def _neighbours(site: Site, record_id: str) -> Iterator[str]:
    graph = site.graph
    if graph is not None and record_id in graph:
        yield from graph.succ[record_id]
        yield from graph.pred[record_id]


@contextmanager
def _site(kb: KnowledgeBase) -> Iterator[Site]:
    """The site's view of a base, to compute keys with: nothing is rendered or written."""
    with tempfile.TemporaryDirectory(prefix="flopkb-diff-site-") as folder:
        site = Site(kb, Path(folder), jinja2.Environment(autoescape=True))
        try:
            yield site
        finally:
            site.close()

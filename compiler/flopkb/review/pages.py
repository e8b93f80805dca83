"""The site pages whose content a change alters, told from what a record page's key reads (`flopkb.site.keys`).

A record page's key is made of the record's fingerprint (content digest and
dependency key), its neighbours in the link graph and their *faces* (what a
page shows of the records it links to or from), the fingerprints of the
records whose formulas are evaluated on it (an accelerator's page), and its
evidence (the records resting on its figures). So a page can change only if:

- its record's fingerprint changed, or the record is new (or gone);
- it is reached by a record whose fingerprint changed (an accelerator the
  record computes with, a figure its evidence rests on);
- a neighbour, on either side, is a record whose face changed (a face shows the
  record's links too: an unedited record whose link now resolves elsewhere has
  a new face), or was added or removed, or a link to or from it was added or
  removed.

These are the records listed; the others' keys are equal on both sides, so
nothing needs computing for them (a property test holds that every record
whose key differs is listed). The list can hold a page whose markdown comes
out the same: a key is a bound, not a rendering.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import jinja2

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.memo import reached
from flopkb.review.matching import Matching
from flopkb.review.model import LinkChanges
from flopkb.site.keys import face, fingerprint
from flopkb.site.pages import Site


def changed_pages(match: Matching, links: LinkChanges) -> tuple[str, ...]:
    """Head ids of the records whose page may differ, and the removed records (their page is gone), sorted."""
    removed = match.removed()
    with site_of(match.base) as base, site_of(match.head) as head:
        moved = {
            record_id
            for record_id in head.entries
            if match.old(record_id) not in base.entries
            or fingerprint(head, record_id) is None
            or fingerprint(head, record_id) != fingerprint(base, match.old(record_id))
        }
        pages = moved | set(removed)
        for record_id in moved:
            pages.update(reached(match.head, record_id) or ())
            pages.update(map(match.new, reached(match.base, match.old(record_id)) or ()))
        relinked = {source for source, _ in (*links.added, *links.removed) if source in head.entries}
        for record_id in sorted(relinked | (set(match.edited()) - set(match.added()))):
            if match.old(record_id) not in base.entries or face(head, record_id) != face(base, match.old(record_id)):
                pages.update(_neighbours(head, record_id), map(match.new, _neighbours(base, match.old(record_id))))
        for record_id in match.added():
            pages.update(_neighbours(head, record_id))
        for record_id in removed:
            pages.update(map(match.new, _neighbours(base, record_id)))
        pages.update(_ends(links.added), _ends(links.removed))
    return tuple(sorted(pages & (head.entries.keys() | set(removed))))


def _ends(edges: Iterable[tuple[str, str]]) -> Iterator[str]:
    for source, target in edges:
        yield source
        yield target


def _neighbours(site: Site, record_id: str) -> Iterator[str]:
    graph = site.graph
    if graph is not None and record_id in graph:
        yield from graph.succ[record_id]
        yield from graph.pred[record_id]


@contextmanager
def site_of(kb: KnowledgeBase) -> Iterator[Site]:
    """The site's view of a base, for its keys: nothing is rendered or written."""
    with tempfile.TemporaryDirectory(prefix="flopkb-diff-site-") as folder:
        site = Site(kb, Path(folder), jinja2.Environment(autoescape=True))
        try:
            yield site
        finally:
            site.close()

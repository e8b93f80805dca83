"""The site pages whose content a change alters, told from what a record page's key reads
(`flopkb.site.incremental.keys`).

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

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.memo import dependency_key, reached
from flopkb.review.matching import Matching
from flopkb.review.model import LinkChanges
from flopkb.site.incremental.keys import face

if TYPE_CHECKING:
    from flopkb.site.pages.common import Site


def changed_pages(match: Matching, links: LinkChanges) -> tuple[str, ...]:
    """Head ids of the records whose page may differ, and the removed records (their page is gone), sorted."""
    removed = match.removed()
    base, head = _KeyView(match.base), _KeyView(match.head)
    moved = {record_id for record_id in match.head.entries if _moved(match, record_id)}
    pages = moved | set(removed)
    for record_id in moved:
        pages.update(reached(match.head, record_id) or ())
        pages.update(map(match.new, reached(match.base, match.old(record_id)) or ()))
    relinked = {source for source, _ in (*links.added, *links.removed) if source in match.head.entries}
    for record_id in sorted(relinked | (set(match.edited()) - set(match.added()))):
        if match.old(record_id) not in match.base.entries or head.face(record_id) != base.face(match.old(record_id)):
            pages.update(head.neighbours(record_id), map(match.new, base.neighbours(match.old(record_id))))
    for record_id in match.added():
        pages.update(head.neighbours(record_id))
    for record_id in removed:
        pages.update(map(match.new, base.neighbours(record_id)))
    pages.update(_ends(links.added), _ends(links.removed))
    return tuple(sorted(pages & (match.head.entries.keys() | set(removed))))


def _moved(match: Matching, record_id: str) -> bool:
    """Whether the record's fingerprint (`flopkb.site.incremental.keys.fingerprint`: its digest and dependency key)
    differs, or is not known; compared as the keys themselves, not their digests."""
    old = match.old(record_id)
    before, after = match.base.entries.get(old), match.head.entries[record_id]
    if before is None or before.digest is None or after.digest is None:
        return True
    key = dependency_key(match.head, record_id)
    return key is None or key != dependency_key(match.base, old)


def _ends(edges: Iterable[tuple[str, str]]) -> Iterator[str]:
    for source, target in edges:
        yield source
        yield target


class _KeyView:
    """What the page keys read of one base: faces (`flopkb.site.incremental.keys.face`, which reads a site's `kb`
    and `cache` only: no `Site` is built, so neither is the networkx graph), and neighbours from the graph's
    edges."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.cache: dict[str, Any] = {}
        self._linked_from: dict[str, set[str]] | None = None

    def face(self, record_id: str) -> str:
        return face(cast("Site", self), record_id)

    def neighbours(self, record_id: str) -> set[str]:
        if self._linked_from is None:
            self._linked_from = {}
            for source, edges in self.kb.edges.items():
                for edge in edges:
                    self._linked_from.setdefault(edge[0], set()).add(source)
        return {edge[0] for edge in self.kb.edges.get(record_id, ())} | self._linked_from.get(record_id, set())

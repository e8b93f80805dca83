"""Keys for stage results kept in `Entry.derived` that depend on other files than their own.

The load cache (`flopkb.pipeline.cache`) keeps what a stage puts in a file's
`Entry.derived` for as long as that file is unchanged. That is enough for
what depends on the file alone (its links as written, its spec problems,
its own evidence debt), but a record's inherited evidence debt and its
formulas' results also depend on other records: the ones it computes with.
Those are exactly the records its *computing references* resolve to:

- `values_for`, `affected_by_hardware`, formula `hardware` and `expect`
  `hardware`: the accelerators whose specs its rows, formulas and claims use;
- formula `ref`: the record whose formula it borrows, and through that
  record's own computing references, whatever that formula computes with
  (chains of refs are followed).

Prose links and `sources` are not followed: mentioning a record, or citing
one, is not computing with it.

`dependency_key(kb, id)` is made of every such reference, as written and as
it resolves today, of the content digest of every record it reaches, and of
the key of every record whose formula it borrows. A stage keeps its result
for a record together with this key, and takes it back only while the key
is the same: if any record it computes with changed, or any of its
references now resolves elsewhere, the key differs and the result is
computed again. A record on a cycle of formula refs, or one whose references
are not known (its links were not kept: see `flopkb.links.cached.link_all`), has
no key (None): its results are always computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flopkb.links.cached import RESOLVED
from flopkb.links.resolver import Resolver

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase

_FOLLOWED = "formula-ref"
Key = tuple[Any, ...]


def dependency_key(kb: KnowledgeBase, record_id: str) -> Key | None:
    """The key of what `record_id`'s evidence and formulas read of other records (see the module), or None."""
    keys = kb.dependency_keys
    if keys is None:
        keys = kb.dependency_keys = _Keys(kb)
    return keys.get(record_id)


def carry_keys(previous: KnowledgeBase, kb: KnowledgeBase) -> None:
    """Give `kb` (before its stages run) the keys `previous`, another version of the same base, has computed and that
    cannot differ in `kb`: those of the records whose file, and every file their key reaches, have the same digest,
    while every id, kind and alias is the same (the resolver's signature), so that every reference resolves as it
    did. Two sides of a diff compute each key once, not twice; the others are computed when asked for, as ever."""
    before: _Keys | None = previous.dependency_keys
    if before is None or before.signature != Resolver.of(kb).signature:
        return
    entries, old = kb.entries, previous.entries
    changed = {
        record_id
        for record_id, entry in entries.items()
        if entry.digest is None or (was := old.get(record_id)) is None or was.digest != entry.digest
    }
    keys = _Keys(kb)
    for record_id, key in before.keys.items():
        if key is not None and record_id not in changed:
            reaches = before.reached[record_id]
            if reaches.isdisjoint(changed):
                keys.keys[record_id] = key
                keys.reached[record_id] = reaches
    kb.dependency_keys = keys


def reached(kb: KnowledgeBase, record_id: str) -> frozenset[str] | None:
    """The other records `record_id`'s dependency key is made of (what it computes with, through chains of formula
    refs), or None when it has no key."""
    if dependency_key(kb, record_id) is None:
        return None
    keys: _Keys = kb.dependency_keys
    return keys.reached[record_id]


class _Keys:
    """The dependency keys of one knowledge base, each computed once.

    A record's computing references, and what they resolve to, are those the
    link stage kept (`flopkb.links.cached.RESOLVED`) under the resolver's current
    signature: no reference is resolved again here.
    """

    _ON_STACK: Any = object()

    def __init__(self, kb: KnowledgeBase) -> None:
        self.entries = kb.entries
        self.signature = Resolver.of(kb).signature
        self.keys: dict[str, Key | None] = {}
        self.reached: dict[str, frozenset[str]] = {}

    def get(self, record_id: str) -> Key | None:
        key = self.keys.get(record_id, self)
        if isinstance(key, _Keys):  # not computed yet
            return self._compute(record_id)
        return None if key is self._ON_STACK else key  # on the stack: a cycle of formula refs, which has no key

    def _compute(self, record_id: str) -> Key | None:
        keys = self.keys
        entry = self.entries.get(record_id)
        if entry is None or entry.digest is None:
            keys[record_id] = None
            return None
        if entry.source is None:
            computing: tuple[tuple[str, str, str | None], ...] = ()  # no data, no references
        else:
            kept = entry.derived.get(RESOLVED)
            if kept is None or kept[0] != self.signature:
                keys[record_id] = None  # not linked under this signature: unknown
                return None
            computing = kept[3]
        keys[record_id] = self._ON_STACK
        key: list[Any] = [entry.digest]
        reached: set[str] = set()
        for origin, target, resolved in computing:
            key += (origin, target, resolved)
            if resolved is None or resolved == record_id:
                continue  # its own formulas are its own file
            part = self.get(resolved) if origin == _FOLLOWED else self.entries[resolved].digest
            if part is None:
                keys[record_id] = None
                return None
            key.append(part)
            reached.add(resolved)
            if origin == _FOLLOWED:
                reached |= self.reached[resolved]
        reached.discard(record_id)
        self.reached[record_id] = frozenset(reached)
        found = keys[record_id] = tuple(key)
        return found

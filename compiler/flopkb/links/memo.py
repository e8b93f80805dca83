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

from flopkb.links.cached import COMPUTING_ORIGINS, RESOLVED
from flopkb.links.resolver import Resolver

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from flopkb.kb.knowledge_base import KnowledgeBase
    from flopkb.links.extract import Link

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


def keys_from_links(kb: KnowledgeBase, previous: KnowledgeBase | None = None, changed: Collection[str] = ()) -> None:
    """Give `kb`, whose link stage kept nothing in `Entry.derived` (it ran without digests: a diff's lean first side,
    `flopkb.review.reuse`), dependency keys computed from its links (`kb.links`), for the entries that have a digest
    now. With `previous` (another version of the same base, under the same resolver signature, whose keys are also
    computed so) and `changed` (the ids whose file differs from `previous`'s), a key is carried from `previous`,
    when first asked for, for every record that is not changed and reaches no changed record, as `carry_keys` does."""
    keys = _Keys(kb, kb.links)
    if previous is not None:
        before: _Keys | None = previous.dependency_keys
        assert before is not None and before.signature == keys.signature, "keys carried under another signature"
        keys.previous, keys.changed = before, frozenset(changed)
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

    def __init__(self, kb: KnowledgeBase, links: Mapping[str, list[Link]] | None = None) -> None:
        self.entries = kb.entries
        self.signature = Resolver.of(kb).signature
        self.keys: dict[str, Key | None] = {}
        self.reached: dict[str, frozenset[str]] = {}
        self.links = links
        """A record's links, from which its computing references are read when the link stage kept none
        (`keys_from_links`)."""
        self.previous: _Keys | None = None
        """Keys of another version of the base to carry (`keys_from_links`), and the ids whose file differs from it."""
        self.changed: frozenset[str] = frozenset()

    def get(self, record_id: str) -> Key | None:
        key = self.keys.get(record_id, self)
        if isinstance(key, _Keys):  # not computed yet
            previous = self.previous
            if previous is not None and record_id not in self.changed:
                key = previous.get(record_id)
                reaches = previous.reached.get(record_id)
                if key is not None and reaches is not None and reaches.isdisjoint(self.changed):
                    self.keys[record_id], self.reached[record_id] = key, reaches
                    return key
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
        elif self.links is not None:
            links = self.links.get(record_id, ())
            computing = tuple(
                (link.origin, link.target, link.resolved) for link in links if link.origin in COMPUTING_ORIGINS
            )
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

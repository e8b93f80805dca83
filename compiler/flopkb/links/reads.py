"""The records the check stages read to check some records again, so that the stages run over those alone tell the
checked records' diagnostics, evidence and formula results as a check of the whole base does.

Two callers check a few records against a base already checked: the editor's edited buffer first
(`flopkb.editor.focus`) and a prose-only diff's head made from its base (`flopkb.review.reuse`). Besides the records
checked (and whatever else of their links the caller takes in), the stages read:

- the records that claim their aliases: the record of that id and the alias's first owner, which a `duplicate-id`
  warning is told by (`flopkb.pipeline.compile.knowledge_base_of`);
- one record that links to each, which tells it is no orphan: a whole check counts every other record's links;
- every record those compute with, through chains of computing references (`COMPUTING_ORIGINS`,
  `flopkb.links.memo`): what their evidence and formulas read, so that each record's keyed results are a whole
  check's.

Each caller knows a record's links its own way (what the link stage kept of each file, `RESOLVED`, or its links
found now; a base's `links`), and passes them in as callables.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable
from typing import TYPE_CHECKING

from flopkb.links.cached import COMPUTING_ORIGINS

if TYPE_CHECKING:
    from flopkb.kb.entry import Entry
    from flopkb.links.extract import Link
    from flopkb.links.resolver import Resolver


def records_read(
    checked: Collection[Entry],
    resolver: Resolver,
    referenced: Container[str] | None,
    referencer: Callable[[str], str | None],
    computes_with: Callable[[str], Iterable[str] | None],
    reached: Iterable[str] = (),
) -> set[str] | None:
    """The ids of the records the stages read to check `checked` (as edited) with the whole base's `resolver`: them,
    `reached`, the claimants of their aliases, a record that links to each, and every record all of those compute
    with; None when that is not known.

    `referenced`: the ids some other record links to, when known (a base whose link stage has run). A record not
    among them needs no record that links to it; one among them for which `referencer` (a record that links to an
    id, or None) finds none is not known: the records that link to it are ones whose links the caller does not know.
    Without `referenced`, a record `referencer` finds none for is an orphan.
    `computes_with`: the ids a record's computing references resolve to, None when not known; asked of every record
    taken in, `checked` too."""
    wanted = {entry.id for entry in checked}
    wanted.update(reached)
    for entry in checked:
        for alias in entry.summary.aliases:
            if alias in resolver.ids:
                wanted.add(alias)
            if alias in resolver.aliases:
                wanted.add(resolver.aliases[alias])
        if referenced is None or entry.id in referenced:
            found = referencer(entry.id)
            if found is not None:
                wanted.add(found)
            elif referenced is not None:
                return None
    unread = list(wanted)
    while unread:
        found_with = computes_with(unread.pop())
        if found_with is None:
            return None
        for other in found_with:
            if other not in wanted:
                wanted.add(other)
                unread.append(other)
    return wanted


def first_referencer(
    record_id: str, records: Iterable[str], reaches: Callable[[str], Container[str | None] | None]
) -> str | None:
    """The first of `records` other than `record_id` whose links reach it, or None. `reaches`: what a record's links
    resolve to, None when not known (that record is passed over).

    The first is enough to tell it is no orphan; an orphan costs a walk of every record, which `records_read` spares
    where the base tells which records are linked to (`referenced`)."""
    for other in records:
        if other != record_id:
            found = reaches(other)
            if found is not None and record_id in found:
                return other
    return None


def computing_targets(links: Iterable[Link]) -> list[str]:
    """The ids that the computing references among `links` resolve to."""
    return [link.resolved for link in links if link.origin in COMPUTING_ORIGINS and link.resolved is not None]

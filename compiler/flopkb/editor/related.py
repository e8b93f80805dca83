"""The second places of a problem (`relatedInformation`): what an editor lets the author jump to from a diagnostic.

- `ambiguous-link`: the `id` of each record the target matches;
- `duplicate-id`: the file that already has the id;
- `measurement-disagrees`: the measurement in its source that the claim disagrees with;
- `unverified-basis`: each claim (a row or formula of another record) that computes with the unverified figure,
  as the evidence stage traced it (`kb.evidence`): where the debt goes.

They are read from the compiled base (its links, resolver and sources) at
the diagnostic's place, never from its words.
"""

from __future__ import annotations

from collections.abc import Iterator

from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.resolver import Resolver
from flopkb.load.models import measurements_of
from flopkb.load.validate import expected_id
from flopkb.report.diagnostics import Diagnostic

Place = tuple[str, int, int, str]
"""(path, line, column, what is there) of a related place."""


def related_places(kb: KnowledgeBase, diagnostic: Diagnostic) -> list[Place]:
    if diagnostic.code == "ambiguous-link":
        return list(_candidates(kb, diagnostic))
    if diagnostic.code == "duplicate-id":
        return list(_owner(kb, diagnostic))
    if diagnostic.code == "measurement-disagrees":
        return list(_measurements(kb, diagnostic))
    if diagnostic.code == "unverified-basis":
        return list(_resting_on(kb, diagnostic))
    return []


def _entry_at(kb: KnowledgeBase, path: str) -> Entry | None:
    return next((entry for entry in kb.entries.values() if entry.path == path), None)


def _id_place(entry: Entry, what: str) -> Place:
    line, column = entry.source.position(("id",)) if entry.source is not None and "id" in entry.source.data else (1, 1)
    return entry.path, line, column, what


def _candidates(kb: KnowledgeBase, diagnostic: Diagnostic) -> Iterator[Place]:
    entry = _entry_at(kb, diagnostic.path)
    if entry is None:
        return
    resolver = Resolver.of(kb)
    for link in kb.links_of(entry.id):
        if link.position == (diagnostic.line, diagnostic.column):
            for candidate in resolver.resolve(link.target).candidates:
                if candidate in kb.entries:
                    yield _id_place(kb.entries[candidate], f"'{link.target}' matches {candidate}")
            return


def _owner(kb: KnowledgeBase, diagnostic: Diagnostic) -> Iterator[Place]:
    entry = _entry_at(kb, diagnostic.path)
    if entry is None:  # a second file of one id: not loaded; the first one is
        first = kb.entries.get(expected_id(diagnostic.path, kb.config.records))
        if first is not None:
            yield _id_place(first, f"{first.path} has the id {first.id}")
        return
    if entry.source is None:
        return
    for index, alias in enumerate(entry.summary.aliases):  # an alias claimed twice: who else claims it
        if entry.source.position(("aliases", index)) == (diagnostic.line, diagnostic.column):
            for other in kb.entries.values():
                if other is not entry and (other.id == alias or alias in other.summary.aliases):
                    yield _id_place(other, f"{other.id} claims '{alias}' too")
                    return


def _measurements(kb: KnowledgeBase, diagnostic: Diagnostic) -> Iterator[Place]:
    entry = _entry_at(kb, diagnostic.path)
    if entry is None:
        return
    for link in kb.links_of(entry.id):
        if link.position[0] != diagnostic.line or link.anchor is None or link.resolved not in kb.entries:
            continue
        source = kb.entries[link.resolved]
        if source.record is None or source.source is None:
            continue
        for index, measurement in enumerate(measurements_of(source.record)):
            if measurement.id == link.anchor:
                line, column = source.source.position(("measurements", index))
                yield source.path, line, column, f"the measurement {link.resolved}#{link.anchor}"


def _resting_on(kb: KnowledgeBase, diagnostic: Diagnostic) -> Iterator[Place]:
    if kb.evidence is None:
        return
    where = (diagnostic.path, diagnostic.line, diagnostic.column)
    item = next((item for item in kb.evidence.debt if (item.file, item.line, item.column) == where), None)
    if item is None:
        return
    for record_id in kb.evidence.dependents.get(item, ()):
        user = kb.entries.get(record_id)
        if user is None or user.source is None:
            continue
        for debt in kb.evidence.of(record_id).inherited:
            if debt.item == item:
                line, column = user.source.position(debt.claim)
                yield (
                    user.path,
                    line,
                    column,
                    f"{_claim_name(user, debt.claim)} computes with {item.record} {item.label}",
                )


def _claim_name(entry: Entry, claim: tuple[str | int, ...]) -> str:
    """`facts/ridge#ridge` for a formula, `flops/x hardware_parameters[0]` for a row."""
    field, index = claim[0], claim[1]
    formula_ids = entry.summary.formula_ids or ()
    if field == "formulas" and isinstance(index, int) and index < len(formula_ids):
        return f"{entry.id}#{formula_ids[index]}"
    written = entry.source.written(claim[:2]) if entry.source is not None else claim  # the index the file has
    return f"{entry.id} {field}[{written[1]}]"

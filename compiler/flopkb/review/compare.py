"""Two compiled sides compared: the report of `flopkb diff` (`flopkb.review.model`).

Records are matched by id; a record that `flopkb mv` renamed is matched by
the alias it leaves (its old id), so its values and claims compare with its
old self. A record's formulas are evaluated on both sides only when its
*fingerprint* differs: its content digest or its dependency key
(`flopkb.links.memo`), the records it computes with as they resolve today
and their digests. While both are the same, nothing it computes with
changed, so nothing it computes did. A record whose own file changed but whose
formulas and hardware references did not (a prose edit) is not evaluated
either. So a prose edit evaluates nothing, and a spec edit evaluates the
formulas that compute with that accelerator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flopkb.formulas.results import Claim, FormulaResult
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.memo import dependency_key
from flopkb.links.resolver import Resolver
from flopkb.load.models import formulas_of
from flopkb.review.causes import Attribution, computing_part, record_place, spec_changes
from flopkb.review.diagnostics import diagnostic_changes
from flopkb.review.git import Comparison, Revision
from flopkb.review.matching import Matching
from flopkb.review.model import (
    ClaimChange,
    Commit,
    EvidenceChange,
    LinkChanges,
    Place,
    RecordList,
    Rename,
    Report,
    ValueChange,
)
from flopkb.review.pages import changed_pages
from flopkb.review.points import evaluations_of, point_text, relative_change, same
from flopkb.review.sides import Side


def compare(base: Side, head: Side, comparison: Comparison) -> Report:
    """The report of everything that differs between the sides (see the module)."""
    match = Matching(base.kb, head.kb)
    edited, added, removed = match.edited(), match.added(), match.removed()
    changed = set(edited) | set(added)
    same_settings = repr(base.kb.vocabulary) == repr(head.kb.vocabulary)
    attribution = Attribution(match, changed, removed, spec_changes(match), same_settings)
    evaluate = _to_evaluate(match, same_settings)
    values: list[ValueChange] = []
    claims: list[ClaimChange] = []
    for record_id in evaluate:
        before = _results(base.kb, match.old(record_id))
        after = _results(head.kb, record_id)
        for formula_id in dict.fromkeys([*before, *after]):
            old, new = before.get(formula_id), after.get(formula_id)
            values.extend(_value_changes(match, attribution, record_id, formula_id, old, new))
            claims.extend(_claim_changes(match, attribution, record_id, formula_id, old, new))
    for record_id in match.removed():
        for result in _results(base.kb, record_id).values():
            values.extend(_value_changes(match, attribution, record_id, result.id, result, None))
            claims.extend(_claim_changes(match, attribution, record_id, result.id, result, None))
    named = comparison.named
    links = _link_changes(match)
    return Report(
        base=_commit(comparison.base),
        head=_commit(comparison.head),
        named_base=_commit(named) if named.sha != comparison.base.sha else None,
        fell_back=comparison.fell_back,
        claims=tuple(change for change in claims if change.measured is None),
        agreement=tuple(change for change in claims if change.measured is not None),
        causes=attribution.causes(values),
        values=tuple(values),
        evidence=tuple(_evidence_changes(match, attribution)),
        **diagnostic_changes(match, base.kb.diagnostics, head.kb.diagnostics),
        records=RecordList(
            added=tuple(added),
            removed=tuple(removed),
            renamed=tuple(Rename(old, new, head.kb.entries[new].path) for old, new in sorted(match.renamed.items())),
            edited=tuple(record_id for record_id in edited if record_id not in match.old_of),
        ),
        links=links,
        pages=changed_pages(match, links),
        files={
            **{record_id: base.kb.entries[record_id].path for record_id in removed},
            **{record_id: head.kb.entries[record_id].path for record_id in sorted(changed)},
        },
        places={
            record_id: place
            for record_id in sorted({change.record for change in values})
            if (place := record_place(head.kb, record_id) or record_place(base.kb, record_id)) is not None
        },
        evaluated=len(evaluate),
    )


def _commit(revision: Revision) -> Commit:
    return Commit(revision.label, revision.sha)


def _to_evaluate(match: Matching, same_settings: bool) -> list[str]:
    """Head records with formulas whose fingerprint differs from their base record's (see the module)."""
    found = []
    for record_id in match.head.formulas:
        old = match.old(record_id)
        if old not in match.base.formulas or not same_settings or _fingerprint_differs(match, old, record_id):
            found.append(record_id)
    found += [match.new(old) for old in match.base.formulas if match.new(old) not in match.head.formulas]
    return sorted(set(found) - set(match.removed()))


def _fingerprint_differs(match: Matching, old: str, new: str) -> bool:
    """Whether what a record's formulas compute with may differ: its dependency key, or its own digest, unless only
    prose changed (its formulas and hardware references are equal)."""
    before, after = match.base.entries[old], match.head.entries[new]
    key, their_key = dependency_key(match.head, new), dependency_key(match.base, old)
    if key is None or their_key is None or before.digest is None:
        return True
    if before.digest == after.digest:
        return key != their_key
    return key[1:] != their_key[1:] or computing_part(before.record) != computing_part(after.record)


def _results(kb: KnowledgeBase, record_id: str) -> dict[str, FormulaResult]:
    if record_id not in kb.formulas:
        return {}
    return {result.id: result for result in kb.formulas[record_id]}


def _value_changes(
    match: Matching,
    attribution: Attribution,
    record_id: str,
    formula_id: str,
    old: FormulaResult | None,
    new: FormulaResult | None,
) -> Iterator[ValueChange]:
    before = evaluations_of(old, match.new)
    after = evaluations_of(new, lambda hardware: hardware)
    for where in dict.fromkeys([*before, *after]):
        was, now = before.get(where), after.get(where)
        if was is not None and now is not None and same(was, now):
            continue
        shown = now or was
        assert shown is not None
        hardware = where[0]
        yield ValueChange(
            record=record_id,
            formula=formula_id,
            hardware=hardware,
            point=shown[2],
            unit=shown[1],
            before=None if was is None else was[0],
            after=None if now is None else now[0],
            relative=relative_change(was, now),
            causes=attribution.causes_of(record_id, hardware, old, new),
        )


def _claim_changes(
    match: Matching,
    attribution: Attribution,
    record_id: str,
    formula_id: str,
    old: FormulaResult | None,
    new: FormulaResult | None,
) -> Iterator[ClaimChange]:
    before = _claims_as_written(match.base, match.old(record_id), old)
    after = _claims_as_written(match.head, record_id, new)
    for index in sorted(before.keys() | after.keys()):
        was, now = before.get(index), after.get(index)
        if was is not None and now is not None and was.status == now.status:
            continue
        shown = now or was
        assert shown is not None
        rename = str if now is not None else match.new
        hardware = None if shown.hardware is None else rename(shown.hardware)
        kb = match.head if now is not None else match.base
        yield ClaimChange(
            record=record_id,
            formula=formula_id,
            index=index,
            measured=shown.measured_ref,
            hardware=hardware,
            where=point_text(shown.where),
            before=None if was is None else was.status,
            after=None if now is None else now.status,
            before_value=None if was is None else was.computed,
            after_value=None if now is None else now.computed,
            stated=shown.stated_text,
            place=_claim_place(kb, record_id if now is not None else match.old(record_id), formula_id, index),
            because=_claim_because(attribution, record_id, hardware, shown, rename, (old, new)),
            stated_before=None if was is None else was.stated_text,
        )


def _claim_because(
    attribution: Attribution,
    record_id: str,
    hardware: str | None,
    claim: Claim,
    rename: Callable[[str], str],
    results: tuple[FormulaResult | None, FormulaResult | None],
) -> tuple[str, ...]:
    """The edited records among the causes of a claim's verdict: a value's causes (`flopkb.review.causes`), and the
    source of the measurement it names."""
    measured = () if claim.measurement is None else (rename(claim.measurement.source),)
    return attribution.edited_records(attribution.causes_of(record_id, hardware, *results, measured))


def _claims_as_written(kb: KnowledgeBase, record_id: str, result: FormulaResult | None) -> dict[int, Claim]:
    """The claims of `result` by their index in the file: a claim that validation left out shifts the others'
    indexes in the model (`flopkb.load.omitted`), so that the claims of two sides are paired as the files have them."""
    if result is None:
        return {}
    formula = _formula_path(kb, record_id, result.id)
    source = kb.entries[record_id].source if formula is not None else None
    if formula is None or source is None:
        return {claim.index: claim for claim in result.claims}
    return {int(source.written((*formula, "expect", claim.index))[-1]): claim for claim in result.claims}


def _formula_path(kb: KnowledgeBase, record_id: str, formula_id: str) -> tuple[str, int] | None:
    """The data path of the formula `formula_id` of the record `record_id`: ("formulas", i)."""
    entry = kb.entries.get(record_id)
    if entry is None or entry.source is None or entry.record is None:
        return None
    return next(
        (("formulas", at) for at, formula in enumerate(formulas_of(entry.record)) if formula.id == formula_id), None
    )


def _claim_place(kb: KnowledgeBase, record_id: str, formula_id: str, index: int) -> Place | None:
    """Where the claim of index `index` in the file stands."""
    formula = _formula_path(kb, record_id, formula_id)
    source = kb.entries[record_id].source if formula is not None else None
    if formula is None or source is None:
        return None
    path = source.view((*source.written(formula), "expect", index))
    return None if path is None else Place(source.path, source.position(path)[0])


def _evidence_changes(match: Matching, attribution: Attribution) -> Iterator[EvidenceChange]:
    base, head = match.base.evidence, match.head.evidence
    if base is None or head is None:
        return
    for record_id in sorted(match.head.entries):
        old = match.old(record_id)
        if old not in match.base.entries or match.head.entries[record_id].summary.kind is None:
            continue
        before, after = base.of(old).status, head.of(record_id).status
        if before != after:
            because = () if record_id in attribution.changed else attribution.edits_reaching(record_id)
            yield EvidenceChange(record_id, before, after, record_place(match.head, record_id), because)


def _link_changes(match: Matching) -> LinkChanges:
    """Edges added and removed, and new orphans. While no id or alias changed and nothing was renamed, every link
    resolves as it did, so only the edited, added and removed records' edges can differ."""
    if match.renamed or Resolver.of(match.base).signature != Resolver.of(match.head).signature:
        before = {(match.new(source), edge[0]) for source, edges in match.base.edges.items() for edge in edges}
        before = {(source, match.new(target)) for source, target in before}
        after = {(source, edge[0]) for source, edges in match.head.edges.items() for edge in edges}
    else:
        touched = [*match.edited(), *match.added(), *match.removed()]
        before = {(source, edge[0]) for source in touched for edge in match.base.edges_of(source)}
        after = {(source, edge[0]) for source in touched for edge in match.head.edges_of(source)}
    orphans_before = {match.new(record_id) for record_id in _orphans(match.base)}
    return LinkChanges(
        added=tuple(sorted(after - before)),
        removed=tuple(sorted(before - after)),
        new_orphans=tuple(sorted(set(_orphans(match.head)) - orphans_before)),
    )


def _orphans(kb: KnowledgeBase) -> list[str]:
    return kb.graph.orphans() if kb.graph is not None else []

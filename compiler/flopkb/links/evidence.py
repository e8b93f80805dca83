"""Evidence: unverified figures reported, missing sources caught, and evidence debt as data.

Diagnostics (spec "Evidence"): a `hardware_parameters` row or an accelerator
spec whose basis is `unverified` is `unverified-basis` (a warning); one whose
basis is `measured`, `vendor-spec` or `cited` without `sources` of its own is
`missing-source` (an error). Both stand at the row's or spec's `basis` line.

Evidence debt goes further, as data on the compiled knowledge base
(`kb.evidence`), not as diagnostics:

- A record's **own debt** is its unverified figures: the unverified rows of
  a flop, the unverified specs of an accelerator.
- A record **depends on** a figure of another record when one of its claims
  computes with it. Dependencies point from the user to the figure, like the
  graph's edges; debt flows the other way, from the figure to its users:
  - a `hardware_parameters` row with parameter P depends on spec P of every
    accelerator in its `values_for`;
  - a formula whose expression uses `hw.P` depends on spec P of every
    accelerator in its hardware scope (`formula_scope`) and of every
    accelerator an `expect` names;
  - a formula with `ref` takes the expression of the formula it refers to
    (following chains), and that formula's hardware when it has none of its
    own, so debt reaches a fact through the flop it borrows a formula from.
  Prose links and `sources` carry no debt: mentioning a record is not
  computing with its figures.
- A record's **inherited debt** is every unverified figure one of its claims
  depends on, each with the path of records it came through (`via`) and the
  claim (`claim`: data path of the row or formula) that rests on it.

`Evidence.records[id].status` is `no-debt` (no unverified figures), `own-debt` (it has
unverified figures of its own) or `inherited-debt` (only inherited), and
`Evidence.debt` is the whole debt list, with `dependents` naming, for every
unverified figure, the records that rest on it.

Measurements are evidence too:

- a claim that names (`measured:`) a measurement whose basis is `simulated`
  rests on a simulator's or a model's output, not a run on hardware:
  `RecordEvidence.simulated` lists such claims of a record;
- a formula that disagrees with the measurement a claim names (the formula
  stage's `measurement-disagrees`) is listed in `Evidence.disagreements`,
  with the records that rest on that formula: those whose formulas take it
  by `ref`. They are read from the formula results (`kb.formulas`) when first
  asked for, as the site does; `check` never asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from flopkb.formulas.results import FormulaResults, Key
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.debt import (
    INHERITED_DEBT,
    NEEDS_SOURCES,
    NO_DEBT,
    OWN_DEBT,
    ROW,
    SPEC,
    DebtItem,
    Disagreement,
    ErratumItem,
    Evidence,
    InheritedDebt,
    RecordEvidence,
    SimulatedClaim,
)
from flopkb.links.errata import check_errata, missing_source
from flopkb.links.memo import dependency_key
from flopkb.links.resolver import Resolver
from flopkb.load.models import Formula, SourceRecord, formulas_of
from flopkb.load.placeholders import may_hold_placeholders, placeholders_in
from flopkb.load.positions import NON_BLANK
from flopkb.load.source import Path
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make

UNVERIFIED = "unverified"
_HW_NAME = re.compile(r"\bhw\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")


def hw_parameters(expr: str | None) -> tuple[str, ...]:
    """The `hw.<parameter>` names an expression uses, in order of first use."""
    if not expr or "hw" not in expr:
        return ()
    return tuple(dict.fromkeys(_HW_NAME.findall(expr)))


def default_scope(record: Any, target: Any) -> list[str]:
    """The spec's default hardware of a formula that uses `hw.`: the record's affected_by_hardware plus every row's
    values_for, resolved, in order."""
    found: dict[str, None] = {}
    fields = record.__dict__  # a field the kind lacks is a missing key here, not a slow AttributeError
    for ref in fields.get("affected_by_hardware", ()):
        resolved = target(ref)
        if resolved is not None:
            found[resolved] = None
    for row in fields.get("hardware_parameters", ()):
        for ref in row.values_for:
            resolved = target(ref)
            if resolved is not None:
                found[resolved] = None
    return list(found)


class _Formulas:
    """Follows formula refs to the expression and hardware a formula computes with."""

    def __init__(self, kb: KnowledgeBase, resolver: Resolver) -> None:
        self.kb = kb
        self.resolver = resolver

    def find(self, record_id: str, formula_id: str) -> Formula | None:
        entry = self.kb.entries.get(record_id)
        if entry is None or entry.record is None:
            return None
        return next((formula for formula in formulas_of(entry.record) if formula.id == formula_id), None)

    def chain(
        self, formula: Formula, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> tuple[str | None, list[str] | None, tuple[str, ...]]:
        """(expression, explicit hardware refs, records that hardware came through) of `formula`, following refs
        (cycles stop)."""
        if formula.ref is None:
            return formula.expr, formula.hardware, ()
        target, _, formula_id = formula.ref.partition("#")
        record_id = self.resolver.target(target)
        if record_id is None or (record_id, formula_id) in seen:
            return None, formula.hardware, ()
        referred = self.find(record_id, formula_id)
        if referred is None:
            return None, formula.hardware, ()
        expr, hardware, via = self.chain(referred, seen | {(record_id, formula_id)})
        if formula.hardware is not None:
            return expr, formula.hardware, ()
        return expr, hardware, ((record_id, *via) if hardware is not None else ())

    def scope(self, record: Any, formula: Formula) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
        """(accelerators in scope, records the hardware came through, hw parameters the expression uses)."""
        expr, hardware, via = self.chain(formula)
        parameters = hw_parameters(expr)
        target = self.resolver.target
        if hardware is not None:
            return [found for ref in hardware for found in [target(ref)] if found is not None], via, parameters
        return (default_scope(record, target) if parameters else []), (), parameters


def formula_scope(kb: KnowledgeBase, record_id: str, formula: Formula) -> tuple[list[str], tuple[str, ...]]:
    """The accelerators a formula of `record_id` computes with, resolved, and the records that choice came through.

    Its own `hardware` if written; else the hardware of the formula it refers
    to (following refs); else, when the expression uses `hw.`, the default of
    the spec, taken from the record that holds the formula.
    """
    scope, via, _ = _Formulas(kb, Resolver.of(kb)).scope(kb.entries[record_id].record, formula)
    return scope, via


def find_disagreements(formulas: FormulaResults) -> tuple[Disagreement, ...]:
    """The disagreeing claims of the formula results, each with the records whose formulas borrow its formula."""
    borrowers: dict[Key, set[str]] = {}
    for record_id, results in formulas.items():
        for result in results:
            for key in result.chain:
                borrowers.setdefault(key, set()).add(record_id)
    return tuple(
        Disagreement(record_id, result.id, claim, tuple(sorted(borrowers.get(result.key, set()) - {record_id})))
        for record_id in sorted(formulas)
        for result in formulas[record_id]
        for claim in result.disagreements
    )


def _simulated(record: Any, kb: KnowledgeBase, target: Callable[[str], str | None]) -> tuple[SimulatedClaim, ...]:
    """The claims of `record` that name a measurement whose basis is `simulated`, in record order."""
    found: list[SimulatedClaim] = []
    for index, formula in enumerate(record.__dict__.get("formulas", ())):
        for row_index, row in enumerate(formula.expect):
            if row.measured is None:
                continue
            name, _, anchor = row.measured.partition("#")
            source_id = target(name)
            entry = kb.entries.get(source_id) if source_id is not None else None
            source = entry.record if entry is not None else None
            if not isinstance(source, SourceRecord):
                continue
            for measurement in source.measurements:
                if measurement.id == anchor:
                    if measurement.basis == "simulated":
                        path = ("formulas", index, "expect", row_index)
                        found.append(SimulatedClaim(path, source.id, anchor, measurement.where))
                    break
    return tuple(found)


OWN_MEMO = "evidence"
"""`Entry.derived` key of a record's own figures: its debt items, its missing-source problems, whether it makes
claims."""
INHERITED_MEMO = "evidence-inherited"
"""`Entry.derived` key of a record's inherited debt, with the `flopkb.links.memo.dependency_key` it was computed
under."""
SIMULATED_MEMO = "evidence-simulated"
"""`Entry.derived` key of a record's claims on simulated measurements, with the dependency key they were found under."""


class OwnEvidence(NamedTuple):
    """What one file says of its own evidence (kept per file in `Entry.derived`)."""

    items: tuple[DebtItem, ...]
    problems: tuple[Diagnostic, ...]
    claims: bool
    """It has rows or formulas: claims that can inherit debt."""
    errata: tuple[ErratumItem, ...] = ()
    cited: bool = False
    draft: bool = False


_NOTHING = OwnEvidence((), (), False)


def _own_figures(record_id: str, entry: Any) -> OwnEvidence:
    """A record's unverified figures, its missing-source, erratum and placeholder problems, whether it has rows or
    formulas (claims that can inherit debt), its errata, whether it cites anything, whether it is a draft."""
    record, source = entry.record, entry.source
    items: list[DebtItem] = []
    problems: list[Diagnostic] = []
    cited = bool(record.sources) or bool(record.__dict__.get("url") or record.__dict__.get("measurements"))

    def figure(path: Path, parameter: str, what: str, basis: str, sources: list[str]) -> None:
        if basis == UNVERIFIED:
            line, column = source.position((*path, "basis"))
            items.append(DebtItem(record_id, path, parameter, what, source.path, line, column, source.written(path)))
        elif basis in NEEDS_SOURCES and not sources and not source.rejects((*path, "sources")):  # else told wrong
            written = source.written(path)
            where = f"specs.{parameter}" if what == SPEC else f"{written[0]}[{written[1]}] ({parameter})"
            problems.append(missing_source(source, (*path, "basis"), where, basis, "unverified"))

    fields = record.__dict__  # pydantic keeps field values here; a missing field is a missing key, not an exception
    rows = fields.get("hardware_parameters")
    if rows:
        for index, row in enumerate(rows):
            figure(("hardware_parameters", index), row.parameter, ROW, row.basis, row.sources)
            cited = cited or bool(row.sources)
    specs = fields.get("specs")
    if specs:
        for parameter, spec in specs.items():
            figure(("specs", parameter), parameter, SPEC, spec.basis, spec.sources)
            cited = cited or bool(spec.sources)
    formulas = fields.get("formulas", ())
    cited = cited or any(row.measured for formula in formulas for row in formula.expect)
    # a formula over hw. computes with accelerator specs, each with its own evidence; borrowing a formula is not citing
    cited = cited or any(hw_parameters(formula.expr) for formula in formulas)
    errata, erratum_problems = check_errata(record_id, record, source)
    problems.extend(erratum_problems)
    drafts: list[tuple[tuple[int, int], str, str]] = []
    for path, text, sentence, offset in placeholders_in(source.data) if may_hold_placeholders(source.text) else []:
        words = source.scalar_map(path, text, NON_BLANK)
        where = words.position(offset) if words is not None else source.position(path)
        what = f"{_dotted(path)} still holds the template's sentence {sentence!r}"
        drafts.append((where, what, "write the record's own words in its place"))
    if specs == {} and source.data.get("specs") == {}:  # the template's `specs: {}`, never filled (not all left out)
        empty = "specs is empty, with no figure for a formula to compute with"
        drafts.append((source.position(("specs",)), empty, _SPECS))
    for (line, column), what, hint in drafts:
        problems.append(make("placeholder", source.path, line, column, f"{what}: the record is a draft", hint))
    return OwnEvidence(tuple(items), tuple(problems), bool(rows or fields.get("formulas")), errata, cited, bool(drafts))


_SPECS = (
    "write its specs in place of `{}`, one parameter of schema/vocabulary.yaml a line, indented below `specs:`, e.g. "
    '`  memory_bandwidth: {value: "3.35 TB/s", basis: vendor-spec, sources: [sources/its-datasheet]}`'
)
"""The hint of an accelerator's empty specs."""


def _dotted(path: Path) -> str:
    """("hardware_parameters", 0, "effect") as `hardware_parameters[0].effect`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _inherited(
    record_id: str, record: Any, spec_debt: dict[tuple[str, str], DebtItem], formulas: _Formulas
) -> tuple[InheritedDebt, ...]:
    """The unverified specs of other records that a record's rows and formulas rest on, sorted."""
    target = formulas.resolver.target
    found: dict[InheritedDebt, None] = {}
    fields = record.__dict__
    for index, row in enumerate(fields.get("hardware_parameters", ())):
        for ref in row.values_for:
            accelerator = target(ref)
            if accelerator is None or accelerator == record_id:
                continue
            item = spec_debt.get((accelerator, row.parameter))
            if item is not None:
                found[InheritedDebt(item, (accelerator,), ("hardware_parameters", index))] = None
    for index, formula in enumerate(fields.get("formulas", ())):
        scope, via, parameters = formulas.scope(record, formula)
        if not parameters:
            continue
        extra = [
            resolved
            for expect in formula.expect
            if expect.hardware
            for resolved in [target(expect.hardware)]
            if resolved is not None and resolved not in scope
        ]
        for accelerator in [*scope, *extra]:
            for parameter in parameters:
                item = spec_debt.get((accelerator, parameter))
                if item is not None and accelerator != record_id:
                    found[
                        InheritedDebt(
                            item, (*via, accelerator) if accelerator in scope else (accelerator,), ("formulas", index)
                        )
                    ] = None
    return tuple(sorted(found))


_T = TypeVar("_T")


def _memoised(kb: KnowledgeBase, entry: Entry, memo: str, compute: Callable[[Entry], _T]) -> _T:
    """`compute(entry)` (which may load its model), kept in the entry's `derived` data under `memo` with the
    record's dependency key, and taken back while the key is the same."""
    key = dependency_key(kb, entry.id) if entry.digest is not None else None
    kept = entry.derived.get(memo)
    if key is not None and kept is not None and kept[0] == key:
        found: _T = kept[1]
        return found
    found = compute(entry)
    if key is not None:
        entry.derived[memo] = (key, found)
    return found


def unverified_basis(item: DebtItem, users: int) -> Diagnostic:
    """The `unverified-basis` warning of an unverified figure on which `users` other records rest."""
    hint = "find the evidence, then set the basis to measured, vendor-spec, cited or derived and add sources"
    if users:
        hint += f"; {users} other record{'s' if users != 1 else ''} rest{'s' if users == 1 else ''} on this figure"
    return make(
        "unverified-basis", item.file, item.line, item.column, f"{cut(item.label)}: the basis is unverified", hint
    )


def compute_evidence(kb: KnowledgeBase) -> tuple[Evidence, list[Diagnostic]]:
    """Evidence status of every record, the whole debt, and the unverified-basis / missing-source diagnostics.

    A record's own figures depend on its file alone, and its inherited debt
    on the records its computing references reach (`flopkb.links.memo`): with the
    load cache, both are kept in the record's `derived` data and taken back
    while those files are unchanged. Everything that spans the base (who
    rests on which figure, the statuses, the debt list) is put together again
    on every run.
    """
    resolver = Resolver.of(kb)
    diagnostics: list[Diagnostic] = []
    own: dict[str, list[DebtItem]] = {}
    spec_debt: dict[tuple[str, str], DebtItem] = {}
    dependents: dict[DebtItem, set[str]] = {}

    claimants: list[str] = []
    standing: dict[str, OwnEvidence] = {}
    for record_id, entry in kb.entries.items():
        figures = entry.derived.get(OWN_MEMO)
        if figures is None:
            # a record that did not validate has no figures: kept too, so that warm runs never load its model again
            figures = _own_figures(record_id, entry) if entry.record is not None else _NOTHING
            if entry.digest is not None:
                entry.derived[OWN_MEMO] = figures
        items, problems, claims = figures.items, figures.problems, figures.claims
        standing[record_id] = figures
        if items:
            own[record_id] = list(items)
            for item in items:
                dependents[item] = set()
                if item.what == SPEC:
                    spec_debt[(record_id, item.parameter)] = item
        diagnostics.extend(problems)
        if claims:
            claimants.append(record_id)

    inherited: dict[str, list[InheritedDebt]] = {}
    if spec_debt:
        formulas = _Formulas(kb, resolver)
        for record_id in claimants:
            entry = kb.entries[record_id]
            found = _memoised(
                kb, entry, INHERITED_MEMO, lambda entry: _inherited(entry.id, entry.record, spec_debt, formulas)
            )
            if found:
                inherited[record_id] = list(found)
                for inherited_debt in found:
                    dependents[inherited_debt.item].add(record_id)

    for items in own.values():
        diagnostics.extend(unverified_basis(item, len(dependents[item])) for item in items)

    simulated: dict[str, tuple[SimulatedClaim, ...]] = {}
    for record_id in claimants:
        entry = kb.entries[record_id]
        simulated_claims = _memoised(
            kb, entry, SIMULATED_MEMO, lambda entry: _simulated(entry.record, kb, resolver.target)
        )
        if simulated_claims:
            simulated[record_id] = simulated_claims

    records: dict[str, RecordEvidence] = {}
    for record_id in kb.entries:
        mine = tuple(own.get(record_id, ()))
        theirs = tuple(inherited.get(record_id, ()))
        status = OWN_DEBT if mine else INHERITED_DEBT if theirs else NO_DEBT
        figures = standing[record_id]
        records[record_id] = RecordEvidence(
            record_id,
            status,
            mine,
            theirs,
            simulated.get(record_id, ()),
            figures.errata,
            figures.cited,
            figures.draft,
        )
    debt = tuple(sorted(item for items in own.values() for item in items))
    evidence = Evidence(records, debt, {item: tuple(sorted(dependents[item])) for item in debt})
    return evidence, diagnostics


def check_evidence(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Compute the evidence (stored as `kb.evidence`, and shown on the graph's nodes) and report."""
    evidence, diagnostics = compute_evidence(kb)
    evidence._disagreements = lambda: find_disagreements(kb.formulas)  # the formula stage runs later
    kb.evidence = evidence
    yield from diagnostics

"""What `flopkb diff` reports: plain, frozen data, in the order a reviewer must see it.

Every format (`flopkb.review.formats`, `flopkb.review.annotations`) and the
site's Recent changes page read this and nothing else. `Report.to_json()`
is the stable JSON schema of docs/cli.md (`flopkb diff --format json`):
fields are only ever added.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from flopkb.links.debt import NO_DEBT

SCHEMA_VERSION = 1

# The conditions of `--fail-on`.
CLAIM_REGRESSION, NEW_DISAGREEMENT, NEW_ERROR, EVIDENCE_REGRESSION = (
    "claim-regression",
    "new-disagreement",
    "new-error",
    "evidence-regression",
)
FAIL_ON = (CLAIM_REGRESSION, NEW_DISAGREEMENT, NEW_ERROR, EVIDENCE_REGRESSION)


@dataclass(frozen=True, slots=True)
class Commit:
    label: str
    """As named (`origin/main`, `HEAD`, `merge base`), or `work tree`."""
    sha: str | None
    """None for the work tree."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where something is written, on the head side when it exists there (else on the base side)."""

    path: str
    line: int


@dataclass(frozen=True, slots=True)
class SpecEdit:
    """A spec whose value or basis differs between the sides."""

    accelerator: str
    parameter: str
    before: str | None
    """`4.8 TB/s (vendor-spec)`; None when the base has no such spec."""
    after: str | None
    """None when the head has no such spec."""


@dataclass(frozen=True, slots=True)
class Cause:
    """One edit, and its blast radius: the values it changed."""

    id: str
    """`spec:<accelerator>:<parameter>` for a changed spec value, `record:<id>` for any other edit of a record,
    `settings` when the vocabulary changed."""
    record: str
    what: str
    """`` `memory_bandwidth` of hw/h200: 4.8 TB/s → 4.9 TB/s ``, `flops/decode edited`, `facts/x added`."""
    place: Place | None
    values: int = 0
    """How many values it changed."""
    records: tuple[str, ...] = ()
    """The records whose values it changed, sorted."""
    not_edited: int = 0
    """How many of `records` the change did not edit."""
    spec: SpecEdit | None = None
    """The spec, for a `spec:` cause: its parts, which `what` writes as one line."""


@dataclass(frozen=True, slots=True)
class ClaimChange:
    """An `expect` row whose status changed (or that is new, or gone)."""

    record: str
    formula: str
    index: int
    measured: str | None
    """The measurement it names (`source#id`), or None for a claim that states a value."""
    hardware: str | None
    where: str
    """Its pinned inputs, as `batch=64`."""
    before: str | None
    """`ok`, `mismatch`, `disagrees` or `unchecked`; None when the claim is new."""
    after: str | None
    """None when the claim is gone."""
    before_value: float | None
    after_value: float | None
    stated: str
    """The value the claim states, or for a claim that names a measurement the value measured: on the head side
    (on the base side for a claim that is gone)."""
    place: Place | None
    because: tuple[str, ...] = ()
    """The edited, added or removed records among the causes of its verdict (`flopkb.review.causes`), sorted."""
    stated_before: str | None = None
    """`stated` on the base side; None when the claim is new."""

    @property
    def regressed(self) -> bool:
        """Was ✓ (or new) and now is not: a claim-regression (for a stated value) or a new disagreement."""
        good = ("ok",)
        return self.after is not None and self.after not in good and (self.before is None or self.before in good)


@dataclass(frozen=True, slots=True)
class ValueChange:
    """One computed value (formula × accelerator × sweep point) that differs, or exists on one side only."""

    record: str
    formula: str
    hardware: str | None
    point: str
    """The sweep point, as `B=1, T=2`; '' without sweeps."""
    unit: str
    before: float | None
    after: float | None
    relative: float | None
    """(after - before) / |before|; None when a side is missing, the units differ or before is 0."""
    causes: tuple[str, ...]
    """Ids of the `Cause`s that changed it."""


@dataclass(frozen=True, slots=True)
class EvidenceChange:
    """A record whose evidence status (`flopkb.links.debt`: `no-debt`, `own-debt`, `inherited-debt`) changed."""

    record: str
    before: str | None
    after: str | None
    place: Place | None
    because: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        """Had no unverified figures (of its own or inherited), and now has some."""
        return self.before == NO_DEBT and self.after not in (None, NO_DEBT)


@dataclass(frozen=True, slots=True)
class DiagnosticLine:
    path: str
    line: int
    column: int
    severity: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class DiagnosticChange:
    """A diagnostic on both sides (the same file, code and subject: `flopkb.review.diagnostics`) whose message
    changed: a claim that fails by another amount."""

    before: DiagnosticLine
    after: DiagnosticLine


@dataclass(frozen=True, slots=True)
class Rename:
    old: str
    new: str
    path: str


@dataclass(frozen=True, slots=True)
class RecordList:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[Rename, ...] = ()
    edited: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LinkChanges:
    added: tuple[tuple[str, str], ...] = ()
    """(from, to) edges of the link graph that the head has and the base had not."""
    removed: tuple[tuple[str, str], ...] = ()
    new_orphans: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    base: Commit
    head: Commit
    named_base: Commit | None = None
    """The base as given, when the merge base differs from it."""
    fell_back: str | None = None
    claims: tuple[ClaimChange, ...] = ()
    """Claims that state a value."""
    agreement: tuple[ClaimChange, ...] = ()
    """Claims that name a measurement: agreement with it."""
    causes: tuple[Cause, ...] = ()
    values: tuple[ValueChange, ...] = ()
    evidence: tuple[EvidenceChange, ...] = ()
    new_diagnostics: tuple[DiagnosticLine, ...] = ()
    fixed_diagnostics: tuple[DiagnosticLine, ...] = ()
    changed_diagnostics: tuple[DiagnosticChange, ...] = ()
    """Diagnostics on both sides whose message changed; neither new nor fixed."""
    records: RecordList = field(default_factory=RecordList)
    links: LinkChanges = field(default_factory=LinkChanges)
    pages: tuple[str, ...] = ()
    """Record ids whose page's content changes (added and removed records' pages included), sorted."""
    files: dict[str, str] = field(default_factory=dict)
    """The file of every record edited, added, removed or renamed, by id."""
    places: dict[str, Place] = field(default_factory=dict)
    """The id line of every record whose values changed, by id."""
    evaluated: int = 0
    """How many records' formulas were evaluated on each side (the others were not: nothing they read changed)."""

    @property
    def empty(self) -> bool:
        return not any(
            (
                self.claims,
                self.agreement,
                self.values,
                self.evidence,
                self.new_diagnostics,
                self.fixed_diagnostics,
                self.changed_diagnostics,
                self.records.added,
                self.records.removed,
                self.records.renamed,
                self.records.edited,
                self.links.added,
                self.links.removed,
                self.pages,
            )
        )

    def failures(self, conditions: tuple[str, ...]) -> list[str]:
        """The conditions of `--fail-on` that happened, in the order given."""
        happened = {
            CLAIM_REGRESSION: any(change.regressed for change in self.claims),
            NEW_DISAGREEMENT: any(
                change.after == "disagrees" and change.before != "disagrees" for change in self.agreement
            ),
            NEW_ERROR: any(line.severity == "error" for line in self.new_diagnostics),
            EVIDENCE_REGRESSION: any(change.regressed for change in self.evidence),
        }
        return [condition for condition in conditions if happened[condition]]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data = {"schema": SCHEMA_VERSION, **data}
        data["diagnostics"] = {
            "new": data.pop("new_diagnostics"),
            "fixed": data.pop("fixed_diagnostics"),
            "changed": data.pop("changed_diagnostics"),
        }
        data["summary"] = summary_counts(self)
        return data


def summary_counts(report: Report) -> dict[str, int]:
    values = {(change.record, change.formula, change.hardware, change.point) for change in report.values}
    records = {change.record for change in report.values}
    edited = set(report.records.edited) | set(report.records.added) | {rename.new for rename in report.records.renamed}
    return {
        "claims_changed": len(report.claims),
        "claim_regressions": sum(change.regressed for change in report.claims),
        "agreement_changed": len(report.agreement),
        "new_disagreements": sum(
            change.after == "disagrees" and change.before != "disagrees" for change in report.agreement
        ),
        "values_changed": len(values),
        "records_with_values_changed": len(records),
        "records_with_values_changed_not_edited": len(records - edited),
        "evidence_changed": len(report.evidence),
        "evidence_regressions": sum(change.regressed for change in report.evidence),
        "new_diagnostics": len(report.new_diagnostics),
        "new_errors": sum(line.severity == "error" for line in report.new_diagnostics),
        "fixed_diagnostics": len(report.fixed_diagnostics),
        "changed_diagnostics": len(report.changed_diagnostics),
        "records_added": len(report.records.added),
        "records_removed": len(report.records.removed),
        "records_renamed": len(report.records.renamed),
        "records_edited": len(report.records.edited),
        "links_added": len(report.links.added),
        "links_removed": len(report.links.removed),
        "new_orphans": len(report.links.new_orphans),
        "pages_changed": len(report.pages),
    }

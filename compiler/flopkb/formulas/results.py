"""What the formula stage computes: one `FormulaResult` per formula, with its evaluations and claims.

These are plain, frozen data: they import neither the knowledge-base types
nor any stage, so every later stage (evidence, the site, `flopkb eval`) can
take them without importing the formula stage that fills them in.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from flopkb.formulas.evaluate import Evaluation, QuantityLike
from flopkb.formulas.expr import Expr
from flopkb.formulas.regime import Condition
from flopkb.formulas.units import format_number
from flopkb.report.diagnostics import Diagnostic

# Where a formula's hardware scope comes from.
HW_NONE, HW_OWN, HW_REF, HW_DEFAULT = "none", "own", "ref", "default"
# The status of a claim: a stated value that matches or not, a measurement the formula agrees with or not.
CLAIM_OK, CLAIM_MISMATCH, CLAIM_DISAGREES, CLAIM_UNCHECKED = "ok", "mismatch", "disagrees", "unchecked"

Key = tuple[str, str]
"""A formula: (record id, formula id)."""
RawValue = Any
"""An input as written in YAML: a number, a string, or a list of them (a sweep)."""


@dataclass(frozen=True, slots=True)
class HardwareFigure:
    """A spec value a formula computed with: 'uses nvidia-h100-sxm memory_bandwidth 3.35 TB/s (vendor-spec)'."""

    accelerator: str
    parameter: str
    value: str
    basis: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MeasuredPoint:
    """The measurement a claim names (`measured: <source>#<id>`), as the source gives it."""

    source: str
    """The source record's id (resolved)."""
    id: str
    """The measurement's id within the source: the anchor of its row on the source's page."""
    quantity: str
    """What was measured, in words."""
    value: str
    """The value as written in the source record, with its unit."""
    basis: str
    """`measured` or `simulated`."""
    where: str
    """Where in the source: "Table 3", "Figure 21"."""
    source_title: str

    @property
    def anchor(self) -> str:
        return f"{self.source}#{self.id}"

    @property
    def simulated(self) -> bool:
        return self.basis == "simulated"


@dataclass(frozen=True, slots=True)
class Claim:
    """One `expect` row, re-computed (or not, with the reason)."""

    index: int
    where: tuple[tuple[str, QuantityLike | str], ...]
    """The pinned inputs, read as quantities (as written, when the claim could not be checked)."""
    hardware: str | None
    """The accelerator's record id (resolved), or None."""
    stated: float | None
    """The stated value, or the measurement's, in the formula's unit; None when it does not read."""
    stated_text: str
    computed: float | None
    rel_tol: float
    status: str
    """CLAIM_OK, CLAIM_MISMATCH, CLAIM_DISAGREES or CLAIM_UNCHECKED."""
    reason: str | None = None
    """Why an unchecked claim could not be checked."""
    measurement: MeasuredPoint | None = None
    """The measurement the claim names, when it names one (and it exists)."""
    measured_ref: str | None = None
    """The claim's `measured:` as written; None for a claim that states a value."""
    in_regime: bool = True
    """False when the formula's `valid_when` does not hold at the claim's point (`claim-out-of-regime`)."""

    @property
    def off_by(self) -> float | None:
        """|stated - computed| / |computed|, or None when unchecked."""
        if self.stated is None or self.computed is None:
            return None
        return relative_difference(self.stated, self.computed)

    @property
    def is_measured(self) -> bool:
        return self.measured_ref is not None


@dataclass(frozen=True, slots=True)
class FormulaResult:
    """One formula of a record, as compiled: its effective definition, every evaluation and every claim."""

    record: str
    id: str
    title: str | None
    expr: Expr | None
    """The effective expression, parsed (None when it is missing or does not parse)."""
    unit: str
    inputs: dict[str, RawValue]
    """Effective inputs as written (own inputs over the referenced ones)."""
    swept: tuple[str, ...]
    """Inputs the expression uses that have several values, in input order."""
    hardware: tuple[str, ...]
    """Accelerator ids in scope, in order; () when the expression uses no `hw.`."""
    hardware_from: str
    """HW_NONE, HW_OWN, HW_REF (written on a formula along the ref chain) or HW_DEFAULT."""
    defined_in: Key | None = None
    """Where the expression is written, when this formula takes it by `ref`."""
    chain: tuple[Key, ...] = ()
    """The formulas the `ref` chain passes through, nearest first (ends with `defined_in`)."""
    evaluations: tuple[Evaluation, ...] = ()
    figures: tuple[HardwareFigure, ...] = ()
    claims: tuple[Claim, ...] = ()
    problems: tuple[Diagnostic, ...] = ()
    """The diagnostics this stage reported for the formula."""
    valid_when: Condition | None = None
    """Where the model holds (`flopkb.formulas.regime`); evaluations outside it are marked `in_regime=False`."""
    complete: bool = False
    """Evaluated on every accelerator in scope (or once, without `hw.`), with no problem."""

    @property
    def key(self) -> Key:
        return self.record, self.id

    @property
    def anchor(self) -> str:
        return f"{self.record}#{self.id}"

    @property
    def outside_regime(self) -> int:
        """How many evaluations lie outside the formula's regime."""
        return sum(not evaluation.in_regime for evaluation in self.evaluations)

    @property
    def disagreements(self) -> tuple[Claim, ...]:
        """The claims whose measurement the formula disagrees with."""
        return tuple(claim for claim in self.claims if claim.status == CLAIM_DISAGREES)


FormulaResults = Mapping[str, list[FormulaResult]]


class LaterResults(Mapping[str, list[FormulaResult]]):
    """The formula results of these records, each record's evaluated when first asked for (`flopkb.formulas.stage`):
    a page that shows one record's formulas does not evaluate the whole base's.

    With a `key` (of a record's content and of everything its formulas compute with, None when unknown), the
    results a previous base's evaluated can be taken over while their key is the same (`take_from`: `flopkb serve`,
    whose every save would otherwise evaluate all of them again for the pages that count claims)."""

    def __init__(
        self,
        ids: list[str],
        evaluate: Callable[[str], list[FormulaResult]],
        key: Callable[[str], object | None] = lambda record_id: None,
    ) -> None:
        self._ids = dict.fromkeys(ids)
        self._evaluate = evaluate
        self._key = key
        self._lock = threading.RLock()
        """Held while a record is evaluated (`flopkb.kb.building`): two threads asking for one record's results would
        evaluate it twice, and count its values twice against its limit. Their own, not the base's: a record's hover
        or inlay hints do not wait for every record's links to be built. Re-entered when a record's formula reads
        another's."""
        self._found: dict[str, list[FormulaResult]] = {}

    def __getitem__(self, record_id: str) -> list[FormulaResult]:
        found = self._found.get(record_id)
        if found is None:
            if record_id not in self._ids:
                raise KeyError(record_id)
            with self._lock:
                found = self._found.get(record_id)
                if found is None:
                    found = self._found[record_id] = self._evaluate(record_id)
        return found

    def take_from(self, previous: FormulaResults) -> int:
        """Take the results `previous` evaluated for the records whose key is the same in both bases; how many."""
        if not isinstance(previous, LaterResults):
            return 0
        taken = 0
        for record_id, found in previous._found.items():
            if record_id in self._ids and record_id not in self._found:
                key = self._key(record_id)
                if key is not None and key == previous._key(record_id):
                    self._found[record_id] = found
                    taken += 1
        return taken

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._ids

    @property
    def evaluated(self) -> int:
        """How many records' formulas have been evaluated so far."""
        return len(self._found)


def relative_difference(stated: float, computed: float) -> float:
    """|stated - computed| / |computed|: 0 when equal, infinite when only the computed value is 0."""
    if stated == computed:
        return 0.0
    if computed == 0:
        return math.inf
    return abs(stated - computed) / abs(computed)


def percent(fraction: float) -> str:
    if math.isinf(fraction):
        return "infinitely"
    return f"{format_number(fraction * 100, 2 if fraction * 100 >= 1 else 1)}%"

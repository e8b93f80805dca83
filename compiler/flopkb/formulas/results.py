"""What the formula stage gives: every formula's effective definition, its evaluations and its claims."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flopkb.formulas.evaluate import Evaluation, QuantityLike
from flopkb.formulas.expr import Expr
from flopkb.report.diagnostics import Diagnostic

# Where a formula's hardware scope comes from.
HW_NONE, HW_OWN, HW_REF, HW_DEFAULT = "none", "own", "ref", "default"
# The status of a claim.
CLAIM_OK, CLAIM_MISMATCH, CLAIM_UNCHECKED = "ok", "mismatch", "unchecked"

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
class Claim:
    """One `expect` row, re-computed (or not, with the reason)."""

    index: int
    where: tuple[tuple[str, QuantityLike], ...]
    hardware: str | None
    """The accelerator's record id (resolved), or None."""
    stated: float | None
    """The stated value in the formula's unit; None when it does not read."""
    stated_text: str
    computed: float | None
    rel_tol: float
    status: str
    """CLAIM_OK, CLAIM_MISMATCH or CLAIM_UNCHECKED."""
    reason: str | None = None
    """Why an unchecked claim could not be checked."""

    @property
    def off_by(self) -> float | None:
        """|stated - computed| / |computed|, or None when unchecked."""
        if self.stated is None or self.computed is None:
            return None
        return relative_difference(self.stated, self.computed)


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
    complete: bool = False
    """Evaluated on every accelerator in scope (or once, without `hw.`), with no problem."""

    @property
    def key(self) -> Key:
        return self.record, self.id

    @property
    def anchor(self) -> str:
        return f"{self.record}#{self.id}"


FormulaResults = dict[str, list[FormulaResult]]


def relative_difference(stated: float, computed: float) -> float:
    if stated == computed:
        return 0.0
    if computed == 0:
        return math.inf
    return abs(stated - computed) / abs(computed)

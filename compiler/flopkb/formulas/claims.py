"""Claims: each `expect` row of a formula re-computed and compared with what it claims.

A claim pins every swept input the expression uses (`where`) and, when it
uses `hw.`, names one accelerator of the formula's scope (`hardware`);
otherwise `invalid-value`. It compares the formula's value there with
exactly one of:

- `value`, the author's figure, read in the formula's unit (a bare number is
  in that unit; a quantity is converted, or is a `unit-mismatch`); off by
  more than `rel_tol` (default 0.01) relative to the computed value it is a
  `claim-mismatch` (an error) at the row's `value`;
- `measured: <source>#<measurement-id>`, a measurement of a source record
  (`flopkb.formulas.measurements`), its value converted to the formula's unit
  (a value of another dimension is a `unit-mismatch` at the row's
  `measured`); off by more than `rel_tol` (default 0.10) relative to the
  computed value it is a `measurement-disagrees` (a warning: the model and
  the measurement disagree, which is knowledge, not a typo) at the row's
  `measured`, naming both numbers, the tolerance, the source and where in it
  the measurement stands. A source or measurement that does not resolve is
  reported by the link stage (`dangling-ref`, `wrong-kind-ref`,
  `dangling-anchor`), a value that does not read by the measurement check;
  the claim is then unchecked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flopkb.formulas.context import FormulaReporter
from flopkb.formulas.definitions import Definition
from flopkb.formulas.evaluate import FormulaProblem, QuantityLike, evaluate_point
from flopkb.formulas.expr import Expr, HwParam, walk
from flopkb.formulas.regime import Condition, holds_at
from flopkb.formulas.results import (
    CLAIM_DISAGREES,
    CLAIM_MISMATCH,
    CLAIM_OK,
    CLAIM_UNCHECKED,
    Claim,
    MeasuredPoint,
    percent,
    relative_difference,
)
from flopkb.formulas.units import (
    DIMENSIONLESS,
    Dimension,
    QuantityError,
    dimension_of,
    format_dimension,
    format_number,
    format_value,
    magnitude_in,
    to_base,
)
from flopkb.load.models import Expect
from flopkb.report.cut import cut
from flopkb.report.hints import closest, suggest

if TYPE_CHECKING:
    from flopkb.formulas.units import Quantity


class Target:
    """What a claim compares the formula with: the stated value, or the measurement, in the formula's unit."""

    __slots__ = ("measurement", "reason", "text", "value")

    def __init__(
        self, value: float | None, text: str, measurement: MeasuredPoint | None = None, reason: str | None = None
    ) -> None:
        self.value = value
        self.text = text
        self.measurement = measurement
        self.reason = reason
        """Why there is no value, when the link or measurement check reports it (the claim is then just unchecked)."""


class ClaimChecker:
    """The claims of one formula, checked with its reporter."""

    def __init__(self, reporter: FormulaReporter, condition: Condition | None = None) -> None:
        self.reporter = reporter
        self.condition = condition
        """The formula's regime (`valid_when`), when it has one that evaluates."""
        self.ev = reporter.ev
        self.report = reporter.report
        self.at = reporter.at
        self.label = reporter.claim_label
        self.rejected = reporter.rejected

    def unchecked(self, index: int, row: Expect, reason: str, hardware: str | None = None) -> Claim:
        return Claim(
            index,
            tuple(row.where.items()),
            hardware,
            None,
            _as_written(row),
            None,
            row.tolerance,
            CLAIM_UNCHECKED,
            reason,
            measured_ref=row.measured,
        )

    def on_broken(self, index: int, row: Expect, hardware: str, what: str) -> Claim:
        """A claim on an accelerator whose record, or a spec the claim needs, has errors of its own: said at the
        claim's `hardware`, as the claim waits for them to be fixed."""
        path = self.ev.kb.entries[hardware].path
        self.report(
            "claim-unchecked",
            self.at("expect", index, "hardware"),
            f"{self.label(index)} is not checked: {hardware} {what}, reported in {path}",
            f"fix the errors of {path}; the claim is checked then",
        )
        return self.unchecked(index, row, f"{hardware} {what}", hardware)

    def invalid_specs(self, hardware: str | None) -> frozenset[str]:
        specs = self.ev.accelerator(hardware) if hardware is not None else None
        return specs.invalid if specs is not None else frozenset()

    def claim(
        self,
        index: int,
        row: Expect,
        expr: Expr,
        definition: Definition,
        inputs: dict[str, Any],
        swept: tuple[str, ...],
        scope: list[str],
        failed: set[str | None],
    ) -> Claim:
        ev = self.ev
        unit = definition.unit
        here = ("expect", index)
        if ev.what_if:
            return self.unchecked(index, row, "not checked in a what-if")
        ok = True
        values = dict(inputs)
        where: list[tuple[str, QuantityLike]] = []
        misspelt: set[str] = set()
        for name, raw in row.where.items():
            if name not in inputs:
                known = ", ".join(f"`{cut(known)}`" for known in inputs) or "none"
                close = closest(name, [other for other in inputs if other not in row.where])
                misspelt.update(close)
                self.report(
                    "invalid-value",
                    self.at(*here, "where", name, key=True),
                    f"{self.label(index)}.where names `{cut(name)}`, which is not an input of the formula "
                    f"(its inputs: {known})",
                    suggest(name, close[:1]) if close else None,
                )
                ok = False
                continue
            try:
                value = ev.quantity(raw)
            except QuantityError as error:
                self.report(
                    "invalid-value",
                    self.at(*here, "where", name),
                    f"{self.label(index)}.where.{cut(name)}: {error.message}",
                    error.hint,
                )
                ok = False
                continue
            like = _first(inputs[name])
            given = _dimension(value)
            if like is not None and given != _dimension(like):
                self.report(
                    "unit-mismatch",
                    self.at(*here, "where", name),
                    f"{self.label(index)}.where.{cut(name)}: {format_value(value)} is {format_dimension(given)}, "
                    f"but input `{cut(name)}` is {format_dimension(_dimension(like))}",
                    f"write it like the input: {cut(name)}: {format_value(like)}",
                )
                ok = False
                continue
            values[name] = value
            where.append((name, value))
        loose = [
            name
            for name in swept
            if name not in row.where and name not in misspelt and not self.rejected(*here, "where", name)
        ]  # a misspelt name is told "did you mean", a wrong `where` by the schema
        if loose:
            names = ", ".join(f"`{cut(name)}`" for name in loose)
            place = self.at(*here, "where") if row.where else self.at(*here)
            self.report(
                "invalid-value",
                place,
                f"{self.label(index)} does not pin the swept input{'s' if len(loose) > 1 else ''} {names}",
                "add it to the claim's `where`, e.g. where: {" + ", ".join(f"{cut(name)}: ..." for name in loose) + "}",
            )
            ok = False
        hardware: str | None = None
        if expr.hw_params_used:
            if row.hardware is None and self.rejected(*here, "hardware"):
                ok = False  # the schema told it
            elif row.hardware is None:
                self.report(
                    "invalid-value",
                    self.at(*here),
                    f"{self.label(index)} names no accelerator, but {_hw_user(expr)} uses hw.",
                    "add `hardware: <accelerator>` to the claim" + (f", e.g. {scope[0]}" if scope else ""),
                )
                ok = False
            else:
                hardware = ev.resolver.target(row.hardware)
                if hardware is not None and hardware not in ev.resolver.kinds:  # a record that did not validate
                    return self.on_broken(index, row, hardware, "has errors")
                if hardware is None or ev.resolver.kinds.get(hardware) != "accelerator":
                    return self.unchecked(
                        index, row, "its hardware does not resolve to an accelerator"
                    )  # the link stage reports it
                if hardware not in scope and self.reporter.scope_told_wrong(definition):
                    ok = False  # the scope lacks what the schema told wrong
                elif hardware not in scope:
                    shown = ", ".join(scope) or "empty"
                    self.report(
                        "invalid-value",
                        self.at(*here, "hardware"),
                        f"{self.label(index)}.hardware {row.hardware} is not in the formula's hardware scope ({shown})",
                        "add it to the formula's `hardware`, or claim a value for an accelerator in scope",
                    )
                    ok = False
        elif row.hardware is not None:
            self.report(
                "invalid-value",
                self.at(*here, "hardware"),
                f"{self.label(index)} names hardware, but the expression uses no hw.<parameter>: "
                "the value cannot depend on it",
                "remove `hardware` from the claim",
            )
            ok = False
        target = self.measured(index, row, unit) if row.measured is not None else self.stated(index, row, unit)
        if target.reason is not None:
            return self.unchecked(index, row, target.reason, hardware)
        if target.value is None:
            ok = False
        if not ok or self.rejected(*here):  # a field the schema told wrong: its default is not the author's
            return self.unchecked(index, row, "the claim is malformed", hardware)

        in_regime = True

        def result(computed: float | None, status: str, reason: str | None = None) -> Claim:
            return Claim(
                index,
                tuple(where),
                hardware,
                target.value,
                target.text,
                computed,
                row.tolerance,
                status,
                reason,
                target.measurement,
                row.measured,
                in_regime,
            )

        claimed = "measured" if row.measured is not None else "value"
        if (hardware if expr.hw_params_used else None) in failed:
            broken = sorted(expr.hw_params_used & self.invalid_specs(hardware))
            if hardware is not None and broken:
                return self.on_broken(index, row, hardware, f"has errors in its spec `{cut(broken[0])}`")
            return result(
                None, CLAIM_UNCHECKED, "the formula could not be evaluated" + (f" on {hardware}" if hardware else "")
            )
        specs = ev.accelerator(hardware).values if hardware is not None else None  # type: ignore[union-attr]
        try:
            computed = evaluate_point(expr, unit, values, specs)
        except FormulaProblem as problem:
            self.report(
                problem.code if problem.code != "formula-missing-spec" else "formula-error",
                self.at(*here, claimed),
                f"{self.label(index)}: {problem.message}",
                problem.hint,
            )
            return result(None, CLAIM_UNCHECKED, problem.message)
        assert target.value is not None
        at_point = _point_text(where, hardware)
        in_regime = self.in_regime(values, hardware, specs)
        if not in_regime:
            assert self.condition is not None
            self.report(
                "claim-out-of-regime",
                self.at(*here, claimed),
                f"{self.label(index)}{at_point} lies outside the formula's regime: "
                f"valid_when {cut(str(self.condition))} does not hold there, so the model does not describe this point",
                "claim a point where valid_when holds, or the formula of the regime this point is in",
            )
        difference = relative_difference(target.value, computed)
        if difference <= row.tolerance:
            return result(computed, CLAIM_OK)
        unit_text = "" if unit.strip() == "1" else f" {unit}"
        off = f"off by {percent(difference)}, tolerance {percent(row.tolerance)}"
        if target.measurement is not None:
            point = target.measurement
            in_unit = f"{format_number(target.value, 6)}{unit_text}"
            converted = "" if _plain(target.text) in (in_unit, format_number(target.value, 6)) else f" = {in_unit}"
            message = (
                f"{self.label(index)}{at_point}: the formula computes {format_number(computed, 6)}{unit_text}, "
                f"but {point.source} ({cut(point.where)}) {cut(point.basis)} {target.text}{converted} ({off})"
            )
            hint = (
                "if the model is wrong, correct the formula or its inputs; if it holds only within a wider margin, "
                "give the claim that `rel_tol`; else the disagreement is knowledge, shown on the page beside the model"
            )
            self.report("measurement-disagrees", self.at(*here, claimed), message, hint)
            return result(computed, CLAIM_DISAGREES)
        should = f"{format_number(computed, 6)}{unit_text}"
        hint = f"correct the stated value to {should}, or the formula or its inputs"
        slip = _prefix_slip(target.value, computed, row.tolerance)
        if slip is not None:
            factor = format_number(10.0 ** (3 * abs(slip)))
            off = f"{factor}× too {'large' if slip > 0 else 'small'}: unit prefix?"
            hint = f"a unit prefix off by a factor of {factor}? {hint}"
        message = (
            f"{self.label(index)}{at_point} states {target.text}{unit_text if not isinstance(row.value, str) else ''}, "
            f"computes {should} ({off})"
        )
        self.report("claim-mismatch", self.at(*here, claimed), message, hint)
        return result(computed, CLAIM_MISMATCH)

    def in_regime(self, values: dict[str, Any], hardware: str | None, specs: Mapping[str, QuantityLike] | None) -> bool:
        """Whether the formula's `valid_when` holds at a claim's point (True without one)."""
        if self.condition is None:
            return True
        try:
            return holds_at(self.condition, values, [(hardware, specs or {})], ())[0]
        except FormulaProblem:
            return True  # the condition's own problem is reported at valid_when

    def stated(self, index: int, row: Expect, unit: str) -> Target:
        """The claim's value in the formula's unit (a bare number is in that unit), and its text as written."""
        raw = row.value
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            text = format_number(float(raw), 12)
            if not math.isfinite(float(raw)):
                self.report(
                    "invalid-value",
                    self.at("expect", index, "value"),
                    f"{self.label(index)}.value {raw!r} is out of range",
                )
                return Target(None, text)
            return Target(float(raw), text)
        try:
            quantity = self.ev.quantity(raw)
        except QuantityError as error:
            self.report(
                "invalid-value",
                self.at("expect", index, "value"),
                f"{self.label(index)}.value: {error.message}",
                error.hint,
            )
            return Target(None, str(raw))
        if isinstance(quantity, (int, float)) or not quantity.unit_items():
            return Target(float(getattr(quantity, "magnitude", quantity)), str(raw).strip())
        text = str(raw).strip()
        try:
            return Target(magnitude_in(quantity, unit), text)
        except QuantityError:
            if to_base(quantity)[1] == self.reporter.computes:
                return Target(None, text, reason=_WRONG_UNIT)
            problem = self.other_dimension(index, text, quantity, unit)
            self.report("unit-mismatch", self.at("expect", index, "value"), *problem)
            return Target(None, text)

    def other_dimension(self, index: int, text: str, quantity: Quantity, unit: str) -> tuple[str, str]:
        """The message and hint of a claimed value (`text`, as written) of another dimension than the formula's
        `unit`."""
        dimension = format_dimension(to_base(quantity)[1])
        if unit.strip() != "1":
            wanted = format_dimension(dimension_of(unit))
            return (
                f"{self.label(index)}.value: {text} is {dimension}, not {wanted} (the formula's unit is {unit})",
                f"claim what the formula computes: a value of {wanted}, in {unit} or another unit of it",
            )
        message = f"{self.label(index)}.value: {text} is {dimension}, but the formula has no unit (dimensionless)"
        slip = self.reporter.unit_slip()
        if slip is not None:
            return f"{message}: is {slip} meant to be `unit`?", f"rename {slip} to `unit`"
        return message, "claim what the formula computes: a dimensionless value (a bare number)"

    def measured(self, index: int, row: Expect, unit: str) -> Target:
        """The named measurement's value in the formula's unit; a reason when another check reports the problem."""
        assert row.measured is not None
        ref = row.measured
        target, _, anchor = ref.partition("#")
        resolver = self.ev.resolver
        source = resolver.target(target)
        if source is None or resolver.kinds.get(source) != "source":
            return Target(None, ref, reason="its measurement's source does not resolve to a source")
        found = self.ev.measurements(source)
        if found is None or anchor in found.invalid:
            return Target(None, ref, reason="the measurement's value does not read")
        measured = found.values.get(anchor)
        if measured is None:
            return Target(None, ref, reason=f"{source} has no measurement '{cut(anchor)}'")
        point = measured.point
        try:
            return Target(magnitude_in(measured.quantity, unit), point.value, point)
        except QuantityError:
            if to_base(measured.quantity)[1] == self.reporter.computes:
                return Target(None, point.value, point, reason=_WRONG_UNIT)
            wanted = format_dimension(dimension_of(unit))
            self.report(
                "unit-mismatch",
                self.at("expect", index, "measured"),
                f"{self.label(index)}.measured: {point.anchor} measured {point.value.strip()}, which is "
                f"{format_dimension(to_base(measured.quantity)[1])}, not {wanted} (the formula's unit is {unit})",
                f"claim a measurement of what the formula computes: a value of {wanted}",
            )
            return Target(None, point.value, point)


_WRONG_UNIT = "the formula's unit is not of the dimension its expression computes"
"""Why a claim of the dimension the expression computes is not checked: the formula's `unit` is what is wrong (told
there), not the claim."""


def _hw_user(expr: Expr) -> str:
    """What puts a formula on accelerators: its expression, or only its `valid_when`."""
    return "the expression" if any(isinstance(node, HwParam) for node in walk(expr.root)) else "valid_when"


def _point_text(where: list[tuple[str, QuantityLike]], hardware: str | None) -> str:
    """Where a claim is, for its messages: ` at batch = 64, on hw/h100`, ` on hw/h100` (no `where`), or nothing."""
    pinned = [f"{cut(name)} = {format_value(value)}" for name, value in where] + (
        [f"on {hardware}"] if hardware else []
    )
    return f" {'at ' if where else ''}{', '.join(pinned)}" if pinned else ""


def _prefix_slip(stated: float, computed: float, tolerance: float) -> int | None:
    """n when `stated` is `computed` × 10^(3n), n ≠ 0, within `tolerance`: a unit prefix (k, M, G, ...) off by n
    steps; None otherwise."""
    if stated == 0 or computed == 0 or (stated < 0) != (computed < 0):
        return None
    steps = round(math.log10(stated / computed) / 3)
    if steps == 0 or relative_difference(stated, computed * 10.0 ** (3 * steps)) > tolerance:
        return None
    return steps


def _as_written(row: Expect) -> str:
    if row.measured is not None:
        return row.measured
    raw = row.value
    return raw if isinstance(raw, str) else format_number(float(raw), 12)  # type: ignore[arg-type]


def _plain(text: str) -> str:
    """A measurement's value as written, its number shown as computed values are (`1.380` -> `1.38`)."""
    number, _, unit = text.partition(" ")
    try:
        return format_number(float(number), 6) + (f" {unit}" if unit else "")
    except ValueError:
        return text


def _first(value: QuantityLike | list[QuantityLike]) -> QuantityLike | None:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _dimension(value: QuantityLike) -> Dimension:
    return DIMENSIONLESS if isinstance(value, (int, float)) else to_base(value)[1]

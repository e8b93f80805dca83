"""The formula stage: every formula of every flop and fact evaluated against its hardware, and its claims re-computed.

For each formula of a valid `flop` or `fact` record (docs/formulas.md has the
author's view):

1. **Effective definition.** A formula with `expr` defines itself. A formula
   with `ref: <target>#<formula-id>` takes the definition of the formula it
   refers to (resolved like any typed ref, following further refs), layered
   under its own fields:
   - `expr`: the expression at the end of the chain;
   - `unit`: the nearest `unit` written along the chain, starting with the
     formula itself; `"1"` when none is written;
   - `inputs`: the inputs of the whole chain merged name by name, the
     nearer formula winning (so the formula's own inputs win);
   - `hardware`: the nearest `hardware` written along the chain, starting with
     the formula itself; when none is, the default scope of the record that
     holds the formula (its `affected_by_hardware` plus every
     `hardware_parameters` row's `values_for`);
   - `title`: its own, else the nearest along the chain; `expect`: its own
     only (claims are never inherited).
   A ref that resolves to nothing, to no formula of that id or to a record
   that did not validate is reported by the link stage (`dangling-ref`,
   `dangling-anchor`, `wrong-kind-ref`) and skipped here. Refs that come
   back to a formula of the chain are a `formula-cycle` at the `ref` of every
   formula on the cycle.
2. **Parse** the expression (`flopkb.formulas.expr`): `formula-syntax` at the exact
   line and column of the offending character, also inside block scalars.
   A problem in text the formula borrows (a shared expression, unit or input
   that does not parse) is reported once, where it is written.
3. **Hardware scope**, when the expression uses `hw.`: see above; every ref is
   resolved to an accelerator, whose specs are read once for the whole stage
   (`flopkb.formulas.specs`). The formula is evaluated per accelerator, so one
   accelerator's `formula-missing-spec` (at the `hardware` item that names it,
   or at the expression when the scope is the default) does not hide the
   others' values. With no accelerator in scope at all it is
   `formula-missing-spec` too ("no accelerator is in scope"). A spec that fails
   the spec check is not used: that accelerator is silently left out.
4. **Evaluate** (`flopkb.formulas.evaluate`): `formula-unknown-name`,
   `formula-unit-mismatch`, `formula-error` at the expression (at the `unit`
   when the result's dimension does not match it); an input that is no
   quantity is `invalid-value` at that input, a `unit` that is no unit
   `invalid-value` at the unit.
5. **Claims**: each `expect` row pins every swept input the expression uses
   (`where`) and, when it uses `hw.`, names one accelerator of the scope
   (`hardware`); otherwise `invalid-value`. Its `value` is read in the
   formula's unit (a bare number is in that unit; a quantity is converted, or
   is a `unit-mismatch`). A computed value off by more than `rel_tol`
   relative to the computed value is `claim-mismatch` at the row's `value`.

Everything computed is kept on the knowledge base (`kb.formulas`, record id ->
`FormulaResult` per formula in record order) for the site and `flopkb eval`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from flopkb.formulas.evaluate import Evaluation, FormulaProblem, QuantityLike, evaluate_formula, evaluate_point
from flopkb.formulas.expr import Expr, ExprSyntaxError, HwParam, parse, walk
from flopkb.formulas.results import (
    CLAIM_MISMATCH,
    CLAIM_OK,
    CLAIM_UNCHECKED,
    HW_DEFAULT,
    HW_NONE,
    HW_OWN,
    HW_REF,
    Claim,
    FormulaResult,
    FormulaResults,
    HardwareFigure,
    Key,
    RawValue,
    relative_difference,
)
from flopkb.formulas.specs import AcceleratorSpecs, read_specs
from flopkb.formulas.units import (
    DIMENSIONLESS,
    Dimension,
    QuantityError,
    format_dimension,
    format_number,
    format_value,
    magnitude_in,
    parse_quantity,
    parse_unit,
    to_base,
)
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import line_index
from flopkb.links.memo import dependency_key
from flopkb.links.resolve import resolve_formula_ref
from flopkb.links.resolver import Resolver
from flopkb.load.models import Expect, Formula, formulas_of
from flopkb.load.source import Path, Source
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.hints import closest

# ---------------------------------------------------------------------------
# Effective definitions


@dataclass(frozen=True, slots=True)
class _Definition:
    expr: str
    expr_at: Key
    unit: str
    unit_at: Key | None
    """The formula whose `unit` is used; None when no formula of the chain writes one."""
    inputs: dict[str, RawValue]
    input_at: dict[str, Key]
    hardware: tuple[str, ...] | None
    hardware_at: Key | None
    title: str | None
    chain: tuple[Key, ...]


@dataclass(slots=True)
class _Located:
    entry: Entry
    index: int
    formula: Formula

    @property
    def source(self) -> Source:
        assert self.entry.source is not None
        return self.entry.source

    @property
    def written(self) -> dict[str, Any]:
        """The formula's mapping as written (to tell a written `unit` from the default)."""
        items = self.entry.source.data.get("formulas") if self.entry.source is not None else None
        if isinstance(items, list) and self.index < len(items) and isinstance(items[self.index], dict):
            return items[self.index]
        return {}

    def path(self, *rest: str | int) -> Path:
        return ("formulas", self.index, *rest)


class _Evaluator:
    """One run over a knowledge base: caches of formulas, definitions, expressions, quantities and specs."""

    def __init__(
        self, kb: KnowledgeBase, overrides: Mapping[str, RawValue] | None = None, hardware: str | None = None
    ) -> None:
        self.kb = kb
        self.resolver = Resolver.of(kb)
        self.overrides = dict(overrides or {})
        self.hardware_override = hardware
        self._formulas: dict[str, dict[str, _Located]] = {}
        self._definitions: dict[Key, _Definition | None] = {}
        self._exprs: dict[str, Expr | ExprSyntaxError] = {}
        self._quantities: dict[str, QuantityLike | QuantityError] = {}
        self._units: dict[str, QuantityError | None] = {}
        self._specs: dict[str, AcceleratorSpecs | None] = {}
        self.cycles: list[Diagnostic] = []
        self.cyclic: set[Key] = set()
        """Formulas whose ref chain runs into a cycle: what is reported about them depends on which was evaluated first."""

    # Lookups ----------------------------------------------------------------

    def formulas(self, record_id: str) -> dict[str, _Located]:
        found = self._formulas.get(record_id)
        if found is None:
            entry = self.kb.entries.get(record_id)
            found = {}
            if entry is not None and entry.record is not None and entry.source is not None:
                for index, formula in enumerate(formulas_of(entry.record)):
                    found.setdefault(formula.id, _Located(entry, index, formula))
            self._formulas[record_id] = found
        return found

    def accelerator(self, record_id: str) -> AcceleratorSpecs | None:
        if record_id not in self._specs:
            entry = self.kb.entries.get(record_id)
            self._specs[record_id] = read_specs(entry, self.kb.vocabulary)[0] if entry is not None else None
        return self._specs[record_id]

    def expression(self, text: str) -> Expr | ExprSyntaxError:
        found = self._exprs.get(text)
        if found is None:
            try:
                found = parse(text)
            except ExprSyntaxError as error:
                found = error
            self._exprs[text] = found
        return found

    def quantity(self, value: RawValue) -> QuantityLike:
        """A single input value read as a quantity (bare numbers stay floats); raises QuantityError."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
            if not math.isfinite(number):
                raise QuantityError(f"the number {value!r} is out of range")
            return number
        if not isinstance(value, str):
            return parse_quantity(value)  # raises the right QuantityError
        found = self._quantities.get(value)
        if found is None:
            try:
                found = parse_quantity(value)
            except QuantityError as error:
                found = error
            self._quantities[value] = found
        if isinstance(found, QuantityError):
            raise found
        return found

    def unit_problem(self, unit: str) -> QuantityError | None:
        if unit not in self._units:
            try:
                parse_unit(unit)
                self._units[unit] = None
            except QuantityError as error:
                self._units[unit] = error
        return self._units[unit]

    # Definitions ------------------------------------------------------------

    def definition(self, key: Key) -> _Definition | None:
        """The effective definition of a formula, following refs; None when a ref does not land or loops."""
        if key in self._definitions:
            return self._definitions[key]
        path: list[Key] = []
        on_path: dict[Key, int] = {}
        current: Key | None = key
        base: _Definition | None = None
        while current is not None:
            if current in self._definitions:
                base = self._definitions[current]
                if current in self.cyclic:
                    self.cyclic.update(path)
                break
            if current in on_path:
                self._report_cycle(path[on_path[current] :])
                self.cyclic.update(path)
                break
            located = self.formulas(current[0]).get(current[1])
            if located is None:
                break
            if located.formula.ref is None:
                base = self._own_definition(current, located)
                self._definitions[current] = base
                break
            on_path[current] = len(path)
            path.append(current)
            current = resolve_formula_ref(self.kb, located.formula.ref)
        for link in reversed(path):
            base = self._layer(link, self.formulas(link[0])[link[1]], base) if base is not None else None
            self._definitions[link] = base
        return self._definitions.get(key)

    def _own_definition(self, key: Key, located: _Located) -> _Definition:
        formula = located.formula
        assert formula.expr is not None
        unit_at = key if "unit" in located.written else None
        hardware = tuple(formula.hardware) if formula.hardware is not None else None
        return _Definition(
            formula.expr,
            key,
            formula.unit,
            unit_at,
            dict(formula.inputs),
            dict.fromkeys(formula.inputs, key),
            hardware,
            key if hardware is not None else None,
            formula.title,
            (),
        )

    def _layer(self, key: Key, located: _Located, base: _Definition) -> _Definition:
        formula = located.formula
        written_unit = "unit" in located.written
        own_hardware = formula.hardware is not None
        target = resolve_formula_ref(self.kb, formula.ref or "")
        assert target is not None
        return _Definition(
            expr=base.expr,
            expr_at=base.expr_at,
            unit=formula.unit if written_unit else base.unit,
            unit_at=key if written_unit else base.unit_at,
            inputs={**base.inputs, **formula.inputs},
            input_at={**base.input_at, **dict.fromkeys(formula.inputs, key)},
            hardware=tuple(formula.hardware) if own_hardware else base.hardware,
            hardware_at=key if own_hardware else base.hardware_at,
            title=formula.title or base.title,
            chain=(target, *base.chain),
        )

    def _report_cycle(self, cycle: list[Key]) -> None:
        shown = " -> ".join(f"{record}#{formula}" for record, formula in [*cycle, cycle[0]])
        for key in cycle:
            located = self.formulas(key[0])[key[1]]
            line, column = located.source.position(located.path("ref"))
            self.cycles.append(
                make(
                    "formula-cycle",
                    located.entry.path,
                    line,
                    column,
                    f"formula refs form a cycle: {shown}",
                    "give one of these formulas its own `expr`",
                )
            )
            self._definitions[key] = None

    # Evaluation of one formula ---------------------------------------------

    def evaluate(self, located: _Located) -> FormulaResult:
        return _FormulaRun(self, located).run()

    def scope(self, located: _Located, definition: _Definition) -> tuple[list[str], str, dict[str, int]]:
        """(accelerator ids, where the scope comes from, id -> index of the `hardware` item naming it, for own hardware)."""
        if self.hardware_override is not None:
            return [self.hardware_override], HW_OWN, {}
        target = self.resolver.target
        kinds = self.resolver.kinds
        items: dict[str, int] = {}
        if definition.hardware is not None:
            refs = list(enumerate(definition.hardware))
            origin = HW_OWN if definition.hardware_at == (located.entry.id, located.formula.id) else HW_REF
        else:
            record = located.entry.record
            refs = [(-1, ref) for ref in getattr(record, "affected_by_hardware", ())]
            refs += [(-1, ref) for row in getattr(record, "hardware_parameters", ()) for ref in row.values_for]
            origin = HW_DEFAULT
        found: list[str] = []
        for index, ref in refs:
            record_id = target(ref)
            if record_id is None or kinds.get(record_id) != "accelerator" or record_id in items:
                continue
            items[record_id] = index
            found.append(record_id)
        return found, origin, items


class _FormulaRun:
    """Evaluating one formula: its diagnostics, evaluations and claims."""

    def __init__(self, evaluator: _Evaluator, located: _Located) -> None:
        self.ev = evaluator
        self.located = located
        self.key: Key = (located.entry.id, located.formula.id)
        self.problems: list[Diagnostic] = []
        self._seen: set[tuple[str, int, int, str]] = set()

    # Locations ---------------------------------------------------------------

    def report(self, code: str, position: tuple[int, int], message: str, hint: str | None = None) -> None:
        key = (code, *position, message)
        if key not in self._seen:
            self._seen.add(key)
            self.problems.append(make(code, self.located.entry.path, *position, message, hint))

    def at(self, *rest: str | int, key: bool = False) -> tuple[int, int]:
        return self.located.source.position(self.located.path(*rest), key=key)

    def at_definition(self, offset: int | None = None) -> tuple[int, int]:
        """The expression (at `offset` in it, when it is the formula's own), or the `ref` of a formula that borrows it."""
        located = self.located
        if located.formula.ref is not None:
            return self.at("ref")
        if offset is None:
            return self.at("expr")
        return expression_position(located.source, located.path("expr"), located.formula.expr or "", offset)

    # The run -----------------------------------------------------------------

    def run(self) -> FormulaResult:
        ev, formula = self.ev, self.located.formula
        fields: dict[str, Any] = {"title": formula.title, "unit": formula.unit, "inputs": dict(formula.inputs)}
        definition = ev.definition(self.key)
        if definition is None:
            return self.finish(fields)
        fields.update(
            title=formula.title or definition.title,
            unit=definition.unit,
            inputs=definition.inputs,
            defined_in=definition.expr_at if formula.ref is not None else None,
            chain=definition.chain,
        )
        expr = ev.expression(definition.expr)
        if isinstance(expr, ExprSyntaxError):
            if definition.expr_at == self.key:
                self.report("formula-syntax", self.at_definition(expr.offset), f"expr: {expr.message}")
            return self.finish(fields)
        overrides = {
            name: value for name, value in ev.overrides.items() if name in definition.inputs or name in expr.inputs_used
        }
        written = {**definition.inputs, **overrides} if overrides else definition.inputs
        swept = tuple(name for name, value in written.items() if isinstance(value, list) and name in expr.inputs_used)
        scope, origin, items = ev.scope(self.located, definition) if expr.hw_params_used else ([], HW_NONE, {})
        fields.update(expr=expr, inputs=written, swept=swept, hardware=tuple(scope), hardware_from=origin)
        unit_ok = self.check_unit(definition)
        inputs = self.read_inputs(definition, written)
        if not unit_ok or inputs is None or not self.check_parameters(expr, definition):
            return self.finish(fields)
        evaluations, figures, failed = self.evaluate_all(expr, definition, inputs, scope, origin, items)
        claims = [
            self.claim(index, row, expr, definition, inputs, swept, scope, failed)
            for index, row in enumerate(formula.expect)
        ]
        fields.update(
            evaluations=tuple(evaluations),
            figures=tuple(figures),
            claims=tuple(claims),
            complete=not failed and not self.problems,
        )
        return self.finish(fields)

    def finish(self, fields: dict[str, Any]) -> FormulaResult:
        """The result, with this run's problems and every claim listed (unchecked when the formula did not evaluate)."""
        if "claims" not in fields:
            fields["claims"] = tuple(
                self.unchecked(index, row, "the formula could not be evaluated")
                for index, row in enumerate(self.located.formula.expect)
            )
        fields.setdefault("expr", None)
        fields.setdefault("swept", ())
        fields.setdefault("hardware", ())
        fields.setdefault("hardware_from", HW_NONE)
        return FormulaResult(self.key[0], self.key[1], problems=tuple(self.problems), **fields)

    def check_unit(self, definition: _Definition) -> bool:
        error = self.ev.unit_problem(definition.unit)
        if error is None:
            return True
        if definition.unit_at == self.key:
            self.report("invalid-value", self.at("unit"), f"unit: {error.message}", error.hint)
        return False

    def check_parameters(self, expr: Expr, definition: _Definition) -> bool:
        """Every `hw.<parameter>` names a parameter of the vocabulary (else `formula-unknown-name`, once, not per accelerator)."""
        vocabulary = self.ev.kb.vocabulary
        if not expr.hw_params_used or vocabulary is None:
            return True
        unknown = [
            node for node in walk(expr.root) if isinstance(node, HwParam) and node.name not in vocabulary.parameters
        ]
        if not unknown:
            return True
        if definition.expr_at == self.key:  # a shared expression is reported where it is written
            name = unknown[0].name
            close = closest(name, list(vocabulary.parameters))
            hint = (
                f"did you mean hw.{close[0]}?"
                if close
                else f"the parameters are {', '.join(sorted(vocabulary.parameters))}"
            )
            self.report(
                "formula-unknown-name",
                self.at_definition(unknown[0].offset),
                f"hw.{name} is not a hardware parameter (schema/vocabulary.yaml has no `{name}`)",
                hint,
            )
        return False

    def read_inputs(
        self, definition: _Definition, written: dict[str, RawValue]
    ) -> dict[str, QuantityLike | list[QuantityLike]] | None:
        """Every input read as a quantity (lists stay lists), or None when one does not read (reported where it is written)."""
        inputs: dict[str, QuantityLike | list[QuantityLike]] = {}
        ok = True
        for name, value in written.items():
            values = value if isinstance(value, list) else [value]
            read: list[QuantityLike] = []
            for position, item in enumerate(values):
                try:
                    read.append(self.ev.quantity(item))
                except QuantityError as error:
                    ok = False
                    if name not in self.ev.overrides and definition.input_at.get(name) == self.key:
                        path = ("inputs", name, position) if isinstance(value, list) else ("inputs", name)
                        self.report("invalid-value", self.at(*path), f"input `{name}`: {error.message}", error.hint)
            inputs[name] = read if isinstance(value, list) else (read[0] if read else 0.0)
        return inputs if ok else None

    def evaluate_all(
        self,
        expr: Expr,
        definition: _Definition,
        inputs: dict[str, Any],
        scope: list[str],
        origin: str,
        items: dict[str, int],
    ) -> tuple[list[Evaluation], list[HardwareFigure], set[str | None]]:
        """Evaluations on every accelerator in scope (once without `hw.`); the figures used; accelerators that failed."""
        ev = self.ev
        unit = definition.unit
        evaluations: list[Evaluation] = []
        figures: list[HardwareFigure] = []
        failed: set[str | None] = set()
        if not expr.hw_params_used:
            try:
                evaluations.extend(evaluate_formula(expr, unit, inputs))
            except FormulaProblem as problem:
                failed.add(None)
                self.problem(problem, definition, origin, None, items)
            return evaluations, figures, failed
        if not scope:
            failed.add(None)
            try:
                evaluate_formula(expr, unit, inputs, {})
            except FormulaProblem as problem:
                self.problem(problem, definition, origin, None, items)
            return evaluations, figures, failed
        used = sorted(expr.hw_params_used)
        usable: dict[str, AcceleratorSpecs] = {}
        for accelerator in scope:
            specs = ev.accelerator(accelerator)
            if specs is None or any(param in specs.invalid for param in used):
                failed.add(accelerator)  # a broken record or spec: reported where it is
            else:
                usable[accelerator] = specs
        try:  # the common case, all in one go: units are analysed once for all accelerators
            evaluations.extend(
                evaluate_formula(
                    expr, unit, inputs, {accelerator: specs.values for accelerator, specs in usable.items()}
                )
            )
        except FormulaProblem:
            evaluations.clear()  # find out which accelerators fail, one by one
        else:
            figures.extend(
                HardwareFigure(
                    accelerator,
                    param,
                    specs.figures[param].text,
                    specs.figures[param].basis,
                    specs.figures[param].sources,
                )
                for accelerator, specs in usable.items()
                for param in used
            )
            return evaluations, figures, failed
        for accelerator, specs in usable.items():
            try:
                evaluations.extend(evaluate_formula(expr, unit, inputs, {accelerator: specs.values}))
            except FormulaProblem as problem:
                failed.add(accelerator)
                self.problem(problem, definition, origin, accelerator, items)
                if problem.code not in ("formula-missing-spec", "formula-error"):
                    failed.update(scope)
                    break
                continue
            for param in used:
                figure = specs.figures[param]
                figures.append(HardwareFigure(accelerator, param, figure.text, figure.basis, figure.sources))
        return evaluations, figures, failed

    def problem(
        self,
        problem: FormulaProblem,
        definition: _Definition,
        origin: str,
        accelerator: str | None,
        items: dict[str, int],
    ) -> None:
        code = problem.code
        if code == "formula-missing-spec":
            if accelerator is not None and origin == HW_OWN and items.get(accelerator, -1) >= 0:
                position = self.at("hardware", items[accelerator])
            elif accelerator is None and origin == HW_OWN:
                position = self.at("hardware")
            else:
                position = self.at_definition()
        elif code == "formula-unit-mismatch" and problem.offset is None and definition.unit_at == self.key:
            position = self.at("unit")
        elif code == "invalid-value":
            position = self.at("unit") if definition.unit_at == self.key else self.at_definition()
        else:
            position = self.at_definition(problem.offset)
        self.report(code, position, problem.message, problem.hint)

    # Claims ------------------------------------------------------------------

    def unchecked(self, index: int, row: Expect, reason: str, hardware: str | None = None) -> Claim:
        stated_text = row.value if isinstance(row.value, str) else format_number(float(row.value), 12)
        return Claim(
            index, tuple(row.where.items()), hardware, None, stated_text, None, row.rel_tol, CLAIM_UNCHECKED, reason
        )

    def claim(
        self,
        index: int,
        row: Expect,
        expr: Expr,
        definition: _Definition,
        inputs: dict[str, Any],
        swept: tuple[str, ...],
        scope: list[str],
        failed: set[str | None],
    ) -> Claim:
        ev = self.ev
        unit = definition.unit
        here = ("expect", index)
        if ev.overrides or ev.hardware_override is not None:
            return self.unchecked(index, row, "not checked in a what-if")
        ok = True
        values = dict(inputs)
        where: list[tuple[str, QuantityLike]] = []
        for name, raw in row.where.items():
            if name not in inputs:
                known = ", ".join(f"`{known}`" for known in inputs) or "none"
                self.report(
                    "invalid-value",
                    self.at(*here, "where", name, key=True),
                    f"expect[{index}].where names `{name}`, which is not an input of the formula (its inputs: {known})",
                )
                ok = False
                continue
            try:
                value = ev.quantity(raw)
            except QuantityError as error:
                self.report(
                    "invalid-value",
                    self.at(*here, "where", name),
                    f"expect[{index}].where.{name}: {error.message}",
                    error.hint,
                )
                ok = False
                continue
            given, wanted = _dimension_of(value), _dimension_of(inputs[name])
            if wanted is not None and given != wanted:
                self.report(
                    "unit-mismatch",
                    self.at(*here, "where", name),
                    f"expect[{index}].where.{name}: {format_value(value)} is {format_dimension(given)}, "
                    f"but input `{name}` is {format_dimension(wanted)}",
                    f"write it like the input: {name}: {format_value(_first(inputs[name]))}",
                )
                ok = False
                continue
            values[name] = value
            where.append((name, value))
        loose = [name for name in swept if name not in row.where]
        if loose:
            names = ", ".join(f"`{name}`" for name in loose)
            place = self.at(*here, "where") if row.where else self.at(*here)
            self.report(
                "invalid-value",
                place,
                f"expect[{index}] does not pin the swept input{'s' if len(loose) > 1 else ''} {names}",
                "add it to the claim's `where`, e.g. where: {" + ", ".join(f"{name}: ..." for name in loose) + "}",
            )
            ok = False
        hardware: str | None = None
        if expr.hw_params_used:
            if row.hardware is None:
                self.report(
                    "invalid-value",
                    self.at(*here),
                    f"expect[{index}] names no accelerator, but the expression uses hw.",
                    "add `hardware: <accelerator>` to the claim" + (f", e.g. {scope[0]}" if scope else ""),
                )
                ok = False
            else:
                hardware = ev.resolver.target(row.hardware)
                if hardware is None or ev.resolver.kinds.get(hardware) != "accelerator":
                    return self.unchecked(
                        index, row, "its hardware does not resolve to an accelerator"
                    )  # the link stage reports it
                if hardware not in scope:
                    shown = ", ".join(scope) or "empty"
                    self.report(
                        "invalid-value",
                        self.at(*here, "hardware"),
                        f"expect[{index}].hardware {row.hardware} is not in the formula's hardware scope ({shown})",
                        "add it to the formula's `hardware`, or claim a value for an accelerator in scope",
                    )
                    ok = False
        elif row.hardware is not None:
            self.report(
                "invalid-value",
                self.at(*here, "hardware"),
                f"expect[{index}] names hardware, but the expression uses no hw.<parameter>: the value cannot depend on it",
                "remove `hardware` from the claim",
            )
            ok = False
        stated, stated_text = self.stated(index, row, unit)
        if stated is None:
            ok = False
        if not ok:
            return self.unchecked(index, row, "the claim is malformed", hardware)
        if (hardware if expr.hw_params_used else None) in failed:
            return Claim(
                index,
                tuple(where),
                hardware,
                stated,
                stated_text,
                None,
                row.rel_tol,
                CLAIM_UNCHECKED,
                "the formula could not be evaluated" + (f" on {hardware}" if hardware else ""),
            )
        specs = ev.accelerator(hardware).values if hardware is not None else None  # type: ignore[union-attr]
        try:
            computed = evaluate_point(expr, unit, values, specs)
        except FormulaProblem as problem:
            self.report(
                problem.code if problem.code != "formula-missing-spec" else "formula-error",
                self.at(*here, "value"),
                f"expect[{index}]: {problem.message}",
                problem.hint,
            )
            return Claim(
                index, tuple(where), hardware, stated, stated_text, None, row.rel_tol, CLAIM_UNCHECKED, problem.message
            )
        assert stated is not None
        difference = relative_difference(stated, computed)
        if difference <= row.rel_tol:
            return Claim(index, tuple(where), hardware, stated, stated_text, computed, row.rel_tol, CLAIM_OK)
        pinned = [f"{name} = {format_value(value)}" for name, value in where] + ([f"on {hardware}"] if hardware else [])
        at_point = f" at {', '.join(pinned)}" if pinned else ""
        unit_text = "" if unit.strip() == "1" else f" {unit}"
        message = (
            f"expect[{index}]{at_point} states {stated_text}{unit_text if not isinstance(row.value, str) else ''}, "
            f"computes {format_number(computed, 6)}{unit_text} (off by {_percent(difference)}, tolerance {_percent(row.rel_tol)})"
        )
        hint = f"correct the stated value to {format_number(computed, 6)}, or the formula or its inputs"
        self.report("claim-mismatch", self.at(*here, "value"), message, hint)
        return Claim(index, tuple(where), hardware, stated, stated_text, computed, row.rel_tol, CLAIM_MISMATCH)

    def stated(self, index: int, row: Expect, unit: str) -> tuple[float | None, str]:
        """The claim's value in the formula's unit (a bare number is in that unit), and its text as written."""
        raw = row.value
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            text = format_number(float(raw), 12)
            if not math.isfinite(float(raw)):
                self.report(
                    "invalid-value", self.at("expect", index, "value"), f"expect[{index}].value {raw!r} is out of range"
                )
                return None, text
            return float(raw), text
        try:
            quantity = self.ev.quantity(raw)
        except QuantityError as error:
            self.report(
                "invalid-value",
                self.at("expect", index, "value"),
                f"expect[{index}].value: {error.message}",
                error.hint,
            )
            return None, str(raw)
        if isinstance(quantity, float) or not quantity.unit_items():
            return float(getattr(quantity, "magnitude", quantity)), str(raw).strip()
        try:
            return magnitude_in(quantity, unit), str(raw).strip()
        except QuantityError as error:
            self.report(
                "unit-mismatch",
                self.at("expect", index, "value"),
                f"expect[{index}].value: {error.message} (the formula's unit is {unit})",
                "write the value in the formula's unit, or as a bare number",
            )
            return None, str(raw).strip()


def _first(value: QuantityLike | list[QuantityLike]) -> QuantityLike | None:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _dimension_of(value: QuantityLike | list[QuantityLike]) -> Dimension | None:
    """The dimension of an input (of its first value, for a sweep); None for an empty sweep."""
    first = _first(value)
    if first is None:
        return None
    return DIMENSIONLESS if isinstance(first, (int, float)) else to_base(first)[1]


def _percent(fraction: float) -> str:
    if math.isinf(fraction):
        return "infinitely"
    return f"{format_number(fraction * 100, 2 if fraction * 100 >= 1 else 1)}%"


# ---------------------------------------------------------------------------
# Positions inside an expression


def expression_position(source: Source, path: Path, value: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) in the file of `value[offset]`, where `value` is the string scalar at `path`.

    The k-th non-blank character of a plain, single-quoted or block scalar's
    value is the k-th non-blank character of its source text (folding and
    indentation only add or remove blanks), counted from the end so that a
    tag or anchor before the scalar does not shift it. Escapes in a
    double-quoted scalar can break that; then the scalar's start is returned.
    """
    span = source.span(path)
    start = source.position(path)
    if span is None:
        return start
    index = line_index(source)
    text = index.text
    begin, end = span.start, span.end
    if span.style in ("|", ">"):
        newline = text.find("\n", begin, end)
        begin = newline + 1 if newline >= 0 else end
    elif span.style in ("'", '"'):
        end -= 1  # the closing quote
        quote = text.find(span.style, begin, end)
        begin = quote + 1 if quote >= 0 else begin
    in_source = [i for i in range(begin, end) if not text[i].isspace()]
    in_value = [i for i, char in enumerate(value) if not char.isspace()]
    extra = len(in_source) - len(in_value)
    if extra < 0 or not in_source or (span.style == '"' and extra != 0):
        return start
    before = sum(1 for i in in_value if i < offset)
    if before >= len(in_value):
        return _after(index, in_source[-1])
    return index.position(in_source[extra + before])


def _after(index: Any, last: int) -> tuple[int, int]:
    line, column = index.position(last)
    return line, column + 1


# ---------------------------------------------------------------------------
# The stage and the entry point of `flopkb eval`


def _formula_entries(kb: KnowledgeBase) -> Iterator[Entry]:
    for entry in kb.entries.values():
        kind, _, formula_ids = entry.summary  # not the model: a cached entry's is loaded only when needed
        if formula_ids and kind in ("flop", "fact") and entry.source is not None:
            yield entry


def _repeated_ids(entry: Entry) -> Iterator[Diagnostic]:
    """A formula id used twice in one record: only the first formula of that id is evaluated (and linkable)."""
    first: dict[str, int] = {}
    for index, formula in enumerate(formulas_of(entry.record)):  # type: ignore[arg-type]
        if first.setdefault(formula.id, index) != index:
            assert entry.source is not None
            line, column = entry.source.position(("formulas", index, "id"))
            yield make(
                "invalid-value",
                entry.path,
                line,
                column,
                f"formulas[{index}].id: '{formula.id}' is already the id of formulas[{first[formula.id]}]; formula ids are unique within a record",
                "rename one of the two formulas",
            )


def evaluate_entry(evaluator: _Evaluator, entry: Entry) -> list[FormulaResult]:
    return [evaluator.evaluate(located) for located in evaluator.formulas(entry.id).values()]


MEMO = "formulas"
"""`Entry.derived` key of a record's formula problems: (dependency key, problems, whether a ref chain ran into a cycle)."""


def _evaluate(
    kb: KnowledgeBase, entries: list[Entry]
) -> tuple[FormulaResults, dict[str, tuple[list[Diagnostic], bool]]]:
    """The formulas of `entries` evaluated in order, and per entry its problems and whether it touched a cycle of refs."""
    evaluator = _Evaluator(kb)
    results: FormulaResults = {}
    problems: dict[str, tuple[list[Diagnostic], bool]] = {}
    for entry in entries:
        reported = len(evaluator.cycles)
        found = results[entry.id] = evaluate_entry(evaluator, entry)
        mine = [problem for result in found for problem in result.problems]
        mine.extend(_repeated_ids(entry))
        mine.extend(evaluator.cycles[reported:])
        problems[entry.id] = (
            mine,
            any((entry.id, formula_id) in evaluator.cyclic for formula_id in evaluator.formulas(entry.id)),
        )
    return results, problems


def _remember(kb: KnowledgeBase, problems: dict[str, tuple[list[Diagnostic], bool]]) -> None:
    for record_id, (mine, cyclic) in problems.items():
        entry = kb.entries[record_id]
        key = dependency_key(kb, record_id) if entry.digest is not None else None
        if key is not None:
            entry.derived[MEMO] = (key, tuple(mine), cyclic)


def check_formulas(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """The stage: evaluate every formula and claim of the base, store the results (`kb.formulas`), report problems.

    With the load cache, a record's problems are kept in its `derived` data
    with the `flopkb.links.memo.dependency_key` of what it computes with, and taken
    back while the key is the same; only the other records are evaluated.
    The results themselves (`kb.formulas`) are then evaluated on first use,
    which `check` never makes. Which formula of a cycle of refs reports it
    depends on the order of evaluation: a record whose refs reach a cycle has
    no dependency key, so it is always evaluated (in order, as in a cold run),
    and should evaluating only some records still run into a cycle, the whole
    base is evaluated instead.
    """
    entries = list(_formula_entries(kb))
    kept: dict[str, tuple[Diagnostic, ...]] = {}
    for entry in entries:
        memo = entry.derived.get(MEMO)
        if memo is not None and not memo[2] and memo[0] == dependency_key(kb, entry.id):
            kept[entry.id] = memo[1]
    if kept:
        _, fresh = _evaluate(kb, [entry for entry in entries if entry.id not in kept])
        if not any(cyclic for _, cyclic in fresh.values()):
            _remember(kb, fresh)
            kb.formulas_later(lambda: _evaluate(kb, list(_formula_entries(kb)))[0])
            return iter(
                [
                    *(problem for mine in kept.values() for problem in mine),
                    *(problem for mine, _ in fresh.values() for problem in mine),
                ]
            )
    results, fresh = _evaluate(kb, entries)
    _remember(kb, fresh)
    kb.formulas = results
    return iter([problem for mine, _ in fresh.values() for problem in mine])


def evaluate_record(
    kb: KnowledgeBase, record_id: str, overrides: Mapping[str, RawValue] | None = None, hardware: str | None = None
) -> tuple[list[FormulaResult], list[Diagnostic]]:
    """A what-if: the record's formulas evaluated with `overrides` for inputs (by name, in every formula that has
    the input) and, when `hardware` (an accelerator id) is given, on that accelerator alone. Claims are not checked
    in a what-if. Returns the results and the diagnostics of the evaluation (cycles included)."""
    evaluator = _Evaluator(kb, overrides, hardware)
    entry = kb.entries[record_id]
    results = evaluate_entry(evaluator, entry) if entry.record is not None and entry.source is not None else []
    problems = [problem for result in results for problem in result.problems]
    problems += [cycle for cycle in evaluator.cycles if cycle.path == entry.path]
    return results, sorted(set(problems))


__all__ = [
    "CLAIM_MISMATCH",
    "CLAIM_OK",
    "CLAIM_UNCHECKED",
    "Claim",
    "FormulaResult",
    "FormulaResults",
    "HardwareFigure",
    "check_formulas",
    "evaluate_record",
    "expression_position",
]

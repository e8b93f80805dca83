"""The formula stage: every formula of every flop and fact evaluated against its hardware, and its claims re-computed.

For each formula of a valid `flop` or `fact` record (docs/formulas.md has the
author's view), one module per step:

1. **Effective definition** (`flopkb.formulas.definitions`): its own `expr`,
   or the definition a `ref` chain leads to, layered under its own fields;
   `formula-cycle` when refs loop.
2. **Parse** the expression (`flopkb.formulas.expr`): `formula-syntax` at the exact
   line and column of the offending character, also inside block scalars
   (`flopkb.formulas.positions`). A problem in text the formula borrows (a
   shared expression, unit or input that does not parse) is reported once,
   where it is written.
3. **Hardware scope** (`flopkb.formulas.scope`), when the expression uses `hw.`;
   every accelerator's specs are read once for the whole stage
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
5. **Claims** (`flopkb.formulas.claims`): each `expect` row re-computed and
   compared with its stated `value` (`claim-mismatch`) or with the source
   measurement it names (`measurement-disagrees`).

Everything computed is kept on the knowledge base (`kb.formulas`, record id ->
`FormulaResult` per formula in record order, `flopkb.formulas.results`) for
the site, the evidence page and `flopkb eval`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from flopkb.formulas.claims import ClaimChecker
from flopkb.formulas.context import Evaluator, FormulaReporter
from flopkb.formulas.definitions import Definition, repeated_ids
from flopkb.formulas.evaluate import Evaluation, FormulaProblem, Scope, evaluate_formula, value_count
from flopkb.formulas.expr import Expr, ExprSyntaxError, walk
from flopkb.formulas.names import unknown_names
from flopkb.formulas.positions import expression_position
from flopkb.formulas.regime import Condition, holds_at, mark
from flopkb.formulas.results import (
    HW_NONE,
    HW_OWN,
    FormulaResult,
    FormulaResults,
    HardwareFigure,
    LaterResults,
    RawValue,
)
from flopkb.formulas.specs import AcceleratorSpecs
from flopkb.formulas.units import QuantityError
from flopkb.links.memo import dependency_key
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic

if TYPE_CHECKING:
    from flopkb.formulas.evaluate import QuantityLike
    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase


class _FormulaRun(FormulaReporter):
    """Evaluating one formula: its diagnostics, evaluations and claims."""

    # The run -----------------------------------------------------------------

    def run(self) -> FormulaResult:
        ev, formula = self.ev, self.located.formula
        fields: dict[str, Any] = {"title": formula.title, "unit": formula.unit, "inputs": dict(formula.inputs)}
        definition = ev.definitions.definition(self.key)
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
                self.report("formula-syntax", self.at_definition(expr.offset), f"expr: {expr.message}", expr.hint)
            return self.finish(fields)
        overrides = {
            name: value for name, value in ev.overrides.items() if name in definition.inputs or name in expr.inputs_used
        }
        written = {**definition.inputs, **overrides} if overrides else definition.inputs
        condition = self.regime(definition, written)
        if condition is not None and not condition.hw_params_used <= expr.hw_params_used:
            # a regime over hw. puts the formula on its accelerators, even when its value does not depend on them
            expr = dataclasses.replace(expr, hw_params_used=expr.hw_params_used | condition.hw_params_used)
        over = expr.inputs_used | (condition.inputs_used if condition is not None else frozenset())
        swept = tuple(name for name, value in written.items() if isinstance(value, list) and name in over)
        scope, origin, items = ev.scope(self.located, definition) if expr.hw_params_used else ([], HW_NONE, {})
        fields.update(expr=expr, inputs=written, swept=swept, hardware=tuple(scope), hardware_from=origin)
        unit_ok = self.check_unit(definition)
        inputs = self.read_inputs(definition, written)
        names_ok = not self.unjudged(expr, definition) and self.check_names(expr, definition, written)
        if not names_ok or not unit_ok or inputs is None:
            return self.finish(fields)
        evaluations, figures, failed = self.evaluate_all(expr, definition, inputs, written, swept, scope, origin, items)
        if condition is not None and evaluations:
            evaluations = self.mark_regime(condition, definition, inputs, swept, evaluations)
        fields["valid_when"] = condition
        checker = ClaimChecker(self, condition if condition is not None and not self.regime_failed else None)
        claims = [
            checker.claim(index, row, expr, definition, inputs, swept, scope, failed)
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
            checker = ClaimChecker(self)
            fields["claims"] = tuple(
                checker.unchecked(index, row, "the formula could not be evaluated")
                for index, row in enumerate(self.located.formula.expect)
            )
        fields.setdefault("expr", None)
        fields.setdefault("swept", ())
        fields.setdefault("hardware", ())
        fields.setdefault("hardware_from", HW_NONE)
        return FormulaResult(self.key[0], self.key[1], problems=tuple(self.problems), **fields)

    regime_failed = False

    def at_regime(self, definition: Definition, offset: int | None = None) -> tuple[int, int]:
        """The formula's `valid_when` (at `offset` in it), or the `ref` of a formula borrowing it."""
        located = self.located
        if definition.valid_when_at != self.key:
            return self.at("ref")
        text = located.formula.valid_when or ""
        if offset is None:
            return self.at("valid_when")
        return expression_position(located.source, located.path("valid_when"), text, offset)

    def regime(self, definition: Definition, written: Mapping[str, RawValue]) -> Condition | None:
        """The formula's parsed `valid_when`, or None (without one, or when it does not parse or names what is no
        input (of `written`) nor hardware parameter: reported there)."""
        if definition.valid_when is None:
            return None
        condition = self.ev.condition(definition.valid_when)
        if isinstance(condition, ExprSyntaxError):
            self.report(
                "formula-syntax",
                self.at_regime(definition, condition.offset),
                f"valid_when: {condition.message}",
                condition.hint,
            )
            return None
        vocabulary = self.ev.kb.vocabulary
        sides = (node for comparison in condition.comparisons for node in walk(comparison.difference.root))
        unknown = unknown_names(sides, written, vocabulary.parameters) if vocabulary is not None else []
        if definition.valid_when_at == self.key:
            for offset, message, hint in unknown:
                self.report("formula-unknown-name", self.at_regime(definition, offset), f"valid_when: {message}", hint)
        return None if unknown else condition

    def mark_regime(
        self,
        condition: Condition,
        definition: Definition,
        inputs: dict[str, Any],
        swept: tuple[str, ...],
        evaluations: list[Evaluation],
    ) -> list[Evaluation]:
        """The evaluations marked in or outside the regime; unmarked when the condition does not evaluate."""
        scopes: list[Scope] = []
        for hardware in dict.fromkeys(evaluation.hardware for evaluation in evaluations):
            specs = self.ev.accelerator(hardware) if hardware is not None else None
            scopes.append((hardware, specs.values if specs is not None else {}))
        try:
            return mark(evaluations, holds_at(condition, inputs, scopes, swept))
        except FormulaProblem as problem:
            self.regime_failed = True
            self.report(
                problem.code if problem.code != "formula-missing-spec" else "formula-error",
                self.at_regime(definition, problem.offset),
                f"valid_when: {problem.message}",
                problem.hint,
            )
            return evaluations

    def check_unit(self, definition: Definition) -> bool:
        error = self.ev.unit_problem(definition.unit)
        if error is None:
            return True
        if definition.unit_at == self.key:
            self.report("invalid-value", self.at("unit"), f"unit: {error.message}", error.hint)
        return False

    def check_names(self, expr: Expr, definition: Definition, written: Mapping[str, RawValue]) -> bool:
        """Every name of the expression is an input (of `written`) or a `hw.<parameter>` of the vocabulary (else a
        `formula-unknown-name` for each, all in one run)."""
        vocabulary = self.ev.kb.vocabulary
        if vocabulary is None:
            return True  # no parameters to judge `hw.` by: the evaluation judges the inputs
        unknown = unknown_names(walk(expr.root), written, vocabulary.parameters)
        if definition.expr_at == self.key:  # a shared expression is reported where it is written
            for offset, message, hint in unknown:
                self.report("formula-unknown-name", self.at_definition(offset), message, hint)
        return not unknown

    def read_inputs(
        self, definition: Definition, written: dict[str, RawValue]
    ) -> dict[str, QuantityLike | list[QuantityLike]] | None:
        """Every input read as a quantity (lists stay lists), or None when one does not read (reported there)."""
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
                        self.report(
                            "invalid-value", self.at(*path), f"input `{cut(name)}`: {error.message}", error.hint
                        )
            inputs[name] = read if isinstance(value, list) else (read[0] if read else 0.0)
        return inputs if ok else None

    def evaluate_all(
        self,
        expr: Expr,
        definition: Definition,
        inputs: dict[str, Any],
        written: dict[str, RawValue],
        swept: tuple[str, ...],
        scope: list[str],
        origin: str,
        items: dict[str, int],
    ) -> tuple[list[Evaluation], list[HardwareFigure], set[str | None]]:
        """Evaluations on each accelerator in scope (once without `hw.`), the figures used, the ones that failed.

        Counted against the record's and the base's limits first (a `formula-error` when over); computed once
        per distinct expression, unit, inputs and accelerators, however many formulas borrow it."""
        ev = self.ev
        refusal = ev.charge(self.key[0], value_count(expr, inputs, len(scope), swept))
        if refusal is not None:
            self.report(
                "formula-error",
                self.at_definition(),
                refusal,
                "sweep fewer points, or borrow (ref) fewer formulas with large sweeps in one record",
            )
            return [], [], {None, *scope}
        key = _evaluation_key(definition, written, swept, scope)
        found = ev.evaluated.get(key) if key is not None else None
        if found is None:
            found = self.compute(expr, definition.unit, inputs, swept, scope)
            if key is not None:
                ev.evaluated[key] = found
        evaluations, figures, failed, problems = found
        for problem, accelerator in problems:
            self.problem(problem, definition, origin, accelerator, items)
        return list(evaluations), list(figures), set(failed)

    def compute(
        self, expr: Expr, unit: str, inputs: dict[str, Any], swept: tuple[str, ...], scope: list[str]
    ) -> tuple[list[Evaluation], list[HardwareFigure], set[str | None], list[tuple[FormulaProblem, str | None]]]:
        """`evaluate_all`'s work: the evaluations, figures, failed accelerators, and the problems met (with the
        accelerator each is about), to be reported by every formula that borrows this computation."""
        ev = self.ev
        evaluations: list[Evaluation] = []
        figures: list[HardwareFigure] = []
        failed: set[str | None] = set()
        problems: list[tuple[FormulaProblem, str | None]] = []
        if not expr.hw_params_used:
            try:
                evaluations.extend(evaluate_formula(expr, unit, inputs, also_swept=swept))
            except FormulaProblem as problem:
                failed.add(None)
                problems.append((problem, None))
            return evaluations, figures, failed, problems
        if not scope:
            failed.add(None)
            try:
                evaluate_formula(expr, unit, inputs, {}, swept)
            except FormulaProblem as problem:
                problems.append((problem, None))
            return evaluations, figures, failed, problems
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
                    expr, unit, inputs, {accelerator: specs.values for accelerator, specs in usable.items()}, swept
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
            return evaluations, figures, failed, problems
        for accelerator, specs in usable.items():
            try:
                evaluations.extend(evaluate_formula(expr, unit, inputs, {accelerator: specs.values}, swept))
            except FormulaProblem as problem:
                failed.add(accelerator)
                problems.append((problem, accelerator))
                if problem.code not in ("formula-missing-spec", "formula-error"):
                    failed.update(scope)
                    break
                continue
            for param in used:
                figure = specs.figures[param]
                figures.append(HardwareFigure(accelerator, param, figure.text, figure.basis, figure.sources))
        return evaluations, figures, failed, problems

    def problem(
        self,
        problem: FormulaProblem,
        definition: Definition,
        origin: str,
        accelerator: str | None,
        items: dict[str, int],
    ) -> None:
        code = problem.code
        if code == "formula-missing-spec" and accelerator is None and self.scope_told_wrong(definition):
            return  # no accelerator left in a scope whose other items the schema told wrong
        if code == "formula-missing-spec":
            if accelerator is not None and origin == HW_OWN and items.get(accelerator, -1) >= 0:
                position = self.at("hardware", items[accelerator])
            elif accelerator is None and origin == HW_OWN:
                position = self.at("hardware")
            else:
                position = self.at_regime(definition) if problem.of_regime else self.at_definition()
        elif problem.in_inputs is not None and definition.input_at.get(str(problem.in_inputs[0])) == self.key:
            position = self.at("inputs", *problem.in_inputs)
        elif code == "formula-unit-mismatch" and problem.offset is None and definition.unit_at == self.key:
            position = self.at("unit")
        elif code == "invalid-value":
            position = self.at("unit") if definition.unit_at == self.key else self.at_definition()
        else:
            position = self.at_definition(problem.offset)
        hint = problem.hint
        if problem.computes is not None:
            self.computes = problem.computes
            hint = self.unit_fix(problem.computes, definition.unit) or hint
        slip = self.unit_slip() if code == "formula-unit-mismatch" and problem.offset is None else None
        if slip is None:
            self.report(code, position, problem.message, hint)
        else:
            self.report(code, position, f"{problem.message}: is {slip} meant to be `unit`?", f"rename {slip} to `unit`")

    # Claims ------------------------------------------------------------------


def _evaluation_key(
    definition: Definition, written: dict[str, RawValue], swept: tuple[str, ...], scope: list[str]
) -> Hashable | None:
    """What an evaluation depends on (within one `Evaluator`), or None when an input cannot be a key."""
    inputs = tuple((name, tuple(value) if isinstance(value, list) else value) for name, value in written.items())
    key = (definition.expr, definition.unit, inputs, swept, tuple(scope))
    try:
        hash(key)
    except TypeError:
        return None
    return key


# ---------------------------------------------------------------------------
# The stage and the entry point of `flopkb eval`


def _formula_entries(kb: KnowledgeBase) -> Iterator[Entry]:
    for entry in kb.entries.values():
        kind, _, formula_ids = entry.summary[:3]  # not the model: a cached entry's is loaded only when needed
        if formula_ids and kind in ("flop", "fact") and entry.source is not None:
            yield entry


def evaluate_entry(evaluator: Evaluator, entry: Entry) -> list[FormulaResult]:
    return [_FormulaRun(evaluator, located).run() for located in evaluator.definitions.formulas(entry.id).values()]


MEMO = "formula-problems"
"""`Entry.derived` key of a record's formula problems: (dependency key, problems, whether they depend on other
records than its dependencies: a ref chain that hit a cycle, or the base's limit of work; the values computed)."""


def _evaluate(
    kb: KnowledgeBase, entries: list[Entry], charged: int = 0
) -> tuple[FormulaResults, dict[str, tuple[list[Diagnostic], bool, int]]]:
    """The formulas of `entries` evaluated in order, after `charged` values counted against the base's limit; per
    entry its problems, whether they depend on more than its dependencies, and how many values it computed."""
    evaluator = Evaluator(kb)
    evaluator.total_values = charged
    results: dict[str, list[FormulaResult]] = {}
    problems: dict[str, tuple[list[Diagnostic], bool, int]] = {}
    for entry in entries:
        reported = len(evaluator.definitions.cycles)
        found = results[entry.id] = evaluate_entry(evaluator, entry)
        mine = [problem for result in found for problem in result.problems]
        mine.extend(repeated_ids(entry))
        mine.extend(evaluator.definitions.cycles[reported:])
        cyclic = any(
            (entry.id, formula_id) in evaluator.definitions.cyclic
            for formula_id in evaluator.definitions.formulas(entry.id)
        )
        problems[entry.id] = (mine, cyclic or entry.id in evaluator.over_base_limit, evaluator.values.get(entry.id, 0))
    kb.values_refused = bool(evaluator.over_base_limit)
    return results, problems


def _remember(kb: KnowledgeBase, problems: dict[str, tuple[list[Diagnostic], bool, int]]) -> None:
    for record_id, (mine, unkeyed, values) in problems.items():
        entry = kb.entries[record_id]
        key = dependency_key(kb, record_id) if entry.digest is not None else None
        if key is not None:
            entry.derived[MEMO] = (key, tuple(mine), unkeyed, values)


def _results_key(kb: KnowledgeBase, record_id: str, vocabulary: str) -> tuple[object, ...] | None:
    """What a record's formula results are a function of: the vocabulary, its content and what it computes with."""
    entry = kb.entries[record_id]
    dependencies = dependency_key(kb, record_id) if entry.digest is not None else None
    return None if dependencies is None else (vocabulary, entry.digest, dependencies)


def check_formulas(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """The stage: evaluate every formula and claim of the base, store the results (`kb.formulas`), report problems.

    With the load cache, a record's problems are kept in its `derived` data
    with the `flopkb.links.memo.dependency_key` of what it computes with, and taken
    back while the key is the same; only the other records are evaluated.
    The results themselves (`kb.formulas`) are then evaluated record by record
    on first use, which `check` never makes (without cycles, a record's results
    do not depend on which records were evaluated before it). Which formula of a cycle of refs reports it
    depends on the order of evaluation: a record whose refs reach a cycle has
    no dependency key, so it is always evaluated (in order, as in a cold run),
    and should evaluating only some records still run into a cycle, the whole
    base is evaluated instead. The base's limit of work is the same: the values
    the kept records computed are counted first, and a record refused for that
    limit makes the whole base evaluated in order.
    """
    entries = list(_formula_entries(kb))
    kept: dict[str, tuple[tuple[Diagnostic, ...], int]] = {}
    for entry in entries:
        memo = entry.derived.get(MEMO)
        if memo is not None and not memo[2] and memo[0] == dependency_key(kb, entry.id):
            kept[entry.id] = (memo[1], memo[3])
    if kept:
        charged = sum(values for _, values in kept.values())
        _, fresh = _evaluate(kb, [entry for entry in entries if entry.id not in kept], charged)
        if not any(unkeyed for _, unkeyed, _ in fresh.values()):
            _remember(kb, fresh)
            evaluator = Evaluator(kb)
            vocabulary = repr(kb.vocabulary)
            kb.formulas = LaterResults(
                [entry.id for entry in entries],
                lambda record_id: evaluate_entry(evaluator, kb.entries[record_id]),
                lambda record_id: _results_key(kb, record_id, vocabulary),
            )
            return iter(
                [
                    *(problem for mine, _ in kept.values() for problem in mine),
                    *(problem for mine, _, _ in fresh.values() for problem in mine),
                ]
            )
    results, fresh = _evaluate(kb, entries)
    _remember(kb, fresh)
    kb.formulas = results
    return iter([problem for mine, _, _ in fresh.values() for problem in mine])


def evaluate_record(
    kb: KnowledgeBase, record_id: str, overrides: Mapping[str, RawValue] | None = None, hardware: str | None = None
) -> tuple[list[FormulaResult], list[Diagnostic]]:
    """A what-if: the record's formulas evaluated with `overrides` for inputs (by name, in every formula that has
    the input) and, when `hardware` (an accelerator id) is given, on that accelerator alone. Claims are not checked
    in a what-if. Returns the results and the diagnostics of the evaluation (cycles included)."""
    evaluator = Evaluator(kb, overrides, hardware)
    entry = kb.entries[record_id]
    results = evaluate_entry(evaluator, entry) if entry.record is not None and entry.source is not None else []
    problems = [problem for result in results for problem in result.problems]
    problems += [cycle for cycle in evaluator.definitions.cycles if cycle.path == entry.path]
    return results, sorted(set(problems))


__all__ = ["check_formulas", "evaluate_record"]

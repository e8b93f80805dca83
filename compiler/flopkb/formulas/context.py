"""What evaluating formulas shares: one run's caches over a knowledge base, and where a formula's problems go.

`Evaluator` holds, for one run of the formula stage (or one `flopkb eval`
what-if), every lookup that more than one formula makes: definitions
(`flopkb.formulas.definitions`), parsed expressions, quantities, units,
accelerator specs and source measurements, each read once; the evaluations of
each distinct (expression, unit, inputs, accelerators), so that a formula
borrowed by many `ref`s is computed once; and the work done, which is bounded
per record (`RECORD_VALUE_LIMIT` values, refs included) and per base
(`BASE_VALUE_LIMIT`). `FormulaReporter` turns a problem of one formula into a
diagnostic at its place in the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from flopkb.formulas.definitions import Definition, Definitions, Located
from flopkb.formulas.evaluate import BASE_VALUE_LIMIT, RECORD_VALUE_LIMIT, QuantityLike
from flopkb.formulas.expr import Expr, ExprSyntaxError, parse
from flopkb.formulas.measurements import SourceMeasurements, read_measurements
from flopkb.formulas.positions import expression_position
from flopkb.formulas.regime import Condition, parse_condition
from flopkb.formulas.results import Key, RawValue
from flopkb.formulas.scope import default_told_wrong, hardware_scope
from flopkb.formulas.specs import AcceleratorSpecs, read_specs
from flopkb.formulas.units import (
    Dimension,
    QuantityError,
    dimension_of,
    dimension_unit,
    format_dimension,
    parse_quantity,
    parse_unit,
    to_base,
    written_parts,
)
from flopkb.links.resolver import Resolver
from flopkb.load.models import Formula
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.hints import closest

if TYPE_CHECKING:
    from flopkb.formulas.units import Quantity, Unit
    from flopkb.kb.knowledge_base import KnowledgeBase


class Evaluator:
    """One run over a knowledge base: the caches of definitions, expressions, quantities, specs and measurements."""

    def __init__(
        self, kb: KnowledgeBase, overrides: Mapping[str, RawValue] | None = None, hardware: str | None = None
    ) -> None:
        self.kb = kb
        self.resolver = Resolver.of(kb)
        self.definitions = Definitions(kb)
        self.overrides = dict(overrides or {})
        self.hardware_override = hardware
        self._exprs: dict[str, Expr | ExprSyntaxError] = {}
        self._conditions: dict[str, Condition | ExprSyntaxError] = {}
        self._quantities: dict[str, Quantity | QuantityError] = {}
        self._units: dict[str, Unit | QuantityError] = {}
        self._specs: dict[str, AcceleratorSpecs | None] = {}
        self._measurements: dict[str, SourceMeasurements | None] = {}
        self.evaluated: dict[Hashable, Any] = {}
        """What `_FormulaRun.evaluate_all` computed, by (expression, unit, inputs, accelerators)."""
        self.values: dict[str, int] = {}
        """How many values each record's formulas have computed (borrowed ones included)."""
        self.total_values = 0
        self.over_base_limit: set[str] = set()
        """Records a formula of which was refused for the base's limit: their problems depend on the other records."""

    @property
    def what_if(self) -> bool:
        return bool(self.overrides) or self.hardware_override is not None

    def accelerator(self, record_id: str) -> AcceleratorSpecs | None:
        if record_id not in self._specs:
            entry = self.kb.entries.get(record_id)
            self._specs[record_id] = read_specs(entry, self.kb.vocabulary)[0] if entry is not None else None
        return self._specs[record_id]

    def measurements(self, record_id: str) -> SourceMeasurements | None:
        if record_id not in self._measurements:
            entry = self.kb.entries.get(record_id)
            self._measurements[record_id] = read_measurements(entry)[0] if entry is not None else None
        return self._measurements[record_id]

    def expression(self, text: str) -> Expr | ExprSyntaxError:
        return _parsed_once(self._exprs, text, parse, ExprSyntaxError)

    def condition(self, text: str) -> Condition | ExprSyntaxError:
        return _parsed_once(self._conditions, text, parse_condition, ExprSyntaxError)

    def quantity(self, value: RawValue) -> QuantityLike:
        """A single input value read as a quantity (bare numbers stay floats); raises QuantityError."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
            if not math.isfinite(number):
                raise QuantityError(f"the number {value!r} is out of range")
            return number
        if not isinstance(value, str):
            return parse_quantity(value)  # raises the right QuantityError
        found = _parsed_once(self._quantities, value, parse_quantity, QuantityError)
        if isinstance(found, QuantityError):
            raise found
        return found

    def unit_problem(self, unit: str) -> QuantityError | None:
        found = _parsed_once(self._units, unit, parse_unit, QuantityError)
        return found if isinstance(found, QuantityError) else None

    def charge(self, record_id: str, count: int) -> str | None:
        """Count `count` more values for the record `record_id`; or, when that is more than the record's or the
        base's limit allows, count nothing and say why."""
        record = self.values.get(record_id, 0) + count
        if record > RECORD_VALUE_LIMIT:
            return (
                f"the record's formulas would compute {record:,} values in all, refs included; "
                f"the limit is {RECORD_VALUE_LIMIT:,} a record"
            )
        if self.total_values + count > BASE_VALUE_LIMIT:
            self.over_base_limit.add(record_id)
            return f"the knowledge base's formulas would compute more than {BASE_VALUE_LIMIT:,} values in all"
        self.values[record_id] = record
        self.total_values += count
        return None

    def scope(self, located: Located, definition: Definition) -> tuple[list[str], str, dict[str, int]]:
        return hardware_scope(self.resolver, located, definition, self.hardware_override)


class FormulaReporter:
    """The diagnostics of one formula, each reported once, at a place in its record's file."""

    def __init__(self, evaluator: Evaluator, located: Located) -> None:
        self.ev = evaluator
        self.located = located
        self.key: Key = (located.entry.id, located.formula.id)
        self.problems: list[Diagnostic] = []
        self._seen: set[tuple[str, int, int, str]] = set()
        self.computes: Dimension | None = None
        """What the expression computes, when the formula's `unit` is of another dimension (told at `unit`): a
        claim of that dimension is then right, and not told wrong."""

    def report(self, code: str, position: tuple[int, int], message: str, hint: str | None = None) -> None:
        key = (code, *position, message)
        if key not in self._seen:
            self._seen.add(key)
            self.problems.append(make(code, self.located.entry.path, *position, message, hint))

    def at(self, *rest: str | int, key: bool = False) -> tuple[int, int]:
        return self.located.source.position(self.located.path(*rest), key=key)

    def rejected(self, *rest: str | int) -> bool:
        """Whether the schema told the formula's part at `rest` wrong (`Source.rejects`): what the model holds in its
        place is no author's, and is not judged."""
        return self.located.source.rejects(self.located.path(*rest))

    def unjudged(self, expr: Expr, definition: Definition) -> bool:
        """Whether the schema told wrong a part of the formula that its values depend on (the `unit` or `inputs` of
        it or of a formula it borrows, its own `hardware` when it uses hw., in whose place another scope would be
        used): what the model holds in its place is no author's, so the formula is not evaluated, nor its claims
        checked, until it is fixed."""
        formulas = self.ev.definitions.formulas
        chain = (formulas(key[0]).get(key[1]) for key in (self.key, *definition.chain))
        if any(located is not None and _values_told_wrong(located) for located in chain):
            return True
        own = self.located.formula.hardware is None and self.ev.hardware_override is None
        return bool(expr.hw_params_used) and own and self.rejected("hardware")

    def scope_told_wrong(self, definition: Definition) -> bool:
        """Whether the formula's hardware scope is short of a part the schema told wrong (an item of its own
        `hardware`, or of a list the default scope is read from): what it lacks is not the author's omission."""
        if self.ev.hardware_override is not None:
            return False
        if definition.hardware is None:
            return default_told_wrong(self.located)
        return definition.hardware_at == self.key and self.rejected("hardware")

    def claim_label(self, index: int) -> str:
        """How a message names the formula's claim `index`: `expect[<its index in the file>]`."""
        return f"expect[{self.located.source.written(self.located.path('expect', index))[-1]}]"

    def unit_slip(self) -> str | None:
        """A key of the formula that was meant to be `unit`, when no `unit` is written (`units` on line 8): the
        formula is then dimensionless, which no message should blame on the author without naming it."""
        written = self.located.written
        if "unit" in written:
            return None
        fields = sorted(Formula.model_fields)
        for key in written:
            if isinstance(key, str) and key not in fields and closest(key, fields) == ["unit"]:
                return f"`{cut(key)}` on line {self.at(key, key=True)[0]}"
        return None

    def unit_fix(self, computes: Dimension, unit: str) -> str | None:
        """The fix of a `unit` that is not of the dimension its expression `computes`, as the formula's claims tell
        it: their unit, when one of them is of that dimension; to fix the expression, when they are all of `unit`'s
        (`unit` and the claims agree); None when they tell nothing."""
        claimed = self.claimed_units()
        own = next((written for dimension, written in claimed if dimension == computes), None)
        if own is not None:
            return f"give the formula the unit its claim is written in: `unit: {own}`"
        if claimed and all(dimension == dimension_of(unit) for dimension, _ in claimed):
            return (
                f"the claims are {format_dimension(dimension_of(unit))}, as `unit` is: fix the expression, "
                f"which comes out in {dimension_unit(computes)}"
            )
        return None

    def claimed_units(self) -> list[tuple[Dimension, str]]:
        """The dimension and unit of each claim of the formula stated as a quantity that reads (a bare number is in
        the formula's unit, whatever it is)."""
        claimed = []
        for row in self.located.formula.expect:
            if not isinstance(row.value, str):
                continue
            try:
                quantity = self.ev.quantity(row.value)
            except QuantityError:
                continue  # told at the claim
            if not isinstance(quantity, (int, float)) and quantity.unit_items():
                claimed.append((to_base(quantity)[1], written_parts(row.value.strip())[1]))
        return claimed

    def at_definition(self, offset: int | None = None) -> tuple[int, int]:
        """The expression (at `offset` in it, when it is the formula's own), or the `ref` of a formula borrowing it."""
        located = self.located
        if located.formula.ref is not None:
            return self.at("ref")
        if offset is None:
            return self.at("expr")
        return expression_position(located.source, located.path("expr"), located.formula.expr or "", offset)


def _values_told_wrong(located: Located) -> bool:
    """Whether the schema told wrong the formula's `unit` or an input (not an item of a sweep: the others are the
    author's points)."""
    source, written = located.source, located.written.get("inputs")
    if isinstance(written, dict):
        inputs_wrong = any(name not in located.formula.inputs for name in written)
    else:
        inputs_wrong = source.rejects(located.path("inputs"))
    return inputs_wrong or source.rejects(located.path("unit"))


_T = TypeVar("_T")
_E = TypeVar("_E", bound=Exception)


def _parsed_once(cache: dict[str, _T | _E], text: str, parse: Callable[[str], _T], error: type[_E]) -> _T | _E:
    """`parse(text)`, or the `error` it raised, each text parsed once per evaluation."""
    if text not in cache:
        try:
            cache[text] = parse(text)
        except error as raised:
            cache[text] = raised
    return cache[text]

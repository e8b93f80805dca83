"""Effective definitions: a formula's expression, unit, inputs and hardware, following `ref` chains.

A formula with `expr` defines itself. A formula with `ref: <target>#<formula-id>`
takes the definition of the formula it refers to (resolved like any typed
ref, following further refs), layered under its own fields:

- `expr`: the expression at the end of the chain;
- `unit`: the nearest `unit` written along the chain, starting with the
  formula itself; `"1"` when none is written;
- `inputs`: the inputs of the whole chain merged name by name, the nearer
  formula winning (so the formula's own inputs win);
- `hardware`: the nearest `hardware` written along the chain, starting with
  the formula itself; when none is, the default scope of the record that
  holds the formula (`flopkb.formulas.scope`);
- `title` and `valid_when`: its own, else the nearest along the chain; `expect`: its own only
  (claims are never inherited).

A ref that resolves to nothing, to no formula of that id or to a record that
did not validate is reported by the link stage (`dangling-ref`,
`dangling-anchor`, `wrong-kind-ref`) and has no definition here. Refs that
come back to a formula of the chain are a `formula-cycle` at the `ref` of
every formula on the cycle.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flopkb.formulas.results import Key, RawValue
from flopkb.links.resolve import resolve_formula_ref
from flopkb.load.models import Formula, formulas_of
from flopkb.load.source import Path, Source
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.paths import field_path

if TYPE_CHECKING:
    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase


@dataclass(frozen=True, slots=True)
class Definition:
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
    valid_when: str | None = None
    """The nearest `valid_when` along the chain, starting with the formula itself."""
    valid_when_at: Key | None = None


@dataclass(slots=True)
class Located:
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


class Definitions:
    """The formulas of a knowledge base by record, and their effective definitions, each computed once."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._formulas: dict[str, dict[str, Located]] = {}
        self._definitions: dict[Key, Definition | None] = {}
        self.cycles: list[Diagnostic] = []
        self.cyclic: set[Key] = set()
        """Formulas whose ref chain runs into a cycle: what is reported about them depends on evaluation order."""

    def formulas(self, record_id: str) -> dict[str, Located]:
        found = self._formulas.get(record_id)
        if found is None:
            entry = self.kb.entries.get(record_id)
            found = {}
            if entry is not None and entry.record is not None and entry.source is not None:
                for index, formula in enumerate(formulas_of(entry.record)):
                    found.setdefault(formula.id, Located(entry, index, formula))
            self._formulas[record_id] = found
        return found

    def definition(self, key: Key) -> Definition | None:
        """The effective definition of a formula, following refs; None when a ref does not land or loops."""
        if key in self._definitions:
            return self._definitions[key]
        path: list[Key] = []
        on_path: dict[Key, int] = {}
        current: Key | None = key
        base: Definition | None = None
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

    def _own_definition(self, key: Key, located: Located) -> Definition:
        formula = located.formula
        assert formula.expr is not None
        unit_at = key if "unit" in located.written else None
        hardware = tuple(located.formula.hardware) if located.formula.hardware is not None else None
        return Definition(
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
            formula.valid_when,
            key if formula.valid_when is not None else None,
        )

    def _layer(self, key: Key, located: Located, base: Definition) -> Definition:
        formula = located.formula
        written_unit = "unit" in located.written
        own_hardware = located.formula.hardware is not None
        target = resolve_formula_ref(self.kb, formula.ref or "")
        assert target is not None
        return Definition(
            expr=base.expr,
            expr_at=base.expr_at,
            unit=formula.unit if written_unit else base.unit,
            unit_at=key if written_unit else base.unit_at,
            inputs={**base.inputs, **formula.inputs},
            input_at={**base.input_at, **dict.fromkeys(formula.inputs, key)},
            hardware=tuple(located.formula.hardware) if located.formula.hardware is not None else base.hardware,
            hardware_at=key if own_hardware else base.hardware_at,
            title=formula.title or base.title,
            chain=(target, *base.chain),
            valid_when=formula.valid_when if formula.valid_when is not None else base.valid_when,
            valid_when_at=key if formula.valid_when is not None else base.valid_when_at,
        )

    def _report_cycle(self, cycle: list[Key]) -> None:
        shown = " -> ".join(f"{record}#{cut(formula)}" for record, formula in [*cycle, cycle[0]])
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


def repeated_ids(entry: Entry) -> Iterator[Diagnostic]:
    """A formula id used twice in one record: only the first formula of that id is evaluated (and linkable)."""
    first: dict[str, int] = {}
    for index, formula in enumerate(formulas_of(entry.record)):  # type: ignore[arg-type]
        if first.setdefault(formula.id, index) != index:
            assert entry.source is not None
            line, column = entry.source.position(("formulas", index, "id"))
            here, there = (field_path(entry.source.written(("formulas", at))) for at in (index, first[formula.id]))
            yield make(
                "invalid-value",
                entry.path,
                line,
                column,
                f"{here}.id: '{cut(formula.id)}' is already the id of {there}; formula ids are unique within a record",
                "rename one of the two formulas",
            )

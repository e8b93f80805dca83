"""Accelerator specs read as quantities, and the check that each has its parameter's dimension.

Every `specs.<parameter>.value` of an accelerator record must read as a
quantity (else `invalid-value` at the value) whose unit has the dimension of
the unit that `schema/vocabulary.yaml` declares for the parameter (else
`unit-mismatch` at the value, naming both dimensions): `"989 TFLOP/s"` is no
memory bandwidth.

`read_specs` is the one place specs are read: the formula stage
(`flopkb.formulas.stage`) uses it too, once per accelerator, so a formula computes
only with spec values that passed this check. A spec that fails it is left
out of `AcceleratorSpecs.values` and listed in `invalid`, so formulas that
use it are not evaluated on that accelerator and the problem is reported once,
here, not again at every formula. So is a spec that validation left out (its
basis no term, say: `flopkb.load.validate`), reported where it is written.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flopkb.formulas.units import (
    Dimension,
    QuantityError,
    dimension_of,
    dimension_unit,
    format_dimension,
    format_quantity,
    parse_quantity,
    registry,
    significant_digits,
    to_base,
    unit_symbols,
)
from flopkb.load.models import AcceleratorRecord
from flopkb.report.diagnostics import Diagnostic, make

if TYPE_CHECKING:
    from flopkb.formulas.units import Quantity
    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase
    from flopkb.load.vocabulary import Vocabulary


@dataclass(frozen=True, slots=True)
class SpecFigure:
    """One spec value that reads as a quantity of the right dimension."""

    parameter: str
    quantity: Quantity
    text: str
    """The value as written in the record, e.g. `3.35 TB/s`."""
    basis: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AcceleratorSpecs:
    """The spec values of one accelerator record, read once."""

    id: str
    title: str
    figures: dict[str, SpecFigure] = field(default_factory=dict)
    invalid: frozenset[str] = frozenset()
    """Parameters whose value does not read, or has the wrong dimension (reported by `check_specs`)."""
    values: dict[str, Quantity] = field(default_factory=dict)
    """Parameter -> quantity of every figure: the mapping the evaluator takes as one accelerator's `hw`."""


@functools.lru_cache(maxsize=256)
def _parameter_dimension(unit: str) -> Dimension | None:
    try:
        return dimension_of(unit)
    except QuantityError:
        return None


def unit_problems(vocabulary: Vocabulary) -> Iterator[tuple[str, QuantityError]]:
    """Each parameter whose unit reads neither as a unit nor as a dimension, and why: its specs cannot be checked."""
    for name, parameter in vocabulary.parameters.items():
        try:
            dimension_of(parameter.unit)
        except QuantityError as error:
            yield name, error


def read_specs(entry: Entry, vocabulary: Vocabulary | None) -> tuple[AcceleratorSpecs | None, list[Diagnostic]]:
    """The specs of an accelerator entry (None for any other entry, or one that did not validate) and their problems."""
    record = entry.record
    if not isinstance(record, AcceleratorRecord) or entry.source is None:
        return None, []
    source = entry.source
    figures: dict[str, SpecFigure] = {}
    written = source.data.get("specs")
    invalid = {name for name in written if name not in record.specs} if isinstance(written, dict) else set()
    problems: list[Diagnostic] = []
    for parameter, spec in record.specs.items():
        path = ("specs", parameter, "value")
        text = spec.value if isinstance(spec.value, str) else repr(spec.value)
        try:
            quantity = parse_quantity(spec.value)
        except QuantityError as error:
            invalid.add(parameter)
            problems.append(
                make(
                    "invalid-value",
                    source.path,
                    *source.position(path),
                    f"specs.{parameter}: {error.message}",
                    error.hint,
                )
            )
            continue
        declared = vocabulary.parameters.get(parameter) if vocabulary is not None else None
        unit = declared.unit if declared is not None else None
        wanted = _parameter_dimension(unit) if unit is not None else None
        if wanted is not None and unit is not None:
            dimension = to_base(quantity)[1]
            if dimension != wanted:
                invalid.add(parameter)
                message = (
                    f"specs.{parameter}: {text} is {format_dimension(dimension)}, "
                    f"but {parameter} is {format_dimension(wanted)} ({unit})"
                )
                hint = _unit_hint(text.strip(), quantity, unit, wanted)
                problems.append(make("unit-mismatch", source.path, *source.position(path), message, hint))
                continue
        figures[parameter] = SpecFigure(parameter, quantity, text.strip(), spec.basis, tuple(spec.sources))
    values = {name: figure.quantity for name, figure in figures.items()}
    return AcceleratorSpecs(record.id, record.display_title, figures, frozenset(invalid), values), problems


_LARGE = ("G", "T")
"""The prefixes of the examples for a bare number of bytes or operations (`96`: `96 GB` or `96 TB`)."""


def _unit_hint(text: str, quantity: Quantity, unit: str, wanted: Dimension) -> str:
    """How to write a spec value in its parameter's unit: a bare number keeps its digits and gets units (the hint
    cannot know which prefix was meant, so it shows more than one); a quantity gets the unit it lacks (`8 TB`:
    `8 TB/s`), its number as written. The examples are built on the dimension's base unit (`byte/s`), not on the
    vocabulary's text, which may carry a prefix of its own (`GB/s`) or be a dimension (`[information]`)."""
    base = dimension_unit(wanted)
    named = base if "[" in unit else unit
    value, dimension = to_base(quantity)
    if dimension:
        example = format_quantity(registry().Quantity(value, base), max(6, significant_digits(text)))
        return f"write the value in a unit of {named}, e.g. `{example}`"
    large = any(name in ("[information]", "[operations]") and power > 0 for name, power in wanted)
    units = [unit_symbols(f"{prefix}{base}") for prefix in _LARGE] if large else [unit_symbols(base)]
    examples = " or ".join(f"`{text} {written}`" for written in units)
    return f"a bare number has no unit: write it with the unit it is in, a unit of {named}, e.g. {examples}"


MEMO = "specs"
"""`Entry.derived` key of an accelerator's spec problems: they depend on its file (and the vocabulary, which the
cache is keyed by)."""


def check_specs(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """The stage: every accelerator spec reads as a quantity of its parameter's dimension."""
    for entry in kb.entries.values():
        if entry.summary.kind == "accelerator":
            problems = entry.derived.get(MEMO)
            if problems is None:
                problems = tuple(read_specs(entry, kb.vocabulary)[1])
                if entry.digest is not None:
                    entry.derived[MEMO] = problems
            yield from problems

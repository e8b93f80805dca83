"""Source measurements read as quantities, and the check of each source's measurements.

Every `measurements[i]` of a source record must have an id no other
measurement of that source has (else `invalid-value` at the repeated id: a
`source#id` anchor must name one row) and a `value` that reads as a quantity
(else `invalid-value` at the value). A bare number is dimensionless: a
measurement is read apart from any formula, so it carries its own unit.

`read_measurements` is the one place measurements are read: the formula stage
(`flopkb.formulas.claims`) takes the measurement a claim names from it, so a
claim compares only with values that passed this check, and the problem of a
value that does not read is reported once, here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flopkb.formulas.results import MeasuredPoint
from flopkb.formulas.units import QuantityError, parse_quantity
from flopkb.load.models import SourceRecord
from flopkb.load.source import Path, Source
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.paths import field_path

if TYPE_CHECKING:
    from flopkb.formulas.units import Quantity
    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase


@dataclass(frozen=True, slots=True)
class MeasuredValue:
    """One measurement whose value reads: what a claim is compared with."""

    point: MeasuredPoint
    quantity: Quantity
    """The value as a quantity (dimensionless when the source gives a bare number)."""


@dataclass(frozen=True, slots=True)
class SourceMeasurements:
    """The measurements of one source record, read once."""

    id: str
    values: dict[str, MeasuredValue] = field(default_factory=dict)
    invalid: frozenset[str] = frozenset()
    """Ids whose value does not read (reported by `check_measurements`)."""


def read_measurements(entry: Entry) -> tuple[SourceMeasurements | None, list[Diagnostic]]:
    """The measurements of a source entry (None for another entry, or one that did not validate) and their problems."""
    record = entry.record
    if not isinstance(record, SourceRecord) or entry.source is None:
        return None, []
    source = entry.source
    values: dict[str, MeasuredValue] = {}
    invalid: set[str] = set()
    problems: list[Diagnostic] = []
    first: dict[str, int] = {}
    for index, measurement in enumerate(record.measurements):
        here = field_path(source.written(("measurements", index)))  # as the file has it
        if first.setdefault(measurement.id, index) != index:
            problems.append(
                make(
                    "invalid-value",
                    source.path,
                    *source.position(("measurements", index, "id")),
                    f"{here}.id: '{cut(measurement.id)}' is already the id of "
                    f"{field_path(source.written(('measurements', first[measurement.id])))}; "
                    "measurement ids are unique within a source",
                    "rename one of the two measurements",
                )
            )
            continue
        raw = measurement.value
        quantity = read_value(source, ("measurements", index), raw)
        if isinstance(quantity, Diagnostic):
            invalid.add(measurement.id)
            problems.append(quantity)
            continue
        text = raw.strip() if isinstance(raw, str) else format(raw, "g")
        point = MeasuredPoint(
            record.id, measurement.id, measurement.quantity, text, measurement.basis, measurement.where, record.title
        )
        values[measurement.id] = MeasuredValue(point, quantity)
    return SourceMeasurements(record.id, values, frozenset(invalid)), problems


def read_value(source: Source, at: Path, raw: object) -> Quantity | Diagnostic:
    """The value `raw` of the measurement at `at` (a path in `source`'s data) as a quantity, or the problem of one that
    does not read, at the value."""
    try:
        return parse_quantity(raw)
    except QuantityError as error:
        here = field_path(source.written(at))
        return make(
            "invalid-value", source.path, *source.position((*at, "value")), f"{here}.value: {error.message}", error.hint
        )


MEMO = "measurements"
"""`Entry.derived` key of a source's measurement problems: they depend on its file alone."""


def check_measurements(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """The stage: every measurement of every source has a unique id and a value that reads as a quantity."""
    for entry in kb.entries.values():
        if entry.summary.kind == "source" and entry.summary.measurement_ids:
            problems = entry.derived.get(MEMO)
            if problems is None:
                problems = tuple(read_measurements(entry)[1])
                if entry.digest is not None:
                    entry.derived[MEMO] = problems
            yield from problems

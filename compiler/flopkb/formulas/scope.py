"""A formula's hardware scope: the accelerators it is evaluated on, and where that choice comes from.

When the expression uses `hw.`, the scope is the nearest `hardware` written
along the formula's `ref` chain (`HW_OWN` when the formula writes it,
`HW_REF` when a formula it borrows from does), else the default of the spec
(`HW_DEFAULT`): the record's `affected_by_hardware` plus every
`hardware_parameters` row's `values_for`. Every ref is resolved; refs that do
not land on an accelerator are left out (the link stage reports them), and
an accelerator named twice counts once. A ref to a record that did not
validate (its kind unknown) stays in: the formula is not evaluated there, its
errors are reported in its own file, and a formula that names only such
records is not told that no accelerator is in scope. An item of such a list
that is no ref is left out of it by validation, and reported; a
`hardware_parameters` row that validation left out (its basis no term) still
names its `values_for` as written (`Source.left_out`), the refs among them: the
scope is the one the author meant, and the row's own error is the one
reported. A scope short of a part the schema told wrong (`default_told_wrong`)
is not told empty, nor told to lack an accelerator a claim names: that part
is told wrong once, where it is. `flopkb eval --hardware` replaces the scope
with one accelerator.
"""

from __future__ import annotations

from flopkb.formulas.definitions import Definition, Located
from flopkb.formulas.results import HW_DEFAULT, HW_OWN, HW_REF
from flopkb.links.resolver import Resolver
from flopkb.load.models import unbracketed


def hardware_scope(
    resolver: Resolver, located: Located, definition: Definition, override: str | None = None
) -> tuple[list[str], str, dict[str, int]]:
    """(accelerator ids, where the scope comes from, id -> index of the `hardware` item naming it, for own hardware)."""
    if override is not None:
        return [override], HW_OWN, {}
    target = resolver.target
    kinds = resolver.kinds
    items: dict[str, int] = {}
    if definition.hardware is not None:
        refs = list(enumerate(definition.hardware))
        origin = HW_OWN if definition.hardware_at == (located.entry.id, located.formula.id) else HW_REF
    else:
        refs = [(-1, ref) for ref in _default_refs(located)]
        origin = HW_DEFAULT
    found: list[str] = []
    for index, ref in refs:
        record_id = target(ref)
        if record_id is None or kinds.get(record_id, "accelerator") != "accelerator" or record_id in items:
            continue
        items[record_id] = index
        found.append(record_id)
    return found, origin, items


def _default_refs(located: Located) -> list[str]:
    """The record's `affected_by_hardware`, then every `hardware_parameters` row's `values_for`; then the refs
    that the rows validation left out name as written (a row whose basis is no term)."""
    record = located.entry.record
    refs = list(getattr(record, "affected_by_hardware", ()))
    refs += [ref for row in getattr(record, "hardware_parameters", ()) for ref in row.values_for]
    for row in located.source.left_out(("hardware_parameters",)):
        written = row.get("values_for") if type(row) is dict else None
        refs += [unbracketed(item) or item for item in written if type(item) is str] if type(written) is list else []
    return refs


def default_told_wrong(located: Located) -> bool:
    """Whether the schema told wrong a part of the record that the default scope is read from (its
    `affected_by_hardware`, a row's `values_for`): the scope is then not the one the author meant."""
    source = located.source
    rows = getattr(located.entry.record, "hardware_parameters", ())
    return source.rejects(("affected_by_hardware",)) or any(
        source.rejects(("hardware_parameters", index, "values_for")) for index in range(len(rows))
    )

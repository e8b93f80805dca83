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
records is not told that no accelerator is in scope. A list of them that did not validate (an item that is no
ref) is read as written, its items that are refs kept (`refs_written`): the scope is the one the author meant,
and the list's own error is the one reported. `flopkb eval --hardware` replaces
the scope with one accelerator.
"""

from __future__ import annotations

from flopkb.formulas.definitions import Definition, Located
from flopkb.formulas.results import HW_DEFAULT, HW_OWN, HW_REF
from flopkb.links.resolver import Resolver
from flopkb.load.models import refs_written


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
    """The record's `affected_by_hardware`, then every `hardware_parameters` row's `values_for`: as validated, or
    as written where validation left them out (`refs_written`: an item that is no ref, a row's term that is none)."""
    record, data = located.entry.record, located.source.data
    refs = refs_written(getattr(record, "affected_by_hardware", None), data.get("affected_by_hardware")) or []
    rows = getattr(record, "hardware_parameters", None)
    if rows:
        return refs + [ref for row in rows for ref in row.values_for]
    written = data.get("hardware_parameters")
    for row in written if type(written) is list else ():
        if type(row) is dict:
            refs += refs_written(None, row.get("values_for")) or []
    return refs

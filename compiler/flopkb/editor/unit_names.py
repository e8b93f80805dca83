"""Completion of units: in a `unit:` field and after the number of a quantity (`value: "4 T|"`).

The names are those of the one unit registry (`flopkb.formulas.units`,
built from units.txt): each unit's symbol, alone and after each prefix,
with its name and dimension beside it. A unit is completed where one is
being typed: after a number and a space, or after `*` or `/` in a unit.
"""

from __future__ import annotations

import re
from functools import cache

from flopkb.formulas.unit_registry import unit_spellings
from flopkb.formulas.units import dimension_of, format_dimension

UNIT_FIELD = "unit"
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NAME = r"[A-Za-zµμ%_]+(?:\s*(?:\*\*|\^)-?\d)?"
_PART = r"[A-Za-zµμ_]*$"
_AFTER_NUMBER = re.compile(rf"(?:^|[\s:{{\[,\"'(])({_NUMBER})\s+(?:(?:{_NAME}|[()])\s*[*/]\s*)*({_PART})")
_IN_UNIT = re.compile(rf"^[\"']?(?:(?:{_NAME}|[()])\s*[*/]\s*)*({_PART})")


@cache
def unit_names() -> list[tuple[str, str]]:
    """(what to write, its name and dimension) for every unit of the registry and each prefixed form of it."""
    dimensions = {unit: format_dimension(dimension_of(unit)) for _, _, unit in unit_spellings()}
    return [(symbol, f"{name} · {dimensions[unit]}") for symbol, name, unit in unit_spellings()]


def unit_typed(before: str, field: tuple[str, str] | None) -> str | None:
    """What of a unit is typed at the end of `before` (the line up to the cursor), or None where no unit goes.
    `field` is the field whose value is being typed there, and that value so far."""
    if field is not None and field[0] == UNIT_FIELD:
        match = _IN_UNIT.match(field[1])
        return match.group(1) if match is not None else None
    match = _AFTER_NUMBER.search(before)
    return match.group(2) if match is not None else None

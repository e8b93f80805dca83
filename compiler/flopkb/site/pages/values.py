"""Computed values and inputs as readers see them: compact, with units (`295.3 FLOP/byte`, `26.8 TB/s`, `0.35`)."""

from __future__ import annotations

import functools
import math
from typing import Any

from flopkb.formulas.units import QuantityError, format_number, format_quantity, parse_unit, registry

DIGITS = 4
MAX_DIGITS = 12


@functools.lru_cache(maxsize=512)
def _unit(unit: str) -> Any:
    """The pint unit of a formula's `unit` text, or None when dimensionless or unreadable."""
    text = unit.strip()
    if text in ("", "1"):
        return None
    try:
        parsed = parse_unit(text)
    except QuantityError:
        return None
    return parsed


def digits_apart_from_one(value: float) -> int:
    """`DIGITS`, or more when a ratio that is not 1 would read "1" (a speedup of 1.0003125 is not "1")."""
    digits = DIGITS
    while value != 1 and digits < MAX_DIGITS and float(format_number(value, digits)) == 1:
        digits += 1
    return digits


def show_value(value: float, unit: str) -> str:
    """A computed value in its formula's unit, compactly: `295.3 FLOP/byte`, `26.8 TB/s`, `0.35`."""
    if not math.isfinite(value):
        return str(value)
    parsed = _unit(unit)
    if parsed is None:
        return format_number(value, digits_apart_from_one(value))
    return format_quantity(registry().Quantity(value, parsed), DIGITS)


def show_input(value: Any) -> str:
    """An input as computed with: a quantity (`20 ms`) or a number."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return format_number(float(value), 6)
    if hasattr(value, "magnitude"):
        if not value.unit_items():
            return format_number(float(value.magnitude), 6)
        return format_quantity(value, 6)
    return str(value).strip()

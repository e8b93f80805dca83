"""The unit registry (pint's, from `units.txt`), imported only when first used, and the names flopkb gives units.

A module of its own below `flopkb.formulas.units` (which reads quantities) and `flopkb.formulas.unit_hints` (which
says what an unknown unit was meant to be): both need it.
"""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pint

_DEFINITIONS = Path(__file__).with_name("units.txt")

UNITS_HINT = (
    "units are s, min, h, byte (B), bit, FLOP, J, W, Hz, token and %, with prefixes "
    "p n µ (u) m k M G T P E or Ki Mi Gi Ti Pi, combined with * / and ^; e.g. TB/s, TFLOP/s, GiB"
)


@functools.cache
def registry() -> pint.UnitRegistry:
    pint = _import_pint()
    return pint.UnitRegistry(str(_DEFINITIONS), cache_folder=None, on_redefinition="raise")


_ARRAY_LIBRARIES = ("numpy", "scipy")


def _import_pint() -> types.ModuleType:
    """pint, imported without its array support unless numpy is already loaded.

    pint imports numpy (and scipy) whenever they are installed, only to
    handle arrays; flopkb computes with floats and never hands pint an array,
    and numpy's import is about half of pint's (0.15 of 0.35 s here). So
    while pint is first imported, numpy and scipy are hidden from it (pint
    then takes its own no-numpy path, which it supports); they stay importable
    by anything else afterwards. A process that loaded numpy before keeps
    pint's numpy support: flopkb's results are the same either way.
    """
    if "pint" in sys.modules or any(name in sys.modules for name in _ARRAY_LIBRARIES):
        import pint

        return pint
    for name in _ARRAY_LIBRARIES:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import pint
    finally:
        for name in _ARRAY_LIBRARIES:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]
    return pint


@functools.cache
def defined_units() -> pint.UnitRegistry:
    """A registry of units.txt alone, to list its units and prefixes: the shared one also holds the (prefixed) units
    it has read. Read it only; never parse with it, as pint keeps each prefixed unit it parses."""
    return _import_pint().UnitRegistry(str(_DEFINITIONS), cache_folder=None)


@functools.cache
def unit_spellings() -> tuple[tuple[str, str, str], ...]:
    """Every unit as an author writes it, as (symbol, name, the unit it scales): each unit's symbol alone (`B`,
    byte) and after each prefix's (`GB`, gigabyte; `%` takes none)."""
    fresh = defined_units()
    units = {unit.symbol: unit.name for unit in fresh._units.values()}
    prefixes = {prefix.symbol: prefix.name for prefix in fresh._prefixes.values() if prefix.symbol}
    found = []
    for symbol, name in sorted(units.items()):
        found.append((symbol, name, symbol))
        if symbol.isalpha():  # `%` takes no prefix
            found += [
                (f"{prefix}{symbol}", f"{prefix_name}{name}", symbol)
                for prefix, prefix_name in sorted(prefixes.items())
            ]
    return tuple(found)


# Display: the prefixes a reader expects on each unit, smallest first.
_UP = ("", "k", "M", "G", "T", "P", "E")
_DOWN_UP = ("p", "n", "µ", "m", *_UP)
DISPLAY_PREFIXES = {
    "byte": _UP,
    "bit": _UP,
    "FLOP": _UP,
    "second": ("n", "µ", "m", ""),
    "joule": _DOWN_UP,
    "watt": _DOWN_UP,
    "hertz": _UP,
}

"""One unit registry for the whole compiler, and safe reading and display of quantities.

The registry is pint's, built from `units.txt` rather than pint's default set:
the default set loads slowly, treats bit and byte as dimensionless and has no
FLOP. Here `[information]` (byte), `[operations]` (FLOP), `[time]` (second) and
`[energy]` (joule) are dimensions of their own. A token count is dimensionless
(`token` = 1), like a batch size: formulas multiply counts freely, and a
dimension of its own would force a unit onto every bare count.

pint parses unit strings with an expression evaluator of its own, so every
string is first checked against a strict grammar (`<number> <unit-expr>`, unit
names, `*`, `/`, parentheses and one-digit exponents) before pint sees it.
pint itself is imported only when a quantity is first read, and without
numpy (`flopkb.formulas.unit_registry`).
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import TYPE_CHECKING

from flopkb.formulas.unit_hints import unknown_unit_hint
from flopkb.formulas.unit_registry import (
    DISPLAY_PREFIXES,
    UNITS_HINT,
    defined_units,
    registry,
)

if TYPE_CHECKING:
    import pint

    Quantity = pint.Quantity
    Unit = pint.Unit

_MAX_TEXT = 200
_MAX_PAREN_DEPTH = 4

Exponent = int | Fraction
Dimension = tuple[tuple[str, Exponent], ...]
"""A dimension as sorted (name, exponent) pairs without zero exponents: () is dimensionless."""

DIMENSIONLESS: Dimension = ()
BASE_DIMENSIONS = frozenset({"[information]", "[operations]", "[time]", "[energy]"})


class QuantityError(ValueError):
    """A quantity or unit that cannot be read; `hint` says what would be."""

    def __init__(self, message: str, hint: str | None = None, unknown: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.unknown = unknown
        """The names in the unit that are no unit, if that is what is wrong."""


_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


@functools.cache
def quantity_pattern() -> str:
    """A regular expression (for JSON Schema, ECMA-262 and Python alike) of the quantities flopkb reads:
    `"<number> <unit>"`, the unit made of the registry's unit names (each name, symbol and alias, with an optional
    prefix, and a plural `s` where pint reads one), `1` and `%`, one-digit powers, `*`, `/` and parentheses
    (whose balance a regular expression cannot check). Derived from units.txt, so that an editor flags a misspelt
    unit (`"10 GBytes"`) as `check` does."""
    fresh = defined_units()

    def alternatives(names: set[str]) -> str:
        return "|".join(sorted(map(re.escape, names - {"", "_"}), key=lambda name: (-len(name), name)))

    prefixes = {name for prefix in fresh._prefixes.values() for name in (prefix.name, prefix.symbol, *prefix.aliases)}
    names = {name for unit in fresh._units.values() for name in (unit.name, unit.symbol, *unit.aliases)}
    words = {name for name in names if name.isalpha()}  # `%` takes no prefix
    plural = {name for name in words if reads_as_unit(f"{name}s")}
    unit = f"(?:{alternatives(prefixes)})?(?:(?:{alternatives(plural)})s?|{alternatives(words - plural)})"
    # pint reads a run of letters and digits as one name: a unit ends where the run ends, so two names need a space
    # or an operator between them, and anything else may touch (`B%`, `B(s)`).
    power = r"(?:\*\*|\^)-?[0-9](?![0-9(])"
    operand = rf"\(*\s*(?:{unit}(?![A-Za-z0-9µμ_])|%|1(?![0-9.]))(?:\s*{power})?(?:\s*\)(?:\s*{power})?)*"
    return rf"^\s*{_NUMBER}(?:\s*{operand}(?:\s*[*/]?\s*{operand})*)?\s*$"


_COMMA_NUMBER_RE = re.compile(r"\s*([+-]?\d+((?:,\d+)+)(?:\.\d*)?)(.*)", re.DOTALL)
_QUANTITY_RE = re.compile(rf"\s*({_NUMBER})\s*(.*?)\s*", re.DOTALL)
_UNIT_TOKEN_RE = re.compile(
    r"""(?P<space>[ \t]+)
      | (?P<name>[A-Za-zµμ_][A-Za-z0-9µμ_]*)
      | (?P<one>1(?![0-9.]))
      | (?P<power>(?:\*\*|\^)-?[0-9]+)
      | (?P<op>[*/%])
      | (?P<open>\()
      | (?P<close>\))""",
    re.VERBOSE,
)
_DIMENSION_TOKEN_RE = re.compile(r"[ \t]+|\[[a-z_]+\]|1(?![0-9.])|(?:\*\*|\^)-?[0-9](?![0-9])|[*/()]")


def _check_unit_text(text: str) -> None:
    """Refuse anything but unit names, `1`, `*`, `/`, `%`, one-digit powers and shallow parentheses."""
    if "//" in text:  # pint's floor division: `B//s` reads as B/s, and `1//B` fails inside pint
        raise QuantityError(f"'//' in unit {text!r}: write one '/'", UNITS_HINT)
    depth, position = 0, 0
    while position < len(text):
        token = _UNIT_TOKEN_RE.match(text, position)
        if token is None:
            raise QuantityError(f"unexpected {text[position]!r} in unit {text!r}", UNITS_HINT)
        if token.lastgroup == "power" and len(token.group().lstrip("*^-")) > 1:
            raise QuantityError(f"unit {text!r} has an exponent of more than one digit")
        if token.lastgroup == "open":
            depth += 1
            if depth > _MAX_PAREN_DEPTH:
                raise QuantityError(f"unit {text!r} nests parentheses too deeply")
        elif token.lastgroup == "close":
            depth -= 1
            if depth < 0:
                raise QuantityError(f"unbalanced ')' in unit {text!r}")
        position = token.end()
    if depth:
        raise QuantityError(f"unbalanced '(' in unit {text!r}")


def parse_unit(text: str) -> Unit:
    """A unit from its text; `"1"` is dimensionless."""
    if not isinstance(text, str):
        raise QuantityError(f"a unit is text, not {type(text).__name__}")
    text = text.strip()
    try:
        return _parse_unit(text)
    except QuantityError as error:
        if error.unknown:
            raise _unknown_unit(text, error.unknown) from None
        raise


def reads_as_unit(text: str) -> bool:
    """Whether `text` is a unit flopkb reads (no hint is made when it is not)."""
    try:
        _parse_unit(text.strip())
    except QuantityError:
        return False
    return True


@functools.lru_cache(maxsize=1024)
def _parse_unit(text: str) -> Unit:
    if not text:
        raise QuantityError("empty unit", UNITS_HINT)
    if len(text) > _MAX_TEXT:
        raise QuantityError(f"unit longer than {_MAX_TEXT} characters")
    _check_unit_text(text)
    ureg = registry()
    import pint

    try:
        unit = ureg.parse_units(text)
    except pint.UndefinedUnitError as error:
        names = tuple(sorted(error.unit_names))
        raise QuantityError(f"unknown unit {names}", unknown=names) from None  # its hint: `_unknown_unit`
    except Exception as error:
        raise QuantityError(f"cannot read unit {text!r}: {error}", UNITS_HINT) from None
    _check_finite_scale(text, unit)
    return unit


def _unknown_unit(text: str, names: tuple[str, ...], number: str = "") -> QuantityError:
    listed = ", ".join(repr(name) for name in names)
    where = "" if names == (text,) else f" in {text!r}"
    return QuantityError(f"unknown unit {listed}{where}", unknown_unit_hint(names, text, number, reads_as_unit), names)


def _check_finite_scale(text: str, unit: Unit) -> None:
    try:
        scale, _ = base_scale(unit)
    except OverflowError:
        scale = math.inf
    if not math.isfinite(scale) or scale == 0:
        raise QuantityError(f"unit {text!r} is out of range")


def parse_quantity(value: object) -> Quantity:
    """A quantity from `"<number> <unit>"` or a bare (dimensionless) number; magnitudes are floats."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise QuantityError(f'a quantity is a number or "<number> <unit>", not {type(value).__name__}')
    if isinstance(value, str):
        return _parse_quantity_text(value)
    try:
        magnitude = float(value)
    except OverflowError:
        magnitude = math.inf
    if not math.isfinite(magnitude):
        raise QuantityError(f"the number {value!r} is out of range")
    return registry().Quantity(magnitude)


def _parse_quantity_text(text: str) -> Quantity:
    if len(text) > _MAX_TEXT:
        raise QuantityError(f"quantity longer than {_MAX_TEXT} characters")
    comma = _COMMA_NUMBER_RE.fullmatch(text)
    if comma is not None:
        raise _comma_in_number(*comma.groups())
    match = _QUANTITY_RE.fullmatch(text)
    if match is None:
        raise QuantityError(f'{text!r} is not a quantity: write "<number> <unit>", e.g. "4.8 TB/s"')
    number, unit_text = match.groups()
    magnitude = float(number)
    if not math.isfinite(magnitude):
        raise QuantityError(f"the number in {text!r} is out of range")
    try:
        unit = _parse_unit(unit_text) if unit_text else registry().dimensionless
    except QuantityError as error:
        if error.unknown:  # the hint writes the whole quantity
            raise _unknown_unit(unit_text, error.unknown, number) from None
        raise
    quantity = registry().Quantity(magnitude, unit)
    if not math.isfinite(to_base(quantity)[0]):
        raise QuantityError(f"{text!r} is out of range")
    return quantity


def _comma_in_number(number: str, groups: str, rest: str) -> QuantityError:
    """A number written with a ',' (`1,979 TFLOP/s`, `4,0 TB/s`): read as thousands separators when every group
    after one has three digits, else as a decimal comma."""
    thousands = all(len(group) == 3 for group in groups.split(",")[1:]) or "." in number
    written = number.replace(",", "") if thousands else number.replace(",", ".")
    return QuantityError(
        f"the number {number!r} has a ','",
        f"write numbers without thousands separators and with '.' for decimals: `{written}{rest.rstrip()}`",
    )


def dimension_of(text: str) -> Dimension:
    """The dimension of a unit (`"byte/s"`) or of a dimension expression (`"[information] / [time]"`)."""
    if not isinstance(text, str) or "[" not in text:
        return base_scale(parse_unit(text))[1]
    text = text.strip()
    if len(text) > _MAX_TEXT or not re.fullmatch(rf"(?:{_DIMENSION_TOKEN_RE.pattern})+", text):
        raise QuantityError(f"cannot read dimension {text!r}")
    unknown = [name for name in re.findall(r"\[[a-z_]+\]", text) if name not in BASE_DIMENSIONS]
    if unknown:
        known = ", ".join(sorted(BASE_DIMENSIONS))
        raise QuantityError(f"unknown dimension {unknown[0]} in {text!r}", f"dimensions are {known}")
    return _to_dimension(registry().get_dimensionality(text))


def _to_dimension(items: pint.util.UnitsContainer) -> Dimension:
    return tuple(sorted((name, exact(_real(exponent))) for name, exponent in items.items() if exponent))


def _real(exponent: object) -> float:
    """A unit's exponent as pint keeps it (an int, or else the registry's `non_int_type`, float), though pint types it
    as any number."""
    assert isinstance(exponent, (int, float)), exponent
    return exponent


def exact(exponent: float | Fraction) -> Exponent:
    """An exponent exactly, as an int when whole: ints hash and add far faster than Fractions."""
    exponent = Fraction(exponent)
    return exponent.numerator if exponent.denominator == 1 else exponent


def base_scale(unit: Unit) -> tuple[float, Dimension]:
    """The factor from `unit` to base units (byte, FLOP, s, J), and its dimension."""
    return _container_scale(unit._units)


def to_base(quantity: Quantity) -> tuple[float, Dimension]:
    """A quantity's magnitude in base units (byte, FLOP, s, J) and its dimension, without pint arithmetic."""
    scale, dimension = _container_scale(quantity._units)
    return float(quantity.magnitude) * scale, dimension


@functools.lru_cache(maxsize=4096)
def _container_scale(units: pint.util.UnitsContainer) -> tuple[float, Dimension]:
    # Keyed by pint's (hashable) unit container: `quantity.units` alone costs more than the lookup.
    base = registry().Quantity(1.0, units).to_base_units()
    return float(base.magnitude), _to_dimension(base.dimensionality)


def magnitude_in(quantity: Quantity, unit: str) -> float:
    """The quantity's magnitude in `unit` (e.g. an `expect` value in its formula's unit), without pint arithmetic."""
    value, dimension = to_base(quantity)
    scale, target = base_scale(parse_unit(unit))
    if dimension != target:
        raise QuantityError(
            f"{format_quantity(quantity)} is {format_dimension(dimension)}, not {format_dimension(target)}"
        )
    return value / scale


def format_dimension(dimension: Dimension) -> str:
    """E.g. `[information] / [time]`; `dimensionless` for ()."""
    if not dimension:
        return "dimensionless"
    above = [_power(name, exponent) for name, exponent in dimension if exponent > 0]
    below = [_power(name, -exponent) for name, exponent in dimension if exponent < 0]
    return _fraction(" * ".join(above) or "1", below, " * ", " / ")


def _power(name: str, exponent: Exponent) -> str:
    if exponent == 1:
        return name
    return f"{name}^{exponent}" if exponent.denominator == 1 else f"{name}^({exponent})"


def _fraction(above: str, below: list[str], times: str, over: str) -> str:
    if not below:
        return above
    if len(below) == 1:
        return f"{above}{over}{below[0]}"
    return f"{above}{over}({times.join(below)})"


_BASE_UNIT_OF = {"[information]": "byte", "[operations]": "FLOP", "[time]": "s", "[energy]": "J"}


def dimension_unit(dimension: Dimension) -> str:
    """The dimension written in base units, e.g. `FLOP/byte`: a unit an author could use."""
    above = [_power(_BASE_UNIT_OF[name], exponent) for name, exponent in dimension if exponent > 0]
    below = [_power(_BASE_UNIT_OF[name], -exponent) for name, exponent in dimension if exponent < 0]
    return _fraction("*".join(above) or "1", below, "*", "/")


# Display: the factor of each prefix.
_PREFIXES = {
    "p": ("pico", 1e-12),
    "n": ("nano", 1e-9),
    "µ": ("micro", 1e-6),
    "m": ("milli", 1e-3),
    "": ("", 1.0),
    "k": ("kilo", 1e3),
    "M": ("mega", 1e6),
    "G": ("giga", 1e9),
    "T": ("tera", 1e12),
    "P": ("peta", 1e15),
    "E": ("exa", 1e18),
}


def format_number(value: float, digits: int = 4) -> str:
    """`digits` significant digits, fixed-point for 1e-3 <= |value| < 1e6, else e-notation: `295.2`, `2.5e9`."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    mantissa, _, power = f"{value:.{digits - 1}e}".partition("e")
    exponent = int(power)
    if -3 <= exponent < 6:
        rounded = float(f"{mantissa}e{exponent}")
        text = f"{rounded:.{max(0, digits - 1 - exponent)}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{exponent}"


def format_value(value: float | Quantity, digits: int = 6) -> str:
    """A number or a quantity as messages show it: an input's value, a claim's figure."""
    if isinstance(value, (int, float)):
        return format_number(float(value), digits)
    return format_quantity(value, digits)


def format_quantity(quantity: Quantity, digits: int = 4) -> str:
    """Compact display: `3.35 TB/s`, `295.2 FLOP/byte`, `12 ms`, `80 GiB`.

    A magnitude already in [1, 1000) keeps the author's unit; otherwise the
    first unit of the numerator gets the decimal prefix that brings it there.
    """
    magnitude = float(quantity.magnitude)
    items = [(name, Fraction(_real(exponent))) for name, exponent in quantity.unit_items() if exponent]
    if items and not (magnitude == 0 or 1 <= abs(magnitude) < 1000):
        magnitude, items = _rescale(magnitude, items)
    text = format_number(magnitude, digits)
    return f"{text} {_format_unit(items)}" if items else text


def _rescale(magnitude: float, items: list[tuple[str, Fraction]]) -> tuple[float, list[tuple[str, Fraction]]]:
    plan = _rescale_plan(tuple(items))
    if plan is None:
        return magnitude, items
    factor, prefixes, lead, bare = plan
    magnitude *= factor
    fitting = [p for p in prefixes if _PREFIXES[p][1] <= abs(magnitude)]
    name, scale = _PREFIXES[fitting[-1] if fitting else prefixes[0]]
    rescaled = list(bare)
    rescaled[lead] = (name + bare[lead][0], Fraction(1))
    return magnitude / scale, rescaled


@functools.lru_cache(maxsize=1024)
def _rescale_plan(
    items: tuple[tuple[str, Fraction], ...],
) -> tuple[float, tuple[str, ...], int, tuple[tuple[str, Fraction], ...]] | None:
    """For units `items`: the factor to the same units unprefixed, the lead unit's display prefixes and index."""
    ureg = registry()
    bare = tuple((ureg.parse_unit_name(name)[0][1], exponent) for name, exponent in items)
    lead = next((i for i, (name, exponent) in enumerate(bare) if exponent == 1 and name in DISPLAY_PREFIXES), None)
    if lead is None:
        return None
    from pint.util import UnitsContainer

    factor = _container_scale(UnitsContainer(dict(items)))[0] / _container_scale(UnitsContainer(dict(bare)))[0]
    return factor, DISPLAY_PREFIXES[bare[lead][0]], lead, bare


def unit_symbols(text: str) -> str:
    """A unit written with its symbols as messages show them: `Gbyte/s` is `GB/s`."""
    unit = parse_unit(text)
    return _format_unit([(name, Fraction(_real(exponent))) for name, exponent in unit._units.items()])


def written_parts(text: str) -> tuple[str, str]:
    """The number and the unit of a quantity as written (`"4.77612 ms"`: `4.77612`, `ms`); ("", "") when `text` is no
    `<number> <unit>`."""
    match = _QUANTITY_RE.fullmatch(text)
    return (match.group(1), match.group(2)) if match else ("", "")


def significant_digits(text: str) -> int:
    """How many significant digits the number of a quantity is written with (`4.77612 ms`: 6, `0.050`: 2)."""
    mantissa = re.split("[eE]", written_parts(text)[0])[0]
    return len(mantissa.replace(".", "").lstrip("+-0")) or 1


def _format_unit(items: list[tuple[str, Fraction]]) -> str:
    above = [_power(_symbol(name), exponent) for name, exponent in items if exponent > 0]
    below = [_power(_symbol(name), -exponent) for name, exponent in items if exponent < 0]
    return _fraction("*".join(above) or "1", below, "*", "/")


@functools.lru_cache(maxsize=1024)
def _symbol(name: str) -> str:
    symbol = registry().get_symbol(name)
    return "byte" if symbol == "B" else symbol

"""What a unit that does not read was meant to be: the hint of an unknown unit, which never changes a magnitude.

A unit written in another case or spelt out keeps its prefix: `GBytes` and `gbyte` are `GB`, `TB/S` is `TB/s`,
never `byte`. Where the letters stand for more than one unit, each is named, for the author to choose: `Gb` is `GB` or
`Gbit` (a factor of 8 apart), `KB` is `kB` or `KiB`. Only a name that reads no such way gets the closest spelling
(`byts`: byte), again with the prefix as written.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any

from flopkb.formulas.unit_registry import DISPLAY_PREFIXES, UNITS_HINT, defined_units
from flopkb.report.hints import Suggestion, scored

Reading = tuple[str, str]
"""A unit as (its spelling in the author's style, its name): `("GB", "gigabyte")`."""

_NAME = re.compile(r"[A-Za-zµμ_][A-Za-z0-9µμ_]*")
_MOST = 4
"""At most this many readings are named in one hint."""
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi")


@functools.cache
def _units() -> dict[str, tuple[str, str]]:
    """Every unit by each of its spellings in lower case (symbol, name, alias): (symbol, name)."""
    return _by_spelling(defined_units()._units.values(), str.lower)


@functools.cache
def _prefixes() -> dict[str, tuple[str, str]]:
    """Every prefix by each of its spellings (symbol, name, alias), as written: (symbol, name)."""
    return _by_spelling(defined_units()._prefixes.values(), str)


def _by_spelling(definitions: Iterable[Any], spelt: Callable[[str], str]) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for definition in definitions:
        if definition.name:
            for spelling in (definition.symbol, definition.name, *definition.aliases):
                found.setdefault(spelt(spelling), (definition.symbol, definition.name))
    return found


def _prefix_readings(part: str) -> list[tuple[str, str]]:
    """The prefixes `part` writes: itself when it is one, then each it is in another case (`K`: k, and Ki as in
    `KB`)."""
    if not part:
        return [("", "")]
    prefixes = _prefixes()
    lowered = part.lower()
    readings = [prefixes[part]] if part in prefixes else []
    readings += [reading for spelling, reading in prefixes.items() if spelling.lower() == lowered]
    if lowered == "k":
        readings.append(prefixes["Ki"])
    return list(dict.fromkeys(readings))


def _unit_readings(rest: str) -> list[tuple[str, str]]:
    """The units `rest` writes in another case or in the plural; a lone `b` is a byte or a bit."""
    units = _units()
    lowered = rest.lower()
    if rest == "b":
        return [units["b"], units["bit"]]
    for spelling in (lowered, lowered.removesuffix("s")):
        if spelling in units:
            return [units[spelling]]
    return []


def _conventional(prefix: str, unit: str) -> bool:
    """Whether `prefix` is one a reader expects on `unit` (`ms`, `GB`, `KiB`; not `Ms`)."""
    binary = prefix in _BINARY and unit in ("byte", "bit")
    return not prefix or binary or prefix in DISPLAY_PREFIXES.get(unit, ())


def _spelt(part: str, rest: str, prefix: tuple[str, str], unit: tuple[str, str]) -> Reading:
    """The unit in the author's style: symbols after a prefix symbol (`GBytes`: GB), names after a prefix name
    (`kilobyts`: kilobyte), and without a prefix as the unit was written (`Bytes`: byte, `S`: s)."""
    symbol = unit[0].lower()
    by_name = part.lower() == prefix[1] if part else rest.lower() not in (symbol, f"{symbol}s")
    spelling = prefix[1] + unit[1] if by_name else prefix[0] + unit[0]
    return spelling, prefix[1] + unit[1]


def readings(name: str) -> list[Reading]:
    """The units `name` (one name, not read as a unit) may stand for: with its prefix as written where that makes a
    usual unit (`Mw`: MW), else in another case (`MS`: ms, not Ms; `KB`: kB and KiB)."""
    found: list[tuple[bool, bool, Reading]] = []
    for cut in range(len(name)):
        part, rest = name[:cut], name[cut:]
        for prefix, unit in itertools.product(_prefix_readings(part), _unit_readings(rest)):
            if prefix[0] and unit[0] == "%":
                continue
            unusual = not _conventional(prefix[0], unit[1])
            found.append((unusual, part != prefix[0], _spelt(part, rest, prefix, unit)))
    best = min((entry[:2] for entry in found), default=None)
    return list(dict.fromkeys(reading for *rank, reading in found if tuple(rank) == best))


def _closest_reading(name: str) -> Reading | None:
    """The unit closest in spelling to `name`, within a letter of its length, with `name`'s prefix kept (`kilobyts`:
    kilobyte, `Gbyts`: GB)."""
    names = sorted({spelling for spelling in _units() if spelling != "%"})
    best: tuple[float, Reading] | None = None
    for cut in range(len(name)):
        part, rest = name[:cut], name[cut:]
        prefix = _prefixes().get(part) if part else ("", "")
        if prefix is None:
            continue
        for spelling, score in scored(rest.lower(), names, limit=1):
            if abs(len(spelling) - len(rest)) > 1:
                continue  # a different word (`parsec` is no `p` + `sec`), not a slip in one
            if best is None or score > best[0]:
                best = (score, _spelt(part, spelling, prefix, _units()[spelling]))
    return best[1] if best else None


def _replaced(text: str, reads: Callable[[str], bool]) -> list[tuple[str, list[str]]]:
    """`text` with each of its names that is no unit read as one, in each way they may be read: (text, the units
    named); empty when one of them reads no way."""
    names = tuple(dict.fromkeys(name for name in _NAME.findall(text) if not reads(name)))
    choices = []
    for name in names:
        options = readings(name)
        if not options:
            return []
        choices.append(options)
    found = []
    for chosen in itertools.islice(itertools.product(*choices), _MOST):
        meant = dict(zip(names, chosen, strict=True))
        written = _NAME.sub(functools.partial(_spelling_of, meant), text)
        if reads(written):
            found.append((written, [meant[name][1] for name in names]))
    return found


def _spelling_of(meant: dict[str, Reading], match: re.Match[str]) -> str:
    return meant[match.group()][0] if match.group() in meant else match.group()


def unknown_unit_hint(names: tuple[str, ...], text: str, number: str, reads: Callable[[str], bool]) -> str:
    """The hint for the unknown unit `names` in the unit `text`, which follows `number` as written (if any);
    `reads` tells a unit flopkb reads."""
    if any(name.upper().endswith("FLOPS") for name in names):
        return "write a rate as FLOP/s (e.g. TFLOP/s); FLOP is a count of operations"
    rates = _rates(names)
    if rates:
        return f"write a rate with /s: {', '.join(rates)}"
    found = _replaced(text, reads)
    if found:
        shown = [(f"`{number} {unit}`" if number else f"`{unit}`", meant) for unit, meant in found]
        if len(shown) == 1:
            return f"write {shown[0][0]}"
        named = [f"{quantity} ({', '.join(meant)})" for quantity, meant in shown]
        return f"write {', '.join(named[:-1])} or {named[-1]}"
    close = [(name, reading[0]) for name in sorted(names) if (reading := _closest_reading(name))]
    text = f"did you mean {', '.join(f'{meant} for {name}' for name, meant in close)}? {UNITS_HINT}"
    if len(close) == 1:  # one name to replace: a quick fix
        return Suggestion(text, close[0][0], [close[0][1]])
    return text if close else UNITS_HINT


def _rates(names: tuple[str, ...]) -> list[str]:
    """A rate written with `ps` as the unit per second it stands for, its unit read as a bare one is (`GBps`: GB/s,
    `KBps`: kB/s or KiB/s), a `b` before `ps` being a bit (`Gbps`, `mbps`: Gbit/s, Mbit/s, never millibit)."""
    found = []
    for name in names:
        per_second = name[:-3] + "bit" if name.endswith("bps") else name[:-2]
        options = readings(per_second) if name.endswith("ps") else []
        if len(options) == 1:
            found.append(f"{options[0][0]}/s for {name}")
        elif options:
            found.append(f"{' or '.join(f'{spelling}/s ({unit} per second)' for spelling, unit in options)} for {name}")
    return found

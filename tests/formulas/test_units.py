import contextlib
import math
import re
import subprocess
import sys
from fractions import Fraction

import pint
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flopkb.formulas.units import (
    DIMENSIONLESS,
    QuantityError,
    dimension_of,
    dimension_unit,
    format_dimension,
    format_number,
    format_quantity,
    magnitude_in,
    parse_quantity,
    parse_unit,
    registry,
    to_base,
)

INFORMATION = (("[information]", 1),)
BANDWIDTH = (("[information]", 1), ("[time]", -1))
COMPUTE = (("[operations]", 1), ("[time]", -1))


@pytest.mark.parametrize(
    ("text", "base", "dimension"),
    [
        ("4.8 TB/s", 4.8e12, BANDWIDTH),
        ("989 TFLOP/s", 989e12, COMPUTE),
        ("141 GB", 141e9, INFORMATION),
        ("80 GiB", 80 * 2**30, INFORMATION),
        ("700 W", 700.0, (("[energy]", 1), ("[time]", -1))),
        ("12 ms", 0.012, (("[time]", 1),)),
        ("3 us", 3e-6, (("[time]", 1),)),
        ("3 µs", 3e-6, (("[time]", 1),)),
        ("5 ns", 5e-9, (("[time]", 1),)),
        ("2 min", 120.0, (("[time]", 1),)),
        ("1 h", 3600.0, (("[time]", 1),)),
        ("2 byte", 2.0, INFORMATION),
        ("2 bytes", 2.0, INFORMATION),
        ("16 bit", 2.0, INFORMATION),
        ("400 Gbit/s", 50e9, BANDWIDTH),
        ("1 kHz", 1e3, (("[time]", -1),)),
        ("10 pJ/bit", 80e-12, (("[energy]", 1), ("[information]", -1))),
        ("1000 token/s", 1e3, (("[time]", -1),)),
        ("80 %", 0.8, DIMENSIONLESS),
        ("4.8TB/s", 4.8e12, BANDWIDTH),
        ("-1.5e3 B", -1.5e3, INFORMATION),
        ("2 byte^2", 2.0, (("[information]", 2),)),
        ("1 1/s", 1.0, (("[time]", -1),)),
        ("3 FLOP/(byte*s)", 3.0, (("[information]", -1), ("[operations]", 1), ("[time]", -1))),
        (32, 32.0, DIMENSIONLESS),
        (0.8, 0.8, DIMENSIONLESS),
    ],
)
def test_quantities_parse_to_base_units(text, base, dimension):
    quantity = parse_quantity(text)
    assert to_base(quantity) == (pytest.approx(base, rel=1e-12), dimension)
    assert isinstance(quantity.magnitude, float)


def test_decimal_prefixes_are_decimal_and_binary_ones_binary():
    assert parse_quantity("1 GB").to("byte").magnitude == 1e9
    assert parse_quantity("1 GiB").to("byte").magnitude == 2**30
    assert parse_quantity("1 TiB").to("GiB").magnitude == 1024
    assert parse_quantity("8 bit").to("byte").magnitude == 1


def test_bandwidth_plus_compute_is_a_dimensionality_error():
    with pytest.raises(pint.DimensionalityError):
        parse_quantity("1 TB/s") + parse_quantity("1 TFLOP/s")


def test_bytes_and_flops_are_not_dimensionless():
    assert not parse_quantity("1 byte").dimensionless
    assert not parse_quantity("1 FLOP").dimensionless
    assert parse_quantity("1 FLOP/byte").dimensionality != parse_quantity("1").dimensionality


def test_one_registry():
    assert registry() is registry()
    assert parse_quantity("1 B")._REGISTRY is registry()


def test_parse_unit():
    assert parse_unit("FLOP/byte") == registry().FLOP / registry().byte
    assert parse_unit("1") == registry().dimensionless
    assert parse_unit(" TB/s ") == parse_unit("TB/s")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("garbage", "is not a quantity"),
        ("", "is not a quantity"),
        ("TB/s", "is not a quantity"),
        ("1 TFLOPS", "unknown unit 'TFLOPS'"),
        ("1 KB", "unknown unit 'KB'"),
        ("10**10**10 byte", "more than one digit"),
        ("1 B**99", "more than one digit"),
        ("1e999 B", "out of range"),
        ("1e300 EB", "out of range"),
        ("1 (((((B)))))", "too deeply"),
        ("1 B/(s", "unbalanced"),
        ("1 B)", "unbalanced"),
        ("1 byte; import os", "unexpected ';'"),
        ("__import__('os').system('true')", "is not a quantity"),
        ("1 B" + " " * 300, "longer than"),
        ("1 11", "unexpected"),
        ("nan B", "is not a quantity"),
    ],
)
def test_garbage_raises_quantity_error(text, fragment):
    with pytest.raises(QuantityError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse_quantity(text)


@pytest.mark.parametrize("value", [True, None, [1], {"value": 1}, float("inf"), float("nan"), 10**400])
def test_non_quantities_raise_quantity_error(value):
    with pytest.raises(QuantityError):
        parse_quantity(value)


def test_unknown_flops_unit_hints_at_flop_per_second():
    with pytest.raises(QuantityError) as caught:
        parse_quantity("989 TFLOPS")
    assert "FLOP/s" in caught.value.hint


@given(st.text(max_size=60))
def test_any_text_parses_or_raises_quantity_error(text):
    try:
        quantity = parse_quantity(text)
    except QuantityError:
        return
    assert math.isfinite(to_base(quantity)[0])


@given(st.from_regex(r"\A[0-9]{1,3} [A-Za-z%*/^()0-9 -]{0,20}\Z"))
def test_unit_like_text_parses_or_raises_quantity_error(text):
    with contextlib.suppress(QuantityError):
        parse_quantity(text)


def test_dimensions():
    assert dimension_of("byte/s") == BANDWIDTH
    assert dimension_of("[information] / [time]") == BANDWIDTH
    assert dimension_of("FLOP/s") == COMPUTE
    assert dimension_of("1") == DIMENSIONLESS
    assert to_base(parse_quantity("3.35 TB/s"))[1] == dimension_of("byte/s")
    assert to_base(parse_quantity("3.35 TB/s"))[1] != dimension_of("FLOP/s")


@pytest.mark.parametrize("text", ["[foo]", "[information]**99", "[time] + 1", "__import__"])
def test_bad_dimensions_raise(text):
    with pytest.raises(QuantityError):
        dimension_of(text)


@pytest.mark.parametrize(
    ("unit", "shown", "in_base_units"),
    [
        ("TB/s", "[information] / [time]", "byte/s"),
        ("FLOP/byte", "[operations] / [information]", "FLOP/byte"),
        ("1/s", "1 / [time]", "1/s"),
        ("1", "dimensionless", "1"),
        ("J/(FLOP*s)", "[energy] / ([operations] * [time])", "J/(FLOP*s)"),
        ("s^2", "[time]^2", "s^2"),
    ],
)
def test_format_dimension(unit, shown, in_base_units):
    assert format_dimension(dimension_of(unit)) == shown
    assert dimension_unit(dimension_of(unit)) == in_base_units


def test_format_dimension_of_fractional_exponents():
    assert format_dimension((("[information]", Fraction(1, 2)),)) == "[information]^(1/2)"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("4.8 TB/s", "4.8 TB/s"),
        ("3.35e12 byte/s", "3.35 TB/s"),
        ("989e12 FLOP/s", "989 TFLOP/s"),
        ("295.2238806 FLOP/byte", "295.2 FLOP/byte"),
        ("80 GiB", "80 GiB"),
        ("141 GB", "141 GB"),
        ("0.012 s", "12 ms"),
        ("1.5e-5 s", "15 µs"),
        ("7200 s", "7200 s"),
        ("8e-11 J/byte", "80 pJ/byte"),
        ("700 W", "700 W"),
        ("2 byte", "2 byte"),
        ("0.5 byte", "0.5 byte"),
        ("80 %", "80 %"),
        ("1000 token/s", "1000 token/s"),
        ("3.3616", "3.362"),
        (0, "0"),
    ],
)
def test_format_quantity(text, shown):
    assert format_quantity(parse_quantity(text)) == shown


@pytest.mark.parametrize(
    ("value", "digits", "shown"),
    [
        (295.2238806, 4, "295.2"),
        (3.35, 4, "3.35"),
        (1.96, 4, "1.96"),
        (6.12579511, 4, "6.126"),
        (12345.678, 4, "12350"),
        (0.0012345, 3, "0.00123"),
        (1.5e-7, 4, "1.5e-7"),
        (2.5e9, 4, "2.5e9"),
        (-42.0, 4, "-42"),
        (0.0, 4, "0"),
    ],
)
def test_format_number(value, digits, shown):
    assert format_number(value, digits) == shown


def test_format_quantity_reads_back():
    for text in ["3.35e12 byte/s", "8e-11 J/byte", "80 GiB", "1e15 1/s", "1e4 byte**2/s"]:
        quantity = parse_quantity(text)
        again = parse_quantity(format_quantity(quantity, digits=12))
        assert to_base(again)[0] == pytest.approx(to_base(quantity)[0])


def test_importing_units_does_not_import_pint():
    script = (
        "import sys, flopkb.formulas.units, flopkb.formulas.expr, flopkb.formulas.evaluate; "
        "print('pint' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )


PINT_PROBE = (
    "import sys\n"
    "{before}"
    "from flopkb.formulas.units import parse_quantity, format_quantity, to_base, magnitude_in, dimension_of, registry\n"
    "registry()\n"
    "{after}"
    "q = [parse_quantity(t) for t in ('4.8 TB/s', '989 TFLOP/s', '80 GiB', '12 ms', '1e4 byte**2/s', '3')]\n"
    "print([format_quantity(x, 12) for x in q], [to_base(x) for x in q], magnitude_in(q[0], 'GB/s'),\n"
    "      dimension_of('[information] / [time]'))\n"
    "print('numpy' in sys.modules)\n"
)


def test_pint_is_imported_without_numpy_and_computes_the_same():
    def probe(before: str = "", after: str = "") -> list[str]:
        script = PINT_PROBE.format(before=before, after=after)
        return subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout.splitlines()

    without, numpy_first, numpy_later = probe(), probe(before="import numpy\n"), probe(after="import numpy\n")
    assert without[1] == "False" and numpy_first[1] == "True" and numpy_later[1] == "True"
    assert without[0] == numpy_first[0] == numpy_later[0]


def test_the_registry_of_units_txt_is_built_once_and_only_read() -> None:
    """Hints and the editor's pattern list the units of one registry, built once: reading units with it would add
    every prefixed unit read to that list."""
    from flopkb.formulas.unit_registry import _DEFINITIONS, defined_units
    from flopkb.formulas.units import quantity_pattern

    quantity_pattern.cache_clear()
    quantity_pattern()
    with contextlib.suppress(QuantityError):
        parse_quantity("5 KBps")
    assert defined_units() is defined_units()
    assert set(defined_units()._units) == set(pint.UnitRegistry(str(_DEFINITIONS), cache_folder=None)._units)


def test_magnitude_in_a_unit():
    assert magnitude_in(parse_quantity("3.35 TB/s"), "GB/s") == pytest.approx(3350)
    assert magnitude_in(parse_quantity("80 GiB"), "byte") == 80 * 2**30
    assert magnitude_in(parse_quantity(0.5), "%") == pytest.approx(50)
    with pytest.raises(QuantityError, match=r"\[operations\] / \[time\], not \[information\] / \[time\]"):
        magnitude_in(parse_quantity("989 TFLOP/s"), "TB/s")


_USUAL = {"byte": "kMGTPE", "FLOP": "kMGTPE", "hertz": "kMGT", "second": "mn"}


@given(st.sampled_from(sorted(_USUAL)), st.data())
def test_a_unit_hint_never_changes_the_prefix_written(unit: str, data: st.DataObject) -> None:
    """A prefix (as written, in its case) on a unit written in another case or the plural, or on a byte or bit rate
    written with `ps` (`GBps`, `Gbps`): every unit the hint offers is the prefix's multiple of that unit (or of a
    bit, for a lone `b`, and for `bps`), per second for a rate, never a bare unit or another prefix."""
    from flopkb.formulas.unit_hints import readings, unknown_unit_hint
    from flopkb.formulas.units import base_scale, reads_as_unit

    prefix = data.draw(st.sampled_from(_USUAL[unit]), label="prefix")
    word = data.draw(st.sampled_from([unit, registry().get_symbol(unit)]), label="word")
    cases = data.draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)), label="cases")
    written = prefix + "".join(c.upper() if up else c.lower() for c, up in zip(word, cases, strict=True))
    rate = unit == "byte" and data.draw(st.booleans(), label="rate")
    written += "ps" if rate else data.draw(st.sampled_from(["", "s"]), label="plural")
    if reads_as_unit(written) or written.upper().endswith("FLOPS"):
        return
    if rate:
        hint = unknown_unit_hint((written,), written, "", reads_as_unit)
        offered = [re.sub(r" \(.*", "", option) for option in _offered_rates(hint, written)]
        meant = ["bit"] if written.endswith("bps") else [unit]
    else:
        offered = [spelling for spelling, _ in readings(written)]
        meant = [unit, "bit"] if written.removesuffix("s")[len(prefix) :] == "b" else [unit]
    per = "/s" if rate else ""
    scales = {base_scale(parse_unit(f"{prefix}{name}{per}"))[0] for name in meant}
    assert offered, written
    for spelling in offered:
        assert base_scale(parse_unit(spelling))[0] in scales, (written, spelling)


def _offered_rates(hint: str, written: str) -> list[str]:
    """The units a rate's hint offers (`write a rate with /s: kB/s (…) or KiB/s (…) for KBps`)."""
    start, end = "write a rate with /s: ", f" for {written}"
    assert hint.startswith(start) and hint.endswith(end), hint
    return hint.removeprefix(start).removesuffix(end).split(" or ")


@given(st.integers(min_value=1000, max_value=10**15), st.sampled_from(["B", "TFLOP/s", "GB/s"]))
def test_a_number_with_thousands_separators_is_offered_without_them(number: int, unit: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(f"{number:,} {unit}")
    assert caught.value.hint is not None and caught.value.hint.endswith(f": `{number} {unit}`")
    assert parse_quantity(f"{number} {unit}").magnitude == number

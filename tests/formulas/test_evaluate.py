import contextlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.formulas.evaluate import (
    SWEEP_LIMIT,
    Evaluation,
    FormulaProblem,
    evaluate_formula,
    evaluate_point,
)
from flopkb.formulas.expr import ExprSyntaxError, parse
from flopkb.formulas.units import parse_quantity as Q
from flopkb.report.codes import CODES

HARDWARE = {
    "nvidia-h100-sxm": {
        "peak_bf16_dense": Q("989 TFLOP/s"),
        "memory_bandwidth": Q("3.35 TB/s"),
        "memory_capacity": Q("80 GB"),
    },
    "nvidia-h200-sxm": {
        "peak_bf16_dense": Q("989 TFLOP/s"),
        "memory_bandwidth": Q("4.8 TB/s"),
        "memory_capacity": Q("141 GB"),
    },
    "amd-instinct-mi300x": {"peak_bf16_dense": Q("1307.4 TFLOP/s"), "memory_bandwidth": Q("5.3 TB/s")},
    "nvidia-b200": {"peak_bf16_dense": Q("2250 TFLOP/s"), "memory_bandwidth": Q("8 TB/s")},
}
RIDGE = parse("hw.peak_bf16_dense / hw.memory_bandwidth")
EXPECTED_TOKENS = parse("(1 - a**(k + 1)) / (1 - a)")
SPEEDUP = parse("(1 - a**(k + 1)) / ((1 - a) * (k * c + 1))")


def problem(source: str, unit: str = "1", inputs=None, hardware=None) -> FormulaProblem:
    with pytest.raises(FormulaProblem) as caught:
        evaluate_formula(parse(source), unit, inputs or {}, hardware)
    assert caught.value.code in CODES
    return caught.value


# Golden values, computed independently of the engine -----------------------------


@pytest.mark.parametrize(
    ("accelerator", "ridge"),
    [
        ("nvidia-h100-sxm", 989 / 3.35),  # 295.22
        ("nvidia-h200-sxm", 989 / 4.8),  # 206.04
        ("amd-instinct-mi300x", 1307.4 / 5.3),  # 246.68
        ("nvidia-b200", 2250 / 8),  # 281.25
    ],
)
def test_ridge_points(accelerator, ridge):
    [evaluation] = evaluate_formula(RIDGE, "FLOP/byte", {}, {accelerator: HARDWARE[accelerator]})
    assert evaluation == Evaluation(accelerator, (), pytest.approx(ridge, rel=1e-12), "FLOP/byte")


def test_ridge_points_in_order_of_the_hardware():
    values = [(e.hardware, round(e.value, 2)) for e in evaluate_formula(RIDGE, "FLOP/byte", {}, HARDWARE)]
    assert values == [
        ("nvidia-h100-sxm", 295.22),
        ("nvidia-h200-sxm", 206.04),
        ("amd-instinct-mi300x", 246.68),
        ("nvidia-b200", 281.25),
    ]


@pytest.mark.parametrize(("a", "k", "expected"), [(0.8, 4, 3.3616), (0.6, 2, 1.96), (0.9, 8, 6.12579511)])
def test_leviathan_expected_tokens(a, k, expected):
    assert evaluate_point(EXPECTED_TOKENS, "1", {"a": a, "k": k}) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("a", "k", "c", "expected"),
    [(0.8, 4, 0.05, 3.3616 / 1.2), (0.6, 2, 0.1, 1.96 / 1.2), (0.9, 8, 0.02, 6.12579511 / 1.16), (0.7, 3, 0.0, 2.533)],
)
def test_leviathan_speedup(a, k, c, expected):
    assert evaluate_point(SPEEDUP, "1", {"a": a, "k": k, "c": c}) == pytest.approx(expected, rel=1e-12)


def test_percent_input_and_percent_unit():
    assert evaluate_point(EXPECTED_TOKENS, "1", {"a": Q("80 %"), "k": 4}) == pytest.approx(3.3616)
    assert evaluate_point(parse("a"), "%", {"a": 0.25}) == pytest.approx(25)


@pytest.mark.parametrize(
    ("source", "unit", "inputs", "expected"),
    [
        ("t", "ms", {"t": Q("2 s")}, 2000),
        (
            "bytes / bandwidth",
            "ms",
            {"bytes": Q("140 GB"), "bandwidth": Q("3.35 TB/s")},
            140 / 3.35,
        ),
        ("size", "GB", {"size": Q("80 GiB")}, 80 * 2**30 / 1e9),
        ("rate * t", "token", {"rate": Q("1000 token/s"), "t": Q("12 ms")}, 12),
        ("x**2", "byte^2", {"x": Q("2 kB")}, 4e6),
        ("sqrt(x)", "byte", {"x": Q("4 byte^2")}, 2),
        ("x**(1/3)", "byte", {"x": Q("8 byte^3")}, 2),
        ("sqrt(x) * sqrt(x)", "byte", {"x": Q("3 byte")}, 3),
        ("power * t", "J", {"power": Q("700 W"), "t": Q("1 min")}, 42000),
        ("max(t1, t2)", "ms", {"t1": Q("3 ms"), "t2": Q("2000 us")}, 3),
        ("abs(-x)", "GB", {"x": Q("5 GB")}, 5),
        ("ceil(x / y) + floor(x / y)", "1", {"x": Q("10 GB"), "y": Q("4 GB")}, 5),
        ("log2(x) + log10(y) + log(exp(1))", "1", {"x": 8, "y": 1000}, 7),
        ("log2(big / small)", "1", {"big": Q("1 KiB"), "small": Q("1 B")}, 10),
    ],
)
def test_values_with_units(source, unit, inputs, expected):
    assert evaluate_point(parse(source), unit, inputs) == pytest.approx(expected, rel=1e-12)


def test_memory_time_on_hardware():
    values = evaluate_formula(parse("weights / hw.memory_bandwidth"), "ms", {"weights": Q("140 GB")}, HARDWARE)
    assert [round(e.value, 3) for e in values] == [round(140 / 3.35, 3), round(140 / 4.8, 3), round(140 / 5.3, 3), 17.5]


def test_sweeps_are_the_cartesian_product_in_input_order():
    a_values = [0.6, 0.8, 0.9]
    k_values = [2, 4]
    evaluations = evaluate_formula(EXPECTED_TOKENS, "1", {"k": k_values, "a": a_values, "unused": [1, 2, 3]})
    assert [e.point for e in evaluations] == [(("k", k), ("a", a)) for k in k_values for a in a_values]
    for evaluation in evaluations:
        point = dict(evaluation.point)
        expected = (1 - point["a"] ** (point["k"] + 1)) / (1 - point["a"])
        assert evaluation.value == pytest.approx(expected)
        assert evaluation.hardware is None and evaluation.unit == "1"


def test_sweep_points_keep_the_quantities_as_given():
    swept = [Q("1 GB"), Q("2 GB")]
    evaluations = evaluate_formula(
        parse("x / hw.memory_bandwidth"), "ms", {"x": swept}, {"nvidia-b200": HARDWARE["nvidia-b200"]}
    )
    assert [e.point for e in evaluations] == [(("x", swept[0]),), (("x", swept[1]),)]
    assert [e.value for e in evaluations] == [pytest.approx(0.125), pytest.approx(0.25)]


def test_sweep_by_hardware():
    evaluations = evaluate_formula(
        parse("B * 2 * hw.memory_capacity"), "GB", {"B": [1, 2]}, {k: HARDWARE[k] for k in list(HARDWARE)[:2]}
    )
    assert [(e.hardware, dict(e.point)["B"], e.value) for e in evaluations] == [
        ("nvidia-h100-sxm", 1, 160),
        ("nvidia-h100-sxm", 2, 320),
        ("nvidia-h200-sxm", 1, 282),
        ("nvidia-h200-sxm", 2, 564),
    ]


def test_hardware_is_ignored_when_the_expression_does_not_use_it():
    evaluations = evaluate_formula(parse("2 * x"), "1", {"x": 3}, HARDWARE)
    assert evaluations == [Evaluation(None, (), 6.0, "1")]


def test_evaluate_point_with_hardware():
    value = evaluate_point(
        parse("B * hw.peak_bf16_dense / hw.memory_bandwidth"), "FLOP/byte", {"B": 2}, HARDWARE["nvidia-b200"]
    )
    assert value == pytest.approx(562.5)


def test_values_are_floats():
    [evaluation] = evaluate_formula(parse("2 ** 10 + ceil(x)"), "1", {"x": 1.5})
    assert type(evaluation.value) is float and evaluation.value == 1026


# One test per error code -----------------------------------------------------


def test_unknown_name_names_the_closest():
    error = problem("B * kk", inputs={"B": 1, "k": 2})
    assert error.code == "formula-unknown-name"
    assert "`kk`" in error.message and error.hint == "did you mean k?" and error.offset == 4


def test_unknown_name_that_is_a_hw_parameter():
    error = problem("memory_bandwidth", "TB/s", {}, None)
    assert error.code == "formula-unknown-name"
    error = problem("memory_bandwidth + hw.memory_bandwidth", "TB/s", {}, HARDWARE)
    assert error.hint == "did you mean hw.memory_bandwidth?"


def test_several_unknown_names():
    error = problem("x + y * x + z", inputs={"w": 1})
    assert "`x`" in error.message and "also unknown: `y`, `z`" in error.message and error.offset == 0


def test_units_that_do_not_add_up():
    error = problem("hw.memory_bandwidth + hw.peak_bf16_dense", "1", {}, HARDWARE)
    assert error.code == "formula-unit-mismatch"
    assert "[information] / [time] + [operations] / [time]" in error.message
    assert error.offset == 20


@pytest.mark.parametrize(
    ("source", "inputs", "fragment"),
    [
        ("t - n", {"t": Q("1 s"), "n": 1}, "[time] - dimensionless"),
        ("max(t, b)", {"t": Q("1 s"), "b": Q("1 B")}, "[time], [information]"),
        ("exp(t)", {"t": Q("1 s")}, "exp() needs a dimensionless argument, not [time]"),
        ("log(b)", {"b": Q("1 B")}, "log() needs a dimensionless argument"),
        ("ceil(b)", {"b": Q("1.5 B")}, "ceil() needs a dimensionless argument"),
        ("2 ** t", {"t": Q("1 s")}, "an exponent must be dimensionless, not [time]"),
        ("b ** n", {"b": Q("2 B"), "n": 2}, "needs a constant exponent"),
        ("x", {"x": [Q("1 B"), Q("1 s")]}, "mixes [information] and [time]"),
    ],
)
def test_unit_mismatches(source, inputs, fragment):
    error = problem(source, "1", inputs)
    assert error.code == "formula-unit-mismatch"
    assert fragment in error.message


def test_result_not_expressible_in_unit():
    error = problem("hw.peak_bf16_dense / hw.memory_bandwidth", "TB/s", {}, HARDWARE)
    assert error.code == "formula-unit-mismatch"
    assert "[operations] / [information]" in error.message and "'TB/s' is [information] / [time]" in error.message
    assert "FLOP/byte" in error.hint


def test_missing_spec_names_accelerator_and_parameter():
    error = problem("hw.memory_capacity / 2", "GB", {}, HARDWARE)
    assert error.code == "formula-missing-spec"
    assert "amd-instinct-mi300x" in error.message and "memory_capacity" in error.message


def test_a_missing_spec_is_asked_of_the_accelerator_not_respelt():
    """A name that is no parameter is the stage's to tell (`formula-unknown-name`, with its did-you-mean); one the
    evaluator meets is a parameter the accelerator lacks, however close to another of its specs."""
    error = problem("hw.memory_bandwith", "TB/s", {}, HARDWARE)
    assert error.hint is not None and error.hint.startswith("give ")
    assert "did you mean" not in error.hint


@pytest.mark.parametrize("hardware", [None, {}])
def test_hw_without_accelerators_in_scope(hardware):
    error = problem("hw.memory_bandwidth", "TB/s", {}, hardware)
    assert error.code == "formula-missing-spec" and "no accelerator" in error.message


def test_evaluate_point_needs_an_accelerator_for_hw():
    with pytest.raises(FormulaProblem) as caught:
        evaluate_point(RIDGE, "FLOP/byte", {})
    assert caught.value.code == "formula-missing-spec"


@pytest.mark.parametrize(
    ("source", "inputs", "fragment"),
    [
        ("1 / (B - B)", {"B": [1, 2]}, "division by zero (at B = 1)"),
        ("log(x)", {"x": 0}, "math domain error"),
        ("sqrt(x)", {"x": -1}, "math domain error"),
        ("x ** 0.5", {"x": -1}, "math domain error"),
        ("0 ** -1", {}, "math domain error"),
        ("exp(1e10)", {}, "overflow"),
        ("1e200 * 1e200", {}, "not a finite number"),
        ("1e200 * 1e200 - 1e200 * 1e200", {}, "not a finite number"),
        ("ceil(1e308 * 10)", {}, "overflow"),
        ("10 ** 10 ** 10", {}, "exponent 1e10 is out of bounds"),
        ("2 ** 99999", {}, "exponent 99999 is out of bounds"),
        ("2 ** -2000", {}, "out of bounds"),
        ("x ** 2000", {"x": 1}, "out of bounds"),
        ("10 ** 300 * 10 ** 300", {}, "not a finite number"),
    ],
)
def test_formula_errors(source, inputs, fragment):
    error = problem(source, "1", inputs)
    assert error.code == "formula-error"
    assert fragment in error.message


def test_error_message_names_the_point_and_the_accelerator():
    error = problem("x / (hw.memory_bandwidth - hw.memory_bandwidth)", "s", {"x": [Q("1 GB")]}, HARDWARE)
    assert error.message == "division by zero (at x = 1 GB, on nvidia-h100-sxm)"


def test_a_dimensioned_power_is_bounded_before_it_is_computed():
    error = problem("b ** 2000", "1", {"b": Q("1 B")})
    assert error.code == "formula-error" and "out of bounds" in error.message


def test_the_value_must_fit_the_unit():
    error = problem("x", "pB", {"x": Q("1e300 B")})
    assert error.code == "formula-error" and "overflows in the formula's unit" in error.message


def test_hostile_expressions_are_refused_before_computing():
    for source in ["10 ** 10 ** 10", "2 ** 99999", "exp(1e10)", "9 ** 9 ** 9 ** 9", "(2 ** 1024) ** 1024"]:
        assert problem(source).code == "formula-error"


def test_sweep_size_is_checked_without_enumerating():
    huge = list(range(1000))
    error = problem("a * b * c", "1", {"a": huge, "b": huge, "c": huge})
    assert error.code == "formula-error" and "1,000,000,000 points" in error.message


def test_sweep_at_the_limit_is_evaluated():
    side = math.isqrt(SWEEP_LIMIT)
    assert len(evaluate_formula(parse("a * b"), "1", {"a": list(range(side)), "b": list(range(side))})) == SWEEP_LIMIT


def test_empty_sweep():
    error = problem("a", "1", {"a": []})
    assert error.code == "formula-error" and "no values" in error.message


def test_evaluate_point_refuses_a_sweep():
    with pytest.raises(FormulaProblem) as caught:
        evaluate_point(parse("a"), "1", {"a": [1, 2]})
    assert caught.value.code == "formula-error"


@pytest.mark.parametrize(("unit", "value"), [("TFLOPS", 1), ("1", True), ("1", "4 GB"), ("1", None)])
def test_unreadable_unit_or_value(unit, value):
    error = problem("x", unit, {"x": value})
    assert error.code == "invalid-value"


# Properties ------------------------------------------------------------------

LEAVES = st.sampled_from(["a", "b", "t", "n", "hw.memory_bandwidth", "hw.peak_bf16_dense"]) | st.floats(
    min_value=0, max_value=1e6, allow_nan=False
).map(repr)


def expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        )
        call = st.tuples(st.sampled_from(["abs", "sqrt", "exp", "log", "log2", "log10", "ceil", "floor"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"
        )
        extreme = st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})")
        return binary | call | extreme | inner.map(lambda e: f"-{e}")

    return st.recursive(LEAVES, extend, max_leaves=10)


INPUTS = {"a": 0.8, "b": Q("2 GB"), "t": [Q("1 ms"), Q("2 ms")], "n": [1, 2, 3]}
UNITS = st.sampled_from(["1", "s", "byte", "FLOP/byte", "TB/s", "1/s", "%", "byte^2"])


@settings(max_examples=300, deadline=None)
@given(expressions(), UNITS)
def test_grammar_expressions_evaluate_or_raise_formula_problems(source, unit):
    try:
        evaluations = evaluate_formula(parse(source), unit, INPUTS, HARDWARE)
    except (FormulaProblem, ExprSyntaxError) as error:
        assert not isinstance(error, FormulaProblem) or error.code in CODES
        return
    assert all(math.isfinite(e.value) for e in evaluations)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), UNITS)
def test_any_text_evaluates_or_raises_formula_problems(source, unit):
    with contextlib.suppress(FormulaProblem, ExprSyntaxError):
        evaluate_formula(parse(source), unit, INPUTS, HARDWARE)

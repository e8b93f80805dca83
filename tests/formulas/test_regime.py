"""`valid_when`: a formula's regime, parsed by the formula grammar, marked on every evaluation, enforced on claims."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.formulas.expr import ExprSyntaxError
from flopkb.formulas.regime import parse_condition
from kbfixture import accelerator, compile_kb, located, write_kb

IGNORE = ("orphan",)
ALPHA = accelerator("hw/alpha", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s")  # ridge 250
BETA = accelerator("hw/beta", peak_bf16_dense="500 TFLOP/s", memory_bandwidth="4 TB/s")  # ridge 125
HARDWARE = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA}

MEMORY_BOUND = """\
  - id: speedup
    expr: a / (1 + k * c)
    unit: "1"
    valid_when: batch * (k + 1) <= hw.peak_bf16_dense * bytes_per_param / (flops * hw.memory_bandwidth)
    inputs:
      a: 3
      k: 3
      c: 0.1
      batch: [1, 32, 64, 128]
      bytes_per_param: "2 byte"
      flops: "2 FLOP"
    hardware: [hw/alpha, hw/beta]
"""


def kb_of(tmp_path: Path, formulas: str):
    text = f"id: facts/f\nkind: fact\nstatement: S.\nformulas:\n{formulas}"
    return compile_kb(write_kb(tmp_path, {**HARDWARE, "records/facts/f.yaml": text}))


def test_every_evaluation_is_marked_in_or_outside_the_regime_per_accelerator(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, MEMORY_BOUND)
    assert located(kb, ignore=IGNORE) == []
    [result] = kb.formulas["facts/f"]
    outside = {(e.hardware, e.point[0][1]) for e in result.evaluations if not e.in_regime}
    # (k + 1) * batch <= ridge: alpha's ridge is 250 (batch 128 * 4 = 512 is outside, 32 * 4 = 128 inside),
    # beta's 125 (batch 32 * 4 = 128 is already outside).
    assert outside == {("hw/alpha", 64), ("hw/alpha", 128), ("hw/beta", 32), ("hw/beta", 64), ("hw/beta", 128)}
    assert result.outside_regime == 5
    assert str(result.valid_when).startswith("batch * (k + 1) <= ")


def test_a_claim_outside_the_regime_is_an_error_at_its_value(tmp_path: Path) -> None:
    claims = "    expect:\n      - {where: {batch: 64}, hardware: hw/beta, value: 2.30769}\n"
    kb = kb_of(tmp_path, MEMORY_BOUND + claims)
    problems = located(kb, ignore=IGNORE)
    assert [(code, line) for code, _, line, _ in problems] == [("claim-out-of-regime", 18)]
    [message] = [d.message for d in kb.diagnostics if d.code == "claim-out-of-regime"]
    assert "batch = 64, on hw/beta" in message and "valid_when batch * (k + 1) <=" in message
    [result] = kb.formulas["facts/f"]
    assert result.claims[0].in_regime is False


def test_a_claim_inside_the_regime_passes(tmp_path: Path) -> None:
    claims = "    expect:\n      - {where: {batch: 32}, hardware: hw/alpha, value: 2.30769}\n"
    assert located(kb_of(tmp_path, MEMORY_BOUND + claims), ignore=IGNORE) == []


def test_sides_of_different_dimensions_are_a_unit_mismatch_at_valid_when(tmp_path: Path) -> None:
    formulas = MEMORY_BOUND.replace("(flops * hw.memory_bandwidth)", "hw.memory_bandwidth")
    problems = located(kb_of(tmp_path, formulas), ignore=IGNORE)
    assert [(code, line) for code, _, line, _ in problems] == [("formula-unit-mismatch", 8)]


def test_a_valid_when_outside_the_grammar_is_a_syntax_error_at_its_column(tmp_path: Path) -> None:
    formulas = MEMORY_BOUND.replace("valid_when: batch * (k + 1) <=", "valid_when: batch * (k + 1) ==")
    [(code, _, line, column)] = located(kb_of(tmp_path, formulas), ignore=IGNORE)
    assert (code, line) == ("formula-syntax", 8)
    assert column == len("    valid_when: ") + 1


def test_a_regime_over_a_name_the_formula_does_not_have_is_reported(tmp_path: Path) -> None:
    formulas = MEMORY_BOUND.replace("batch * (k + 1) <=", "beams * (k + 1) <=")
    [(code, _, line, _)] = located(kb_of(tmp_path, formulas), ignore=IGNORE)
    assert (code, line) == ("formula-unknown-name", 8)


def test_a_formula_that_reuses_another_takes_its_regime(tmp_path: Path) -> None:
    formulas = MEMORY_BOUND + "  - id: again\n    ref: facts/f#speedup\n"
    kb = kb_of(tmp_path, formulas)
    assert located(kb, ignore=IGNORE) == []
    first, again = kb.formulas["facts/f"]
    assert [e.in_regime for e in again.evaluations] == [e.in_regime for e in first.evaluations]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a < b", "a < b"),
        ("a<=b and  b >= 2*c", "a <= b and b >= 2 * c"),
        ("0 < a <= hw.x", "0 < a and a <= hw.x"),
    ],
)
def test_conditions_read_back_as_canonical_comparisons(text: str, shown: str) -> None:
    assert str(parse_condition(text)) == shown


@pytest.mark.parametrize("text", ["a", "a == b", "a < b or b < c", "not a < b", "a < b and c", "__import__('os') < 1"])
def test_anything_but_comparisons_joined_by_and_is_refused(text: str) -> None:
    with pytest.raises(ExprSyntaxError):
        parse_condition(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_is_refused_with_a_position_inside_it(text: str) -> None:
    try:
        parse_condition(text)
    except ExprSyntaxError as error:
        assert 0 <= error.offset <= max(len(text), 1)


def test_flopkb_eval_marks_the_points_outside_the_regime(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from flopkb.cli import main

    root = write_kb(
        tmp_path,
        {**HARDWARE, "records/facts/f.yaml": f"id: facts/f\nkind: fact\nstatement: S.\nformulas:\n{MEMORY_BOUND}"},
    )
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        main, ["eval", "facts/f", "--root", str(root)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "valid when batch * (k + 1) <= " in result.output
    rows = [
        line.split() for line in result.output.splitlines() if line.strip().startswith(("1 ", "32 ", "64 ", "128 "))
    ]
    outside = {(row[0], row[1]) for row in rows if "outside" in row}
    assert outside == {
        ("64", "hw/alpha"),
        ("128", "hw/alpha"),
        ("32", "hw/beta"),
        ("64", "hw/beta"),
        ("128", "hw/beta"),
    }

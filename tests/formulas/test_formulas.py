"""The formula stage: one test per code at its exact line (and column), refs, scopes, claims, stored results,
golden values from the project's own records, and property tests that nothing ever runs or crashes."""

from __future__ import annotations

import builtins
import math
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.config import load_config
from flopkb.formulas.results import (
    CLAIM_DISAGREES,
    CLAIM_MISMATCH,
    CLAIM_OK,
    CLAIM_UNCHECKED,
    HW_DEFAULT,
    HW_OWN,
    HW_REF,
    HardwareFigure,
)
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.codes import CODES
from kbfixture import accelerator, compile_kb, located, write_kb
from repo import REPO

IGNORE = ("orphan",)

ALPHA = accelerator(
    "hw/alpha", peak_bf16_dense="1000 TFLOP/s", peak_fp8_dense="2000 TFLOP/s", memory_bandwidth="4 TB/s"
)
BETA = accelerator("hw/beta", peak_bf16_dense="500 TFLOP/s", memory_bandwidth="2.5 TB/s")
HARDWARE = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA}
F = "records/facts/f.yaml"


def fact(formulas: str, name: str = "f") -> dict[str, str]:
    """A fact record whose `formulas:` key is on line 4: the first formula's `- id:` is on line 5."""
    return {f"records/facts/{name}.yaml": f"id: facts/{name}\nkind: fact\nstatement: S.\nformulas:\n{formulas}"}


def check(tmp_path: Path, formulas: str, **more: str) -> list[tuple[str, str, int, int]]:
    return located(compile_kb(write_kb(tmp_path, {**HARDWARE, **fact(formulas), **more})), ignore=IGNORE)


def kb_of(tmp_path: Path, formulas: str, **more: str):
    return compile_kb(write_kb(tmp_path, {**HARDWARE, **fact(formulas), **more}))


def messages(kb, code: str) -> list[str]:
    return [d.message for d in kb.diagnostics if d.code == code]


# ---------------------------------------------------------------------------
# A clean formula, and what the knowledge base keeps of it


LEVIATHAN = """\
  - id: tokens
    title: Expected tokens per step
    expr: (1 - a ** (k + 1)) / (1 - a)
    inputs:
      a: [0.6, 0.8]
      k: [2, 4]
    expect:
      - where: {a: 0.8, k: 4}
        value: 3.3616
"""


def test_a_clean_formula_has_no_problem_and_keeps_every_evaluation(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, LEVIATHAN)
    assert located(kb, ignore=IGNORE) == []
    [result] = kb.formulas["facts/f"]
    assert (result.id, result.title, str(result.expr), result.unit, result.swept) == (
        "tokens",
        "Expected tokens per step",
        "(1 - a**(k + 1)) / (1 - a)",
        "1",
        ("a", "k"),
    )
    assert [(dict(e.point), round(e.value, 6)) for e in result.evaluations] == [
        ({"a": 0.6, "k": 2.0}, 1.96),
        ({"a": 0.6, "k": 4.0}, 2.30560),
        ({"a": 0.8, "k": 2.0}, 2.44),
        ({"a": 0.8, "k": 4.0}, 3.3616),
    ]
    [claim] = result.claims
    assert (claim.status, claim.stated, round(claim.computed, 10), claim.off_by < 1e-12) == (
        CLAIM_OK,
        3.3616,
        3.3616,
        True,
    )
    assert result.complete and result.hardware == () and result.defined_in is None


def test_hardware_figures_carry_value_and_basis(tmp_path: Path) -> None:
    kb = kb_of(
        tmp_path,
        (
            "  - id: ridge\n"
            "    expr: hw.peak_bf16_dense / hw.memory_bandwidth\n"
            "    unit: FLOP/byte\n"
            "    hardware: [hw/alpha, beta]\n"
        ),
    )
    [result] = kb.formulas["facts/f"]
    assert located(kb, ignore=IGNORE) == []
    assert [(e.hardware, e.value) for e in result.evaluations] == [
        ("hw/alpha", pytest.approx(250)),
        ("hw/beta", pytest.approx(200)),
    ]
    assert (result.hardware, result.hardware_from) == (("hw/alpha", "hw/beta"), HW_OWN)
    assert HardwareFigure("hw/alpha", "memory_bandwidth", "4 TB/s", "derived") in result.figures
    assert len(result.figures) == 4


# ---------------------------------------------------------------------------
# One test per code, at its line and column


def test_formula_syntax_at_the_offending_character(tmp_path: Path) -> None:
    # line 6 is `    expr: a + * b`; the value starts at column 11, the `*` is its 5th character
    assert check(tmp_path, "  - id: x\n    expr: a + * b\n    inputs: {a: 1, b: 2}\n") == [("formula-syntax", F, 6, 15)]


def test_formula_syntax_in_a_quoted_scalar(tmp_path: Path) -> None:
    assert check(tmp_path, '  - id: x\n    expr: "a ^ b"\n    inputs: {a: 1, b: 2}\n') == [("formula-syntax", F, 6, 14)]


def test_formula_syntax_inside_a_block_scalar_is_on_its_own_line(tmp_path: Path) -> None:
    body = "  - id: x\n    expr: |\n      a +\n      (b ** 2))\n    inputs: {a: 1, b: 2}\n"
    assert check(tmp_path, body) == [("formula-syntax", F, 8, 15)]


@pytest.mark.parametrize(
    ("expr_lines", "line", "column"),
    [
        ("    expr: >\n      a +\n      * b\n", 8, 7),  # folded block
        ("    expr: a +\n      b +\n      * c\n", 8, 7),  # plain scalar over three lines
        ("    expr: 'a + b ^ 2'\n", 6, 18),  # single-quoted
        ("    expr: !!str a ^ 2\n", 6, 19),  # a tag before the scalar
        ('    expr: "a + \\x62 ^ 2"\n', 6, 11),  # an escape: the scalar's start, no guess
    ],
)
def test_formula_syntax_position_in_every_scalar_style(tmp_path: Path, expr_lines: str, line: int, column: int) -> None:
    assert check(tmp_path, f"  - id: x\n{expr_lines}    inputs: {{a: 1, b: 2, c: 3}}\n") == [
        ("formula-syntax", F, line, column)
    ]


def test_formula_syntax_for_code_that_must_never_run(tmp_path: Path) -> None:
    payload = tmp_path / "pwned"
    body = f"  - id: x\n    expr: __import__('os').system('touch {payload}')\n"
    assert check(tmp_path, body) == [("formula-syntax", F, 6, 11)]
    assert not payload.exists()


def test_formula_unknown_name_at_the_name(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, "  - id: x\n    expr: a * bb\n    inputs: {a: 1, b: 2}\n")
    assert located(kb, ignore=IGNORE) == [("formula-unknown-name", F, 6, 15)]
    assert [d.hint for d in kb.diagnostics if d.code == "formula-unknown-name"] == ["did you mean b?"]


def test_formula_unknown_name_for_a_hw_parameter_outside_the_vocabulary_once(tmp_path: Path) -> None:
    kb = kb_of(
        tmp_path, "  - id: x\n    expr: 2 * hw.memory_bandwith\n    unit: TB/s\n    hardware: [hw/alpha, hw/beta]\n"
    )
    assert located(kb, ignore=IGNORE) == [("formula-unknown-name", F, 6, 15)]
    assert [d.hint for d in kb.diagnostics if d.code == "formula-unknown-name"] == ["did you mean hw.memory_bandwidth?"]


def test_formula_missing_spec_at_the_hardware_item_and_others_still_evaluated(tmp_path: Path) -> None:
    body = (
        "  - id: x\n"
        "    expr: hw.peak_fp8_dense / hw.memory_bandwidth\n"
        "    unit: FLOP/byte\n"
        "    hardware:\n"
        "      - hw/alpha\n"
        "      - hw/beta\n"
    )
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("formula-missing-spec", F, 10, 9)]
    assert (
        "hw/beta" in messages(kb, "formula-missing-spec")[0]
        and "peak_fp8_dense" in messages(kb, "formula-missing-spec")[0]
    )
    [result] = kb.formulas["facts/f"]
    assert [(e.hardware, round(e.value)) for e in result.evaluations] == [("hw/alpha", 500)]
    assert not result.complete


def test_formula_missing_spec_at_the_expr_when_the_scope_is_the_default(tmp_path: Path) -> None:
    flop = """\
id: flops/g
kind: flop
category: arithmetic-intensity
description: D.
affected_by_hardware: [hw/alpha, hw/beta]
formulas:
  - id: x
    expr: hw.peak_fp8_dense
    unit: TFLOP/s
"""
    kb = compile_kb(write_kb(tmp_path, {**HARDWARE, "records/flops/g.yaml": flop}))
    assert located(kb, ignore=IGNORE) == [("formula-missing-spec", "records/flops/g.yaml", 8, 11)]
    assert kb.formulas["flops/g"][0].hardware_from == HW_DEFAULT


def test_hw_without_any_accelerator_in_scope(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, "  - id: x\n    expr: 2 * hw.memory_bandwidth\n    unit: TB/s\n")
    assert located(kb, ignore=IGNORE) == [("formula-missing-spec", F, 6, 11)]
    assert "no accelerator is in scope" in messages(kb, "formula-missing-spec")[0]


def test_formula_unit_mismatch_at_the_operator(tmp_path: Path) -> None:
    body = "  - id: x\n    expr: hw.memory_bandwidth + hw.peak_bf16_dense\n    hardware: [hw/alpha]\n"
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("formula-unit-mismatch", F, 6, 31)]
    assert "[information] / [time] + [operations] / [time]" in messages(kb, "formula-unit-mismatch")[0]


def test_formula_unit_mismatch_with_the_unit_at_the_unit(tmp_path: Path) -> None:
    body = "  - id: x\n    expr: hw.memory_bandwidth\n    unit: TFLOP/s\n    hardware: [hw/alpha, hw/beta]\n"
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("formula-unit-mismatch", F, 7, 11)]  # once, not once per accelerator


def test_formula_error_division_by_zero_names_the_point(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, "  - id: x\n    expr: 1 / (b - 2)\n    inputs:\n      b: [1, 2, 3]\n")
    assert located(kb, ignore=IGNORE) == [("formula-error", F, 6, 11)]
    assert messages(kb, "formula-error") == ["division by zero (at b = 2)"]


def test_formula_error_huge_power_is_refused_fast(tmp_path: Path) -> None:
    assert check(tmp_path, "  - id: x\n    expr: 10 ** 10 ** 10\n") == [("formula-error", F, 6, 11)]


def test_formula_error_sweep_too_large(tmp_path: Path) -> None:
    values = ", ".join(str(i) for i in range(1, 101))
    body = f"  - id: x\n    expr: a + b + c\n    inputs:\n      a: [{values}]\n      b: [{values}]\n      c: [1, 2]\n"
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("formula-error", F, 6, 11)]
    assert "20,000 points" in messages(kb, "formula-error")[0]


def test_invalid_value_for_an_input_that_is_no_quantity_at_the_sweep_item(tmp_path: Path) -> None:
    body = "  - id: x\n    expr: t * 2\n    unit: ms\n    inputs:\n      t:\n        - 20 ms\n        - twenty ms\n"
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("invalid-value", F, 11, 11)]
    assert messages(kb, "invalid-value")[0].startswith("input `t`:")


def test_invalid_value_for_a_unit_that_is_no_unit(tmp_path: Path) -> None:
    assert check(tmp_path, "  - id: x\n    expr: 2 * 3\n    unit: parsecs\n") == [("invalid-value", F, 7, 11)]


def test_unit_mismatch_on_an_accelerator_spec_names_both_dimensions(tmp_path: Path) -> None:
    bad = ALPHA.replace('memory_bandwidth: {value: "4 TB/s"', 'memory_bandwidth: {value: "4 TFLOP/s"')
    kb = compile_kb(write_kb(tmp_path, {"records/hw/alpha.yaml": bad}))
    assert located(kb, ignore=IGNORE) == [("unit-mismatch", "records/hw/alpha.yaml", 7, 29)]
    assert messages(kb, "unit-mismatch") == [
        "specs.memory_bandwidth: 4 TFLOP/s is [operations] / [time], "
        "but memory_bandwidth is [information] / [time] (byte/s)"
    ]


def test_invalid_value_on_an_accelerator_spec_that_is_no_quantity(tmp_path: Path) -> None:
    bad = ALPHA.replace('"4 TB/s"', '"fast"')
    kb = compile_kb(write_kb(tmp_path, {"records/hw/alpha.yaml": bad}))
    assert located(kb, ignore=IGNORE) == [("invalid-value", "records/hw/alpha.yaml", 7, 29)]


def test_a_broken_spec_is_reported_once_not_at_every_formula(tmp_path: Path) -> None:
    bad = ALPHA.replace('"4 TB/s"', '"4 TFLOP/s"')
    body = "  - id: x\n    expr: hw.memory_bandwidth\n    unit: TB/s\n    hardware: [hw/alpha, hw/beta]\n"
    kb = compile_kb(write_kb(tmp_path, {**HARDWARE, "records/hw/alpha.yaml": bad, **fact(body)}))
    assert located(kb, ignore=IGNORE) == [("unit-mismatch", "records/hw/alpha.yaml", 7, 29)]
    assert [e.hardware for e in kb.formulas["facts/f"][0].evaluations] == ["hw/beta"]


def test_a_repeated_formula_id_is_invalid_value_at_the_second(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, "  - id: x\n    expr: 1 + 1\n  - id: x\n    expr: 2 + 2\n")
    assert located(kb, ignore=IGNORE) == [("invalid-value", F, 7, 9)]
    assert [result.evaluations[0].value for result in kb.formulas["facts/f"]] == [2]


def test_formula_cycle_at_the_ref_of_each_formula_on_it(tmp_path: Path) -> None:
    one = "  - id: x\n    ref: facts/g#y\n"
    other = fact("  - id: y\n    ref: facts/f#x\n", name="g")
    kb = kb_of(tmp_path, one, **other)
    assert located(kb, ignore=IGNORE) == [("formula-cycle", F, 6, 10), ("formula-cycle", "records/facts/g.yaml", 6, 10)]
    assert messages(kb, "formula-cycle")[0] == "formula refs form a cycle: facts/f#x -> facts/g#y -> facts/f#x"


def test_formula_cycle_of_one_formula_and_a_formula_leading_into_it(tmp_path: Path) -> None:
    body = "  - id: x\n    ref: facts/f#x\n  - id: z\n    ref: facts/f#x\n"
    assert check(tmp_path, body) == [("formula-cycle", F, 6, 10)]


def test_claim_mismatch_at_the_value_with_both_numbers(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, LEVIATHAN.replace("value: 3.3616", "value: 3.5"))
    assert located(kb, ignore=IGNORE) == [("claim-mismatch", F, 13, 16)]
    assert messages(kb, "claim-mismatch") == [
        "expect[0] at a = 0.8, k = 4 states 3.5, computes 3.3616 (off by 4.1%, tolerance 1%)"
    ]
    assert kb.formulas["facts/f"][0].claims[0].status == CLAIM_MISMATCH


def test_claim_within_its_tolerance_passes(tmp_path: Path) -> None:
    body = LEVIATHAN.replace("value: 3.3616", "value: 3.5\n        rel_tol: 0.05")
    assert check(tmp_path, body) == []


def test_claim_in_another_unit_is_converted_and_a_wrong_dimension_is_unit_mismatch(tmp_path: Path) -> None:
    body = """\
  - id: x
    expr: 8 * hw.memory_bandwidth
    unit: TB/s
    hardware: [hw/alpha]
    expect:
      - hardware: hw/alpha
        value: "32000 GB/s"
      - hardware: hw/alpha
        value: 32 TFLOP/s
"""
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("unit-mismatch", F, 13, 16)]
    assert [claim.status for claim in kb.formulas["facts/f"][0].claims] == [CLAIM_OK, CLAIM_UNCHECKED]


def test_claim_with_a_percent_value(tmp_path: Path) -> None:
    body = (
        "  - id: x\n"
        "    expr: k / batch\n"
        "    inputs: {k: 4, batch: 32}\n"
        "    expect:\n"
        "      - value: 12.5 %\n"
        "      - value: 13 %\n"
    )
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("claim-mismatch", F, 10, 16)]
    assert messages(kb, "claim-mismatch") == ["expect[1] states 13 %, computes 0.125 (off by 4%, tolerance 1%)"]


def test_claim_must_pin_every_swept_input(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, LEVIATHAN.replace("where: {a: 0.8, k: 4}", "where: {a: 0.8}"))
    assert located(kb, ignore=IGNORE) == [("invalid-value", F, 12, 16)]
    assert messages(kb, "invalid-value") == ["expect[0] does not pin the swept input `k`"]


def test_claim_where_must_name_an_input(tmp_path: Path) -> None:
    kb = kb_of(tmp_path, LEVIATHAN.replace("where: {a: 0.8, k: 4}", "where: {a: 0.8, k: 4, c: 1}"))
    assert located(kb, ignore=IGNORE) == [("invalid-value", F, 12, 31)]


def test_claim_where_value_of_the_wrong_dimension_is_unit_mismatch(tmp_path: Path) -> None:
    user = (
        "  - id: be\n"
        "    expr: t_spec / (k * t_base)\n"
        "    inputs: {t_spec: [28 ms, 40 ms], k: 4, t_base: 20 ms}\n"
        "    expect:\n"
        "      - where: {t_spec: 40}\n"
        "        value: 0.5\n"
    )
    kb = kb_of(tmp_path, user)
    assert located(kb, ignore=IGNORE) == [("unit-mismatch", F, 9, 25)]
    assert messages(kb, "unit-mismatch") == [
        "expect[0].where.t_spec: 40 is dimensionless, but input `t_spec` is [time]"
    ]


def test_claim_needs_hardware_when_the_expression_uses_hw(tmp_path: Path) -> None:
    body = (
        "  - id: x\n"
        "    expr: hw.memory_bandwidth\n"
        "    unit: TB/s\n"
        "    hardware: [hw/alpha]\n"
        "    expect:\n"
        "      - value: 4\n"
    )
    kb = kb_of(tmp_path, body)
    assert located(kb, ignore=IGNORE) == [("invalid-value", F, 10, 9)]
    assert kb.formulas["facts/f"][0].claims[0].status == CLAIM_UNCHECKED


def test_claim_hardware_must_be_in_scope(tmp_path: Path) -> None:
    body = (
        "  - id: x\n"
        "    expr: hw.memory_bandwidth\n"
        "    unit: TB/s\n"
        "    hardware: [hw/alpha]\n"
        "    expect:\n"
        "      - hardware: hw/beta\n"
        "        value: 2.5\n"
    )
    assert check(tmp_path, body) == [("invalid-value", F, 10, 19)]


def test_claim_with_a_dangling_hardware_is_left_to_the_link_stage(tmp_path: Path) -> None:
    body = (
        "  - id: x\n"
        "    expr: hw.memory_bandwidth\n"
        "    unit: TB/s\n"
        "    hardware: [hw/alpha]\n"
        "    expect:\n"
        "      - hardware: hw/gamma\n"
        "        value: 2.5\n"
    )
    assert check(tmp_path, body) == [("dangling-ref", F, 10, 19)]


# ---------------------------------------------------------------------------
# Shared definitions: refs


SHARED = """\
  - id: be
    expr: t_spec / (k * t_base)
    inputs: {t_spec: 28 ms, k: 4, t_base: 20 ms}
    expect:
      - value: 0.35
"""


def test_a_ref_takes_expr_unit_and_inputs_with_its_own_inputs_winning(tmp_path: Path) -> None:
    user = fact(
        (
            "  - id: mine\n"
            "    ref: f#be\n"
            "    inputs:\n"
            "      t_spec: [20 ms, 40 ms]\n"
            "    expect:\n"
            "      - where: {t_spec: 40 ms}\n"
            "        value: 0.5\n"
        ),
        name="g",
    )
    kb = kb_of(tmp_path, SHARED, **user)
    assert located(kb, ignore=IGNORE) == []
    [result] = kb.formulas["facts/g"]
    assert (str(result.expr), result.defined_in, result.chain) == (
        "t_spec / (k * t_base)",
        ("facts/f", "be"),
        (("facts/f", "be"),),
    )
    assert result.inputs == {"t_spec": ["20 ms", "40 ms"], "k": 4, "t_base": "20 ms"}
    assert [round(e.value, 6) for e in result.evaluations] == [0.25, 0.5]


def test_a_ref_chain_is_followed_and_a_written_unit_wins(tmp_path: Path) -> None:
    middle = fact("  - id: m\n    ref: facts/f#be\n    inputs: {k: 2}\n", name="m")
    last = fact("  - id: l\n    ref: m#m\n    unit: '%'\n    expect:\n      - value: 70\n", name="l")
    kb = kb_of(tmp_path, SHARED, **middle, **last)
    assert located(kb, ignore=IGNORE) == []
    [result] = kb.formulas["facts/l"]
    assert (result.unit, result.defined_in, result.chain) == (
        "%",
        ("facts/f", "be"),
        (("facts/m", "m"), ("facts/f", "be")),
    )
    assert result.claims[0].status == CLAIM_OK


def test_a_ref_uses_the_hardware_of_its_chain_else_its_own_record_default(tmp_path: Path) -> None:
    shared = "  - id: r\n    expr: hw.memory_bandwidth\n    unit: TB/s\n    hardware: [hw/alpha]\n"
    flop = """\
id: flops/g
kind: flop
category: arithmetic-intensity
description: D.
affected_by_hardware: [hw/beta]
formulas:
  - id: inherits
    ref: facts/f#r
  - id: own
    ref: facts/f#r
    hardware: [hw/beta]
"""
    kb = kb_of(tmp_path, shared, **{"records/flops/g.yaml": flop})
    inherits, own = kb.formulas["flops/g"]
    assert (inherits.hardware, inherits.hardware_from) == (("hw/alpha",), HW_REF)
    assert (own.hardware, own.hardware_from, [e.value for e in own.evaluations]) == (
        ("hw/beta",),
        HW_OWN,
        [pytest.approx(2.5)],
    )


def test_a_shared_expression_that_does_not_parse_is_reported_once_where_it_is_written(tmp_path: Path) -> None:
    user = fact("  - id: mine\n    ref: facts/f#x\n", name="g")
    assert check(tmp_path, "  - id: x\n    expr: a +\n", **user) == [("formula-syntax", F, 6, 11)]


def test_a_ref_that_does_not_land_is_left_to_the_link_stage(tmp_path: Path) -> None:
    user = fact("  - id: mine\n    ref: facts/f#nope\n  - id: other\n    ref: facts/zz#be\n", name="g")
    found = check(tmp_path, SHARED, **user)
    assert [code for code, *_ in found] == ["dangling-anchor", "dangling-ref"]


def test_a_ref_with_its_own_broken_input_is_reported_at_that_input(tmp_path: Path) -> None:
    user = fact("  - id: mine\n    ref: facts/f#be\n    inputs: {k: four}\n", name="g")
    assert check(tmp_path, SHARED, **user) == [("invalid-value", "records/facts/g.yaml", 7, 17)]


# ---------------------------------------------------------------------------
# Golden values from the project's own records, computed independently


@pytest.fixture(scope="module")
def project():
    return compile_knowledge_base(load_config(REPO), CHECK_STAGES)


def _spec(name: str, parameter: str) -> float:
    """A spec of a real accelerator record, read with plain YAML and hand-written unit factors."""
    data = yaml.safe_load((REPO / "records/accelerators" / f"{name}.yaml").read_text(encoding="utf-8"))
    number, unit = data["specs"][parameter]["value"].split()
    return float(number) * {"TFLOP/s": 1e12, "TB/s": 1e12}[unit]


ACCELERATORS = ["nvidia-h100-sxm", "nvidia-h200-sxm", "nvidia-b200", "amd-instinct-mi300x"]


def test_the_project_records_have_no_formula_problem(project) -> None:
    formula_codes = {"unit-mismatch", "claim-mismatch", "invalid-value"} | {
        code for code in CODES if code.startswith("formula-")
    }
    assert [d for d in project.diagnostics if d.code in formula_codes] == []
    claims = [claim for results in project.formulas.values() for result in results for claim in result.claims]
    stated = [claim for claim in claims if not claim.is_measured]
    assert len(stated) > 50 and {claim.status for claim in stated} == {CLAIM_OK}
    # a model may disagree with what a source measured (a warning, shown on the page); it is never left unchecked
    assert {claim.status for claim in claims if claim.is_measured} <= {CLAIM_OK, CLAIM_DISAGREES}


@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_ridge_point_of_each_real_accelerator(project, accelerator: str) -> None:
    ridge = _spec(accelerator, "peak_bf16_dense") / _spec(accelerator, "memory_bandwidth")
    [result] = [r for r in project.formulas["facts/ridge-point"] if r.id == "ridge-point"]
    values = {e.hardware: e.value for e in result.evaluations}
    assert values[f"accelerators/{accelerator}"] == pytest.approx(ridge, rel=1e-12)


def test_ridge_points_are_what_the_prose_says(project) -> None:
    [result] = [r for r in project.formulas["facts/ridge-point"] if r.id == "ridge-point"]
    assert [round(e.value) for e in result.evaluations] == [295, 206, 292, 247]
    assert (
        HardwareFigure(
            "accelerators/nvidia-h100-sxm", "memory_bandwidth", "3.35 TB/s", "vendor-spec", ("nvidia-h100-datasheet",)
        )
        in result.figures
    )


def _expected_tokens(a: float, k: int) -> float:
    return sum(a**i for i in range(k + 1))  # 1 + a + ... + a^k, the geometric series summed term by term


@pytest.mark.parametrize(("a", "k"), [(0.5, 1), (0.6, 2), (0.7, 3), (0.8, 4), (0.9, 5), (0.9, 8)])
def test_leviathan_expected_tokens_from_the_real_record(project, a: float, k: int) -> None:
    [result] = [
        r
        for r in project.formulas["facts/fct-spec-decoding-cost-model-break-even"]
        if r.id == "expected-tokens-per-step"
    ]
    [value] = [e.value for e in result.evaluations if dict(e.point) == {"alpha": a, "k": k}]
    assert value == pytest.approx(_expected_tokens(a, k), rel=1e-12)


@pytest.mark.parametrize(
    ("a", "k", "c"), [(0.8, 4, 0.05), (0.8, 4, 0.1), (0.8, 4, 0.2), (0.5, 8, 0.2), (0.9, 3, 0.1), (0.6, 1, 0.05)]
)
def test_leviathan_walltime_improvement_from_the_real_record(project, a: float, k: int, c: float) -> None:
    [result] = [
        r for r in project.formulas["facts/fct-spec-decoding-cost-model-break-even"] if r.id == "walltime-improvement"
    ]
    [value] = [e.value for e in result.evaluations if dict(e.point) == {"alpha": a, "k": k, "c": c}]
    assert value == pytest.approx(_expected_tokens(a, k) / (k * c + 1), rel=1e-12)


def test_the_shared_break_even_formula_is_literally_shared(project) -> None:
    [result] = [
        r
        for r in project.formulas["flops/eng-profile-spec-decoding-engine-break-even-shift"]
        if r.id == "break-even-memory-bound"
    ]
    assert result.defined_in == ("facts/fct-spec-decoding-cost-model-break-even", "break-even-memory-bound")
    assert [round(e.value, 6) for e in result.evaluations] == [0.25, 0.35, 0.5]


# ---------------------------------------------------------------------------
# Property tests: random expressions never crash; random text never runs

_NAMES = st.sampled_from(["a", "b", "t", "hw.memory_bandwidth", "hw.peak_bf16_dense", "zz", "hw.tdp"])
_NUMBERS = st.sampled_from(["0", "1", "2.5", "1e12", "1e308", "-3", "0.0"])


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(_NAMES, _NUMBERS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        )
        unary = st.tuples(
            st.sampled_from(["abs", "sqrt", "exp", "log", "log2", "log10", "ceil", "floor", "-"]), inner
        ).map(lambda t: f"{t[0]}({t[1]})")
        variadic = st.tuples(st.sampled_from(["min", "max"]), st.lists(inner, min_size=2, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        )
        return st.one_of(binary, unary, variadic)

    return st.recursive(leaves, extend, max_leaves=12)


def _compile_formula(expr: str) -> tuple[object, list]:
    body = (
        f"  - id: x\n    expr: {yaml.safe_dump(expr, default_style=chr(34), width=10_000).strip()}\n"
        "    unit: '1'\n"
        "    inputs:\n"
        "      a: [1, 2]\n"
        "      b: 3 TB/s\n"
        "      t: 20 ms\n"
        "    hardware: [hw/alpha, hw/beta]\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        kb = compile_kb(write_kb(Path(folder), {**HARDWARE, **fact(body)}))
    problems = [d for d in kb.diagnostics if d.code not in IGNORE]
    return kb, problems


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions())
def test_random_expressions_evaluate_or_give_a_diagnostic(expr: str) -> None:
    kb, problems = _compile_formula(expr)
    [result] = kb.formulas["facts/f"]
    assert all(problem.code in CODES and problem.path == F and problem.line >= 5 for problem in problems)
    if not problems:
        assert result.complete and result.evaluations
        assert all(math.isfinite(e.value) for e in result.evaluations)
    else:
        assert not result.complete


_SENTINEL_CALLS: list[str] = []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(
        [
            "sentinel()",
            "__import__('builtins').sentinel()",
            "[sentinel() for _ in 'x']",
            "lambda: sentinel()",
            "(sentinel)()",
        ]
    ),
)
def test_random_text_in_an_expression_never_runs(noise: str, call: str) -> None:
    builtins.sentinel = lambda: _SENTINEL_CALLS.append("ran")  # type: ignore[attr-defined]
    try:
        for expr in (call, f"{noise}{call}", f"{call}{noise}", noise or "x"):
            _, problems = _compile_formula(expr)
            assert all(problem.code in CODES for problem in problems)
    finally:
        del builtins.sentinel  # type: ignore[attr-defined]
    assert _SENTINEL_CALLS == []

"""`flopkb eval` through its command line: tables, what-ifs, and exit statuses 0, 1 and 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from flopkb.cli import main
from kbfixture import accelerator, write_kb
from repo import REPO

ALPHA = accelerator("hw/alpha", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s")
BETA = accelerator("hw/beta", peak_bf16_dense="500 TFLOP/s", memory_bandwidth="2.5 TB/s")
FACT = """\
id: facts/f
kind: fact
statement: S.
formulas:
  - id: ridge
    title: Ridge point
    expr: hw.peak_bf16_dense / hw.memory_bandwidth * batch / (batch + k)
    unit: FLOP/byte
    inputs:
      batch: [1, 32]
      k: 4
    hardware: [hw/alpha, hw/beta]
    expect:
      - where: {batch: 32}
        hardware: hw/alpha
        value: 222.22
  - id: gain
    expr: k / batch
    inputs: {k: 4, batch: 32}
"""
ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(
        tmp_path, {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}
    )


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["eval", "--root", str(root), *args], env=ENV)


def rows(result: Result) -> list[list[str]]:
    return [line.split() for line in result.output.splitlines()]


def test_eval_prints_every_evaluation_with_the_figures_it_used(kb: Path) -> None:
    result = run(kb, "facts/f")
    assert result.exit_code == 0, result.output
    assert "facts/f#ridge  Ridge point" in result.output
    assert ["1", "hw/alpha", "4", "TB/s", "(derived)", "1000", "TFLOP/s", "(derived)", "50"] in rows(result)
    assert ["32", "hw/beta", "2.5", "TB/s", "(derived)", "500", "TFLOP/s", "(derived)", "177.778"] in rows(result)
    assert "value [FLOP/byte]" in result.output
    assert "claims: 1 of 1 within tolerance" in result.output
    assert ["k", "=", "4,", "batch", "=", "32"] in rows(result)  # the fixed inputs of `gain`
    assert ["0.125"] in rows(result)


def test_eval_resolves_the_record_like_a_ref(kb: Path) -> None:
    assert run(kb, "f").exit_code == 0


def test_set_turns_a_sweep_into_one_value(kb: Path) -> None:
    result = run(kb, "f", "--set", "batch=8")
    assert result.exit_code == 0, result.output
    assert "what-if: claims are not checked" in result.output
    assert ["hw/alpha", "4", "TB/s", "(derived)", "1000", "TFLOP/s", "(derived)", "166.667"] in rows(result)
    assert ["0.5"] in rows(result)  # gain = 4 / 8


def test_set_can_make_a_sweep_and_take_units(kb: Path) -> None:
    result = run(kb, "f", "--set", "k=2,8", "--hardware", "alpha")
    assert result.exit_code == 0, result.output
    lines = rows(result)
    assert ["1", "2", "hw/alpha", "4", "TB/s", "(derived)", "1000", "TFLOP/s", "(derived)", "83.3333"] in lines
    assert not any("hw/beta" in line for line in lines)


def test_hardware_restricts_to_one_accelerator(kb: Path) -> None:
    result = run(kb, "f", "--hardware", "hw/beta")
    assert result.exit_code == 0, result.output
    assert [line[1] for line in rows(result) if "(derived)" in line] == ["hw/beta", "hw/beta"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "no record 'nope'"),
        (["hw/alpha"], "hw/alpha has no formulas to evaluate"),
        (["f", "--hardware", "gamma"], "--hardware gamma: no record"),
        (["f", "--hardware", "facts/f"], "--hardware facts/f: facts/f is not an accelerator"),
        (["f", "--hardware", "alp"], "--hardware alp: no record; did you mean hw/alpha?"),
        (["f", "--set", "batch=lots"], "--set batch: 'lots' is not a quantity"),
        (["f", "--set", "batch=3 parsec"], "--set batch: unknown unit 'parsec'"),
        (["f", "--set", "batch"], "--set 'batch': write NAME=QUANTITY"),
        (
            ["f", "--set", "batch=3 ms"],
            "--set batch: 3 ms is [time], but input `batch` of facts/f#ridge is dimensionless",
        ),
        (["f", "--set", "zz=1"], "--set zz: no formula of facts/f has that input (its inputs: batch, k)"),
    ],
)
def test_usage_problems_exit_2_with_a_clear_message(kb: Path, args: list[str], message: str) -> None:
    result = run(kb, *args)
    assert result.exit_code == 2
    assert message in result.output


def test_a_record_with_errors_prints_them_and_exits_1(kb: Path) -> None:
    (kb / "records/facts/f.yaml").write_text(FACT.replace("value: 222.22", "value: 250"), encoding="utf-8")
    result = run(kb, "f")
    assert result.exit_code == 1
    assert (
        "records/facts/f.yaml:16:16: error claim-mismatch: expect[0] at batch = 32, on hw/alpha states 250 FLOP/byte"
        in result.output
    )
    assert "claims: 0 of 1 within tolerance, 1 off" in result.output


def test_a_record_that_does_not_validate_prints_its_problems_and_exits_1(kb: Path) -> None:
    (kb / "records/facts/f.yaml").write_text(FACT + "bogus: 1\n", encoding="utf-8")
    result = run(kb, "f")
    assert result.exit_code == 1
    assert "records/facts/f.yaml:20:1: error unknown-field" in result.output


@pytest.mark.parametrize(
    ("ref", "problem"),
    [
        ("facts/f", "formulas[2].ref: 'facts/f' names no formula of facts/f"),
        ("facts/f#nope", "formulas[2].ref: 'facts/f#nope': facts/f has no formula 'nope'"),
    ],
)
def test_a_formula_whose_ref_names_no_formula_is_shown_with_its_sweep_and_its_problem(
    kb: Path, ref: str, problem: str
) -> None:
    fact = FACT + f"  - id: again\n    ref: {ref}\n    inputs:\n      batch: [1, 32]\n"
    (kb / "records/facts/f.yaml").write_text(fact, encoding="utf-8")
    result = run(kb, "f")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "facts/f#again\n  batch = [1, 32]\n  no evaluations: see the problems below\n" in result.output
    assert f"records/facts/f.yaml:21:10: error dangling-anchor: {problem}" in result.output


def test_a_what_if_that_fails_prints_the_problem_and_exits_1(kb: Path) -> None:
    result = run(kb, "f", "--set", "batch=0")
    assert result.exit_code == 1
    assert "error formula-error: division by zero (at batch = 0)" not in result.output  # batch is fixed now, not swept
    assert "error formula-error: division by zero" in result.output


def test_eval_on_the_project_records(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "--root", str(REPO), "ridge-point"], env=ENV)
    assert result.exit_code == 0, result.output
    assert [
        "accelerators/nvidia-h100-sxm",
        "3.35",
        "TB/s",
        "(vendor-spec)",
        "989.4",
        "TFLOP/s",
        "(vendor-spec)",
        "295.343",
    ] in rows(result)
    result = CliRunner().invoke(
        main,
        ["eval", "--root", str(REPO), "fct-spec-decoding-cost-model-break-even", "--set", "alpha=0.8", "--set", "k=4"],
        env=ENV,
    )
    assert result.exit_code == 0, result.output
    assert ["3.3616"] in rows(result)


def test_eval_prints_the_model_against_each_measurement(tmp_path: Path) -> None:
    source = (
        "id: sources/paper\nkind: source\ntitle: P\nmeasurements:\n"
        "  - {id: b32, quantity: gain, value: 0.2, basis: simulated, where: Figure 22}\n"
    )
    fact = FACT + "    expect:\n      - {measured: sources/paper#b32}\n"
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": fact}
    root = write_kb(tmp_path, {**files, "records/sources/paper.yaml": source})
    result = run(root, "facts/f")
    assert result.exit_code == 0, result.output  # a disagreement is a warning
    assert "1 disagreeing with a measurement" in result.output
    assert ["sources/paper#b32", "(Figure", "22)", "simulated", "0.2", "0.125", "60%", "disagrees"] in rows(result)


def test_a_narrow_terminal_folds_the_measurement_table_and_cuts_nothing(tmp_path: Path) -> None:
    record = "facts/decode-compute-bound-throughput-ceiling"
    result = CliRunner().invoke(main, ["eval", "--root", str(REPO), record], env={**ENV, "COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    folded = "".join(line[34:64].strip() for line in result.output.splitlines())
    assert "#nvidia-h200-8x-offline(closed/NVIDIA/results/H200-SXM-141GBx8_TRT/" in folded

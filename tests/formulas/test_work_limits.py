"""Bounded work: a record's and a base's formulas compute a limited number of values, refs included, and a borrowed
formula is computed once per distinct inputs and accelerators."""

from __future__ import annotations

from pathlib import Path

import pytest

from flopkb.formulas import context, evaluate, stage
from flopkb.formulas.evaluate import RECORD_VALUE_LIMIT
from kbfixture import compile_kb, compile_warm, write_kb

SWEEP = 5_000


def sweep_fact(points: int = SWEEP) -> str:
    values = ", ".join(str(index + 1) for index in range(points))
    return (
        "id: facts/sweep\nkind: fact\ntitle: Sweep\nstatement: A sweep.\nformulas:\n"
        f"  - id: f\n    expr: x * 2\n    inputs:\n      x: [{values}]\n"
    )


def borrower(record_id: str, refs: int, inputs: str = "") -> str:
    formulas = "".join(f"  - id: r{index}\n    ref: facts/sweep#f\n{inputs}" for index in range(refs))
    return (
        f"id: {record_id}\nkind: flop\ncategory: arithmetic-intensity\n"
        f"description: See [[facts/sweep]].\nformulas:\n{formulas}"
    )


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many values each call of `evaluate_formula` computed, in order."""
    counted: list[int] = []
    real = evaluate.evaluate_formula

    def counting(*args: object, **kwargs: object) -> list[evaluate.Evaluation]:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        counted.append(len(found))
        return found

    monkeypatch.setattr(stage, "evaluate_formula", counting)
    return counted


def test_a_ref_bomb_is_refused_past_the_records_limit_and_computed_once(tmp_path: Path, evaluations: list[int]) -> None:
    write_kb(
        tmp_path, {"records/facts/sweep.yaml": sweep_fact(), "records/flops/bomb.yaml": borrower("flops/bomb", 200)}
    )
    kb = compile_kb(tmp_path)
    refused = [d for d in kb.diagnostics if d.code == "formula-error"]
    allowed = RECORD_VALUE_LIMIT // SWEEP  # the fact's own formula counts for the fact, not for the borrower
    assert len(refused) == 200 - allowed
    first = refused[0]
    assert (first.path, first.line, first.column) == ("records/flops/bomb.yaml", 7 + 2 * allowed, 10)  # its `ref`
    assert first.message == (
        f"the record's formulas would compute {(allowed + 1) * SWEEP:,} values in all, refs included; "
        f"the limit is {RECORD_VALUE_LIMIT:,} a record"
    )
    assert evaluations == [SWEEP]  # the fact's formula, and every ref, share one computation
    results = kb.formulas["flops/bomb"]
    assert [len(result.evaluations) for result in results] == [SWEEP] * allowed + [0] * len(refused)


def test_a_borrowed_formula_is_computed_once_per_distinct_inputs(tmp_path: Path, evaluations: list[int]) -> None:
    write_kb(
        tmp_path,
        {
            "records/facts/sweep.yaml": sweep_fact(10),
            "records/flops/a.yaml": borrower("flops/a", 3),
            "records/flops/b.yaml": borrower("flops/b", 3, "    inputs: {x: [1, 2]}\n"),
            "records/flops/c.yaml": borrower("flops/c", 2, "    inputs: {x: 7}\n"),
        },
    )
    kb = compile_kb(tmp_path)
    assert [d.code for d in kb.diagnostics if d.code != "orphan"] == []
    assert sorted(evaluations) == [1, 2, 10]
    assert [evaluation.value for evaluation in kb.formulas["flops/c"][1].evaluations] == [14.0]


def test_the_bases_limit_gives_the_same_verdict_cold_and_warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context, "BASE_VALUE_LIMIT", 4 * SWEEP)
    files = {"records/facts/sweep.yaml": sweep_fact()}
    files |= {f"records/flops/u{index}.yaml": borrower(f"flops/u{index}", 1) for index in range(5)}
    write_kb(tmp_path, files)
    cold = sorted(compile_kb(tmp_path).diagnostics)
    refused = [(d.path, d.message) for d in cold if d.code == "formula-error"]
    assert refused == [
        (
            f"records/flops/u{index}.yaml",
            f"the knowledge base's formulas would compute more than {4 * SWEEP:,} values in all",
        )
        for index in (3, 4)
    ]
    assert sorted(compile_warm(tmp_path).diagnostics) == cold
    (tmp_path / "records/flops/u0.yaml").write_text(borrower("flops/u0", 1) + "notes: edited\n")
    assert sorted(compile_warm(tmp_path).diagnostics) == sorted(compile_kb(tmp_path).diagnostics) == cold
    (tmp_path / "records/flops/u1.yaml").unlink()
    warm = sorted(compile_warm(tmp_path).diagnostics)
    assert warm == sorted(compile_kb(tmp_path).diagnostics)
    assert [d.path for d in warm if d.code == "formula-error"] == ["records/flops/u4.yaml"]

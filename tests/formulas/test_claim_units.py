"""A claim in another unit than its formula's: the hints never turn a right figure into another quantity.

When the formula's `unit` is not what its expression computes, a claim of what the expression computes is right:
the formula's `unit` is told wrong, not the claim. No hint keeps a claim's number and gives it a unit of another
dimension (`3 ms` to `3 token/s` states an unrelated figure).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.formulas.units import dimension_of
from flopkb.kb.knowledge_base import KnowledgeBase
from kbfixture import H100, compile_kb, write_kb

UNIT_CODES = ("formula-unit-mismatch", "unit-mismatch")
UNITS = ["token/s", "GB", "ms", "s", "1", "FLOP/s"]
"""Formula units: of the expression's dimension (a time: `kv_bytes / hw.memory_bandwidth`) and of others."""
CLAIMED = ["3 ms", "0.003 s", "3 GB", "3 token/s", "3"]
"""Claimed values: the right figure (a time), and figures of other dimensions."""


def flop(unit: str, value: str) -> str:
    return (
        "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: Streams.\nformulas:\n  - id: f\n"
        f"    expr: kv_bytes / hw.memory_bandwidth\n    unit: '{unit}'\n    inputs: {{kv_bytes: 10 GB}}\n"
        f"    hardware: [hw/h100]\n    expect:\n      - where: {{}}\n        hardware: hw/h100\n"
        f"        value: '{value}'\n"
    )


def unit_problems(kb: KnowledgeBase) -> list[tuple[str, int, int, str, str | None]]:
    return [(d.code, d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.code in UNIT_CODES]


def test_a_right_claim_under_a_wrong_formula_unit_is_not_told_to_change(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": flop("token/s", "3 ms"), "records/hw/h100.yaml": H100}))
    assert unit_problems(kb) == [
        (
            "formula-unit-mismatch",
            8,
            11,
            "the result is [time] but unit 'token/s' is 1 / [time]",
            "give the formula the unit its claim is written in: `unit: ms`",
        )
    ]
    [claim] = kb.formulas["flops/x"][0].claims
    assert claim.reason == "the formula's unit is not of the dimension its expression computes"


def test_a_claim_of_another_quantity_is_told_what_the_formula_computes(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": flop("ms", "3 GB"), "records/hw/h100.yaml": H100}))
    assert unit_problems(kb) == [
        (
            "unit-mismatch",
            14,
            16,
            "expect[0].value: 3 GB is [information], not [time] (the formula's unit is ms)",
            "claim what the formula computes: a value of [time], in ms or another unit of it",
        )
    ]


def test_a_claim_that_agrees_with_a_wrong_unit_points_at_the_expression(tmp_path: Path) -> None:
    files = {"records/flops/x.yaml": flop("token/s", "300 token/s"), "records/hw/h100.yaml": H100}
    assert unit_problems(compile_kb(write_kb(tmp_path, files))) == [
        (
            "formula-unit-mismatch",
            8,
            11,
            "the result is [time] but unit 'token/s' is 1 / [time]",
            "the claims are 1 / [time], as `unit` is: fix the expression, which comes out in s",
        )
    ]


def applied(text: str, hints: list[str]) -> str:
    """`text` with each hint that names what to write applied as written (`unit: s`, a value `3 s`)."""
    for hint in hints:
        for unit in re.findall(r"`unit: ([^`]+)`", hint):
            text = re.sub(r"(?m)^    unit: .*$", f"    unit: '{unit}'", text)
        for value in re.findall(r"`(\d[\d.]* [^`]+)`", hint):
            text = re.sub(r"(?m)^        value: .*$", f"        value: '{value}'", text)
    return text


LITERAL = re.compile(r"`unit: [^`]+`|`\d[\d.]* [^`]+`")
"""What a hint names to write, as written."""


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(UNITS), st.sampled_from(CLAIMED))
def test_no_hint_swaps_a_claims_unit_and_applying_the_hints_leaves_no_unit_error(unit: str, value: str) -> None:
    number, _, written_unit = value.partition(" ")
    with tempfile.TemporaryDirectory() as root:
        text = flop(unit, value)
        kb = compile_kb(write_kb(Path(root), {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}))
        told = unit_problems(kb)
        hints = [hint for *_, hint in told if hint is not None]
        for proposed in re.findall(rf"`{re.escape(number)}(?: ([^`]+))?`", " ".join(hints)):
            assert dimension_of(proposed or "1") == dimension_of(written_unit or "1"), hints
        Path(root, "records/flops/x.yaml").write_text(applied(text, hints))
        left = unit_problems(compile_kb(Path(root)))
        # what is left was told before with a fix to think over (a claim of another quantity), never one to write
        assert [problem[:2] for problem in left] == [
            problem[:2] for problem in told if problem[4] is None or not LITERAL.search(problem[4])
        ]
        if dimension_of(written_unit or "1") == dimension_of("s"):  # the claim states what the expression computes
            assert left == []

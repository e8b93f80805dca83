"""A rule of a mapping that reads two of its fields ("a claim has exactly one of 'value' and 'measured'") is told in
the same run as the problems of the mapping's other fields, and only where the author broke it: every problem of a
record in one run (docs/cli.md)."""

from __future__ import annotations

import io
from pathlib import Path

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flopkb.load.source import parse
from flopkb.load.validate import validate_record
from flopkb.load.vocabulary import vocabulary_from_data
from flopkb.report.diagnostics import Diagnostic, Severity
from flopkb.report.reporters import Summary, report
from kbfixture import H100, VOCABULARY, compile_kb, write_kb

PAPER = (
    "id: src/p\nkind: source\ntitle: P\nmeasurements:\n  - {id: m, quantity: q, value: 6, basis: measured, where: T1}\n"
)
REL = "records/flops/x.yaml"
HEAD = "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: d\nformulas:\n  - id: f\n"
BOTH_CLAIM = "keep one: remove `measured:` to state the value, or `value:` to test the formula against the measurement"


def _errors_told(text: str, tmp_path: Path) -> list[str]:
    """The errors `flopkb check` prints for the record `text`, line by line, in a base with an accelerator and a
    paper that measured 6."""
    write_kb(tmp_path, {"records/hw/h100.yaml": H100, "records/src/p.yaml": PAPER, REL: text})
    errors = [d for d in compile_kb(tmp_path).diagnostics if d.path == REL and d.severity is Severity.ERROR]
    stream = io.StringIO()
    report(errors, Summary.of(errors, 1), "text", stream)
    return stream.getvalue().splitlines()[:-1]  # without the summary


def test_a_claim_with_a_value_and_a_measurement_is_told_so_beside_its_wrong_rel_tol(tmp_path: Path) -> None:
    claim = "    expr: 2 * 3\n    expect:\n      - value: 6\n        measured: src/p#m\n        rel_tol: lots\n"
    assert _errors_told(HEAD + claim, tmp_path) == [
        f"{REL}:9:9: error invalid-value: formulas[0].expect[0]: a claim has exactly one of 'value' and 'measured'",
        f"    hint: {BOTH_CLAIM}",
        f"{REL}:11:18: error invalid-value: formulas[0].expect[0].rel_tol: expected a number, got the text 'lots'",
    ]


def test_a_formula_with_an_expression_and_a_ref_is_told_so_beside_its_wrong_title(tmp_path: Path) -> None:
    formula = "    title: [T]\n    expr: 2 * 3\n    ref: flops/y#g\n"
    assert _errors_told(HEAD + formula, tmp_path) == [
        f"{REL}:6:5: error invalid-value: formulas[0]: a formula has exactly one of 'expr' and 'ref'",
        "    hint: keep one: remove `ref:` to use this expression, or `expr:` to reuse the other formula",
        f"{REL}:7:12: error invalid-value: formulas[0].title: expected text, got a list",
    ]


def test_a_claim_with_a_wrong_value_and_a_measurement_is_told_it_has_both(tmp_path: Path) -> None:
    """The rule reads which keys the claim has, whatever their values: a wrong value is a value given."""
    claim = "    expr: 2 * 3\n    expect:\n      - value: {a: b}\n        measured: src/p#m\n"
    told = _errors_told(HEAD + claim, tmp_path)
    assert told[:2] == [
        f"{REL}:9:9: error invalid-value: formulas[0].expect[0]: a claim has exactly one of 'value' and 'measured'",
        f"    hint: {BOTH_CLAIM}",
    ]
    assert told[2].startswith(f"{REL}:9:16: error invalid-value: formulas[0].expect[0].value: "), told


def test_a_claim_whose_only_value_is_wrong_is_told_that_and_not_that_it_has_none(tmp_path: Path) -> None:
    claim = "    expr: 2 * 3\n    expect:\n      - value: {a: b}\n        rel_tol: 0.1\n"
    assert [line for line in _errors_told(HEAD + claim, tmp_path) if not line.startswith("    hint:")] == [
        f"{REL}:9:16: error invalid-value: formulas[0].expect[0].value: expected text, got a mapping"
    ]


LINES = (
    "id: flops/x",
    "kind: flop",
    "category: memory-bandwidth",
    "description: d",
    "tags: [t]",
    "affected_by_hardware: [hw/h100]",
    "formulas:",
    "  - id: f",
    "    title: T",
    "    expr: 2 * 3",
    "    ref: null",
    "    expect:",
    "      - value: 6",
    "        measured: null",
    "        rel_tol: 0.05",
    "        where: {}",
    "      - value: 6",
    "  - id: g",
    "    expr: '1'",
    "workarounds: [w]",
)
PROBLEMS = {
    "a required text field wrong": (3, "description: [d]"),
    "an unknown field": (4, "tagz: [t]"),
    "a ref in brackets": (5, 'affected_by_hardware: ["[[hw/h100]]"]'),
    "a formula's title wrong": (8, "    title: [T]"),
    "a formula with an expression and a ref": (10, "    ref: flops/y#g"),
    "a claim's value wrong": (12, "      - value: {a: b}"),
    "a claim with a value and a measurement": (13, "        measured: src/p#m"),
    "a claim's rel_tol wrong": (14, "        rel_tol: lots"),
    "a claim's where wrong": (15, "        where: [1]"),
    "a claim with neither value nor measurement": (16, "      - value: null"),
    "a formula with neither expression nor ref": (18, "    expr: null"),
    "a workaround wrong": (19, "workarounds: [{a: b}]"),
}
"""Problems of the record, each one line replaced: a problem moves no line of another."""
CHECKED_AS = vocabulary_from_data(yaml.safe_load(VOCABULARY))


def _told(problems: frozenset[str]) -> set[tuple[str, int, int, str, str | None]]:
    """What validating the record with `problems` tells: code, place, message and hint of each diagnostic."""
    lines = list(LINES)
    for name in problems:
        number, line = PROBLEMS[name]
        lines[number] = line
    source, _ = parse("\n".join(lines) + "\n", REL)
    assert source is not None
    _, diagnostics, _ = validate_record(source, CHECKED_AS, "flops/x")
    return {_as_read(diagnostic) for diagnostic in diagnostics}


def _as_read(diagnostic: Diagnostic) -> tuple[str, int, int, str, str | None]:
    return diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.message, diagnostic.hint


def test_each_problem_alone_is_told_and_the_record_without_them_is_not() -> None:
    assert _told(frozenset()) == set()
    assert all(_told(frozenset({name})) for name in PROBLEMS)


@settings(max_examples=60, deadline=None)
@given(st.frozensets(st.sampled_from(sorted(PROBLEMS)), min_size=2))
@example(frozenset({"a claim with a value and a measurement", "a claim's rel_tol wrong"}))
@example(frozenset({"a claim with a value and a measurement", "a claim's value wrong"}))
@example(frozenset({"a formula with an expression and a ref", "a formula's title wrong", "a claim's rel_tol wrong"}))
def test_problems_told_together_are_those_told_of_each_alone(problems: frozenset[str]) -> None:
    alone = set().union(*(_told(frozenset({name})) for name in problems))
    assert _told(problems) == alone

"""A rule of a mapping that reads two of its fields ("a claim has exactly one of 'value' and 'measured'") is told in
the same run as the problems of the mapping's other fields, and only where the author broke it: every problem of a
record in one run (docs/cli.md)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
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


CLAIM_BOTH = f"{REL}:9:9: error invalid-value: formulas[0].expect[0]: a claim has exactly one of 'value' and 'measured'"
VALUE_WRONG = f"{REL}:9:16: error invalid-value: formulas[0].expect[0].value: expected text, got a mapping"
CLAIM = "    expr: 2 * 3\n    expect:\n"
TOLD = {
    "a claim with a value and a measurement, and a wrong rel_tol: both": (
        CLAIM + "      - value: 6\n        measured: src/p#m\n        rel_tol: lots\n",
        [
            CLAIM_BOTH,
            f"    hint: {BOTH_CLAIM}",
            f"{REL}:11:18: error invalid-value: formulas[0].expect[0].rel_tol: expected a number, got the text 'lots'",
        ],
    ),
    "a formula with an expression and a ref, and a wrong title: both": (
        "    title: [T]\n    expr: 2 * 3\n    ref: flops/y#g\n",
        [
            f"{REL}:6:5: error invalid-value: formulas[0]: a formula has exactly one of 'expr' and 'ref'",
            "    hint: keep one: remove `ref:` to use this expression, or `expr:` to reuse the other formula",
            f"{REL}:7:12: error invalid-value: formulas[0].title: expected text, got a list",
            # told of the formula left out as written, in the same run (`flopkb.pipeline.left_out`)
            f"{REL}:9:10: error dangling-ref: formulas[0].ref: 'flops/y#g' resolves to no record",
            "    hint: did you mean flops/x?",
        ],
    ),
    # The rule reads which keys the claim has, whatever their values: a wrong value is a value given...
    "a claim with a wrong value and a measurement: both": (
        CLAIM + "      - value: {a: b}\n        measured: src/p#m\n",
        [CLAIM_BOTH, f"    hint: {BOTH_CLAIM}", VALUE_WRONG],
    ),
    # ... and not one taken away: the claim is not told it has neither.
    "a claim whose only value is wrong: the value": (
        CLAIM + "      - value: {a: b}\n        rel_tol: 0.1\n",
        [VALUE_WRONG],
    ),
    # `valu: 6` is the claim's value, misspelt: not told to have neither `value` nor `measured` (whose fix, applied
    # literally, would add a second value)...
    "a claim's misspelt value: the key": (
        CLAIM + "      - valu: 6\n",
        [f"{REL}:9:9: error unknown-field: 'valu' is not a field here", "    hint: did you mean value?"],
    ),
    "a formula's misspelt expression: the key": (
        "    exprr: 2 * 3\n",
        [f"{REL}:7:5: error unknown-field: 'exprr' is not a field here", "    hint: did you mean expr?"],
    ),
    # ... but told to have both when it has both, whatever the misspelt key is renamed to.
    "a claim with a value, a measurement and a misspelt value: both": (
        CLAIM + "      - value: 6\n        measured: src/p#m\n        valu: 7\n",
        [
            CLAIM_BOTH,
            f"    hint: {BOTH_CLAIM}",
            f"{REL}:11:9: error unknown-field: 'valu' is not a field here",
            "    hint: did you mean value? It is given already, on line 9: keep one of the two",
        ],
    ),
}


@pytest.mark.parametrize(("body", "told"), TOLD.values(), ids=TOLD.keys())
def test_a_rule_of_an_item_is_told_beside_its_fields_problems_where_the_author_broke_it(
    tmp_path: Path, body: str, told: list[str]
) -> None:
    assert _errors_told(HEAD + body, tmp_path) == told


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
    "      - value: 6",
    "  - id: g",
    "    expr: '1'",
    "  - id: h",
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
    "a claim's value misspelt": (17, "      - valeu: 6"),
    "a formula with neither expression nor ref": (19, "    expr: null"),
    "a formula's expression misspelt": (21, "    exprr: '1'"),
    "a workaround wrong": (22, "workarounds: [{a: b}]"),
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

"""A field the schema told wrong is told once, at its place: no later stage judges the default the model holds in its
place (a claim with `where: [1]` is not also told it pins no swept input), and a record's other problems are still
told in the same run (docs/cli.md)."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flopkb.report.diagnostics import Diagnostic, Severity
from flopkb.report.reporters import Summary, report
from kbfixture import accelerator, compile_kb, compile_warm, write_kb

REL = "records/flops/x.yaml"
LINES = (
    "id: flops/x",
    "kind: flop",
    "category: memory-bandwidth",
    "description: d",
    "hardware_parameters:",
    "  - parameter: memory_bandwidth",
    "    effect: e",
    "    basis: vendor-spec",
    "    values_for: [hw/h100, hw/b]",
    "    sources: [src/p]",
    "formulas:",
    "  - id: f",
    "    expr: b / hw.memory_bandwidth",
    "    unit: ms",
    "    inputs:",
    "      b: [1 GB, 2 GB]",
    "    hardware: [hw/h100]",
    "    expect:",
    "      - where: {b: 1 GB}",
    "        hardware: hw/h100",
    "        value: 0.31",
    "        rel_tol: 0.05",
    "  - id: g",
    "    expr: 2 * 3",
    "    expect:",
    "      - value: 6",
    "      - value: 6",
    "        rel_tol: 0.01",
    "errata:",
    "  - field: description",
    "    quote: d",
    "    correction: c",
    "    basis: cited",
    "    sources: [src/p]",
)
FILES = {
    "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
    "records/hw/b.yaml": accelerator("hw/b", peak_bf16_dense="1 PFLOP/s"),  # in the default scope only
    "records/src/p.yaml": "id: src/p\nkind: source\ntitle: P\nurl: https://example.org/p\n",
}


WRONG_FIELDS = {
    "claim where: a list": (18, "- where: [1]", 16, "expect[0].where: expected a mapping, got a list"),
    "claim where value: a list": (18, "- where: {b: [1]}", 20, "expect[0].where.b: expected text, got a list"),
    "claim hardware: a mapping": (19, "hardware: {a: b}", 19, "expect[0].hardware: expected text, got a mapping"),
    "claim rel_tol: text": (21, "rel_tol: lots", 18, "expect[0].rel_tol: expected a number, got the text 'lots'"),
    "claim value: true": (20, "value: true", 16, "expect[0].value: expected text, got true/false"),
    "formula unit: a list": (13, "unit: [ms]", 11, "unit: expected text, got a list"),
    "formula input: a mapping": (15, "b: {a: 1}", 10, "inputs.b: expected text, got a mapping"),
    "formula hardware item: a mapping": (16, "hardware: [{a: b}]", 16, "hardware[0]: expected text, got a mapping"),
    "formula hardware: a mapping": (16, "hardware: {a: b}", 15, "hardware: expected a list, got a mapping"),
    "row sources: a mapping": (
        9,
        "sources: {a: b}",
        14,
        "^hardware_parameters[0].sources: expected a list, got a mapping",
    ),
    "erratum sources: a mapping": (33, "sources: {a: b}", 14, "^errata[0].sources: expected a list, got a mapping"),
}
"""Optional fields told wrong: the line replaced, the text put there (at the line's indentation), and the column and
what the schema tells (of the first formula's field, or, after ^, of the record's)."""


def _told_wrong(line: int, column: int, what: str) -> list[str]:
    field = what[1:] if what.startswith("^") else f"formulas[0].{what}"
    return [f"{REL}:{line + 1}:{column}: error invalid-value: {field}"]


MISTAKES: dict[str, tuple[int, str, list[str]]] = {
    **{
        name: (line, text, _told_wrong(line, column, what)) for name, (line, text, column, what) in WRONG_FIELDS.items()
    },
    "formula hardware: a text": (
        16,
        "hardware: hw/h100",
        [
            f"{REL}:17:15: error invalid-value: formulas[0].hardware: expected a list, got the text 'hw/h100'",
            '    hint: make it a list: ["hw/h100"], or one `- item` a line below the field',
        ],
    ),
    # Independent problems, which no wrong field above hides.
    "another claim's value is off": (
        25,
        "- value: 7",
        [
            f"{REL}:26:16: error claim-mismatch: expect[0] states 7, computes 6 (off by 17%, tolerance 1%)",
            "    hint: correct the stated value to 6, or the formula or its inputs",
        ],
    ),
    "another claim names hardware": (
        27,
        "hardware: hw/h100",
        [
            f"{REL}:28:19: error invalid-value: expect[1] names hardware, but the expression uses no hw.<parameter>: "
            "the value cannot depend on it",
            "    hint: remove `hardware` from the claim",
        ],
    ),
}
"""Mistakes of the record, each one line replaced (a mistake moves no line of another): the line, the text put
there, and what `flopkb check` tells of it alone."""


def _text(mistakes: frozenset[str]) -> str:
    lines = list(LINES)
    for name in mistakes:
        number, line, _ = MISTAKES[name]
        lines[number] = " " * (len(lines[number]) - len(lines[number].lstrip(" "))) + line
    return "\n".join(lines) + "\n"


def _errors(diagnostics: list[Diagnostic]) -> list[str]:
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    stream = io.StringIO()
    report(errors, Summary.of(errors, 1), "text", stream)
    return stream.getvalue().splitlines()[:-1]  # without the summary


def _told(mistakes: frozenset[str]) -> list[str]:
    """The errors `flopkb check` prints for the record with `mistakes`, line by line."""
    with tempfile.TemporaryDirectory() as folder:
        root = write_kb(Path(folder), {**FILES, REL: _text(mistakes)})
        return _errors(compile_kb(root).diagnostics)


def test_the_record_without_mistakes_is_told_nothing() -> None:
    assert _told(frozenset()) == []


@pytest.mark.parametrize("name", MISTAKES)
def test_a_mistake_alone_is_told_once_at_its_place(name: str) -> None:
    assert _told(frozenset({name})) == MISTAKES[name][2]


def _apart(mistakes: frozenset[str]) -> bool:
    """Whether no two of `mistakes` replace the same line."""
    return len({MISTAKES[name][0] for name in mistakes}) == len(mistakes)


@settings(max_examples=40, deadline=None)
@given(st.frozensets(st.sampled_from(sorted(MISTAKES)), min_size=2).filter(_apart))
@example(frozenset({"claim where: a list", "another claim's value is off"}))
@example(frozenset({"formula unit: a list", "claim rel_tol: text"}))
def test_mistakes_told_together_are_those_told_of_each_alone(mistakes: frozenset[str]) -> None:
    alone = sorted(line for name in mistakes for line in MISTAKES[name][2])
    assert sorted(_told(mistakes)) == alone


def test_a_wrong_field_is_told_once_also_when_the_file_comes_from_the_load_cache(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {**FILES, REL: _text(frozenset({"claim where: a list"}))})
    compile_warm(root)
    assert _errors(compile_warm(root).diagnostics) == MISTAKES["claim where: a list"][2]


def test_a_default_scope_read_from_a_wrong_list_is_not_judged(tmp_path: Path) -> None:
    flop = (
        "id: flops/y\nkind: flop\ncategory: memory-bandwidth\ndescription: d\naffected_by_hardware: {a: b}\n"
        "formulas:\n  - id: t\n    expr: b / hw.memory_bandwidth\n    unit: ms\n    inputs: {b: 1 GB}\n"
    )
    root = write_kb(tmp_path, {**FILES, "records/flops/y.yaml": flop})
    assert _errors(compile_kb(root).diagnostics) == [
        "records/flops/y.yaml:5:23: error invalid-value: affected_by_hardware: expected a list, got a mapping"
    ]


def test_a_text_where_a_list_of_refs_goes_is_read_as_the_list_its_hint_offers(tmp_path: Path) -> None:
    aliased = _text(frozenset()).replace("description: d\n", "description: d\naliases: flops/old\n")
    other = "id: flops/y\nkind: flop\ncategory: memory-bandwidth\ndescription: see [[flops/old]]\n"
    root = write_kb(tmp_path, {**FILES, REL: aliased, "records/flops/y.yaml": other})
    assert _errors(compile_kb(root).diagnostics) == [
        f"{REL}:5:10: error invalid-value: aliases: expected a list, got the text 'flops/old'",
        '    hint: make it a list: ["flops/old"], or one `- item` a line below the field',
    ]


def test_a_scope_written_as_a_text_is_evaluated_as_the_list_its_hint_offers(tmp_path: Path) -> None:
    text = _text(frozenset({"formula hardware: a text"})).replace("value: 0.31", "value: 9")
    root = write_kb(tmp_path, {**FILES, REL: text})
    assert _errors(compile_kb(root).diagnostics)[2:] == [
        f"{REL}:21:16: error claim-mismatch: expect[0] at b = 1 GB, on hw/h100 states 9 ms, computes 0.298507 ms "
        "(off by 2900%, tolerance 5%)",
        "    hint: correct the stated value to 0.298507 ms, or the formula or its inputs",
    ]


def test_a_text_where_a_list_of_mappings_goes_is_told_once(tmp_path: Path) -> None:
    text = "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: d\nformulas: a text\n"
    root = write_kb(tmp_path, {**FILES, REL: text})
    assert _errors(compile_kb(root).diagnostics) == [
        f"{REL}:5:11: error invalid-value: formulas: expected a list, got the text 'a text'",
        '    hint: make it a list: ["a text"], or one `- item` a line below the field',
    ]


def test_a_formula_borrowing_a_unit_told_wrong_is_not_judged_by_the_default(tmp_path: Path) -> None:
    borrowing = (
        "id: flops/y\nkind: flop\ncategory: memory-bandwidth\ndescription: d\nformulas:\n  - id: g\n"
        "    ref: flops/x#f\n    expect:\n      - where: {b: 1 GB}\n        hardware: hw/h100\n        value: 0.3 ms\n"
    )
    text = _text(frozenset({"formula unit: a list"}))
    root = write_kb(tmp_path, {**FILES, REL: text, "records/flops/y.yaml": borrowing})
    assert _errors(compile_kb(root).diagnostics) == MISTAKES["formula unit: a list"][2]

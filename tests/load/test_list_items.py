"""A list item malformed as a whole is told once, at its place, with its fix; the list's other items, and the rest of
the record, are checked as if it were absent, each told at its own place (docs/cli.md)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import NamedTuple

import pytest

from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.site.publishing.publish import build
from kbfixture import H100, compile_kb, write_kb

PAPER = (
    "id: src/p\nkind: source\ntitle: P\nmeasurements:\n  - {id: m, quantity: q, value: 6, basis: measured, where: T1}\n"
)
FLOP = "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: d\n"
FORMULA = "  - id: f\n    expr: 2 * 3\n    expect:\n      - value: 7  # other\n"
CLAIMS = "formulas:\n  - id: f\n    expr: 2 * 3\n    expect:\n"
MISMATCH = "claim-mismatch"


class Case(NamedTuple):
    """A record whose line marked `# broken` holds a broken item, told as `broken` at `column`; and whose line marked
    `# other` holds a valid item's own problem, told as `other` at `other_column`, naming it `label` (as the file
    has it) when given."""

    text: str
    broken: str
    column: int
    other: str
    other_column: int
    label: str | None = None


CASES = {
    "formulas, text": Case(FLOP + "formulas:\n  - just text  # broken\n" + FORMULA, "invalid-value", 5, MISMATCH, 16),
    "formulas, no id": Case(
        FLOP + "formulas:\n  - expr: 1 + 1  # broken\n" + FORMULA, "missing-field", 5, MISMATCH, 16
    ),
    "formulas, expr and ref": Case(
        FLOP + "formulas:\n  - id: g  # broken\n    expr: 1 + 1\n    ref: flops/y#f\n" + FORMULA,
        "invalid-value",
        5,
        MISMATCH,
        16,
    ),
    "fact formulas": Case(
        "id: facts/x\nkind: fact\nstatement: s\nformulas:\n  - just text  # broken\n" + FORMULA,
        "invalid-value",
        5,
        MISMATCH,
        16,
    ),
    "expect, value and measured": Case(
        FLOP + CLAIMS + "      - value: 6  # broken\n        measured: src/p#m\n      - value: 7  # other\n",
        "invalid-value",
        9,
        MISMATCH,
        16,
        "expect[1]",
    ),
    "expect, no mapping": Case(
        FLOP + CLAIMS + "      - 6  # broken\n      - value: 7  # other\n",
        "invalid-value",
        9,
        MISMATCH,
        16,
        "expect[1]",
    ),
    "expect, an unknown key": Case(
        FLOP + CLAIMS + "      - valu: 6  # broken\n      - value: 7  # other\n", "unknown-field", 9, MISMATCH, 16
    ),
    "a formula's hardware": Case(
        FLOP + "formulas:\n  - id: f\n    expr: hw.memory_bandwidth\n    unit: byte/s\n    hardware:\n"
        "      - 5  # broken\n      - hw/nowhere  # other\n",
        "invalid-value",
        9,
        "dangling-ref",
        9,
        "hardware[1]",
    ),
    "a sweep": Case(
        FLOP + "formulas:\n  - id: f\n    expr: 2 * x\n    inputs:\n      x:\n        - {a: b}  # broken\n        - 3\n"
        "    expect:\n      - where: {x: 3}\n        value: 7  # other\n",
        "invalid-value",
        11,
        MISMATCH,
        16,
    ),
    "hardware_parameters": Case(
        FLOP + "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: e\n    basis: unverifed  # broken\n"
        "    values_for: [hw/h100]\n  - parameter: memory_bandwidth\n    effect: e\n    basis: derived\n"
        "    values_for: [hw/nowhere]  # other\n",
        "unknown-term",
        12,
        "dangling-ref",
        18,
        "hardware_parameters[1]",
    ),
    "values_for": Case(
        FLOP + "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: e\n    basis: derived\n"
        "    values_for:\n      - 5  # broken\n      - hw/nowhere  # other\n",
        "invalid-value",
        9,
        "dangling-ref",
        9,
        "values_for[1]",
    ),
    "a row's sources": Case(
        FLOP + "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: e\n    basis: cited\n"
        "    values_for: [hw/h100]\n    sources:\n      - 5  # broken\n      - nowhere  # other\n",
        "invalid-value",
        9,
        "dangling-ref",
        9,
        "sources[1]",
    ),
    "scales_with": Case(
        FLOP + "scales_with:\n  - batch_size  # broken\n  - factor: batch_size\n    effect: see [[nowhere]]  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        17,
    ),
    "affected_by_hardware": Case(
        FLOP + "affected_by_hardware:\n  - 5  # broken\n  - hw/nowhere  # other\n",
        "invalid-value",
        5,
        "dangling-ref",
        5,
        "affected_by_hardware[1]",
    ),
    "workarounds": Case(
        FLOP + "workarounds:\n  - {a: b}  # broken\n  - see [[nowhere]]  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        9,
    ),
    "sources": Case(
        FLOP + "sources:\n  - 5  # broken\n  - nowhere  # other\n", "invalid-value", 5, "dangling-ref", 5, "sources[1]"
    ),
    "errata": Case(
        FLOP + "errata:\n  - a text  # broken\n  - field: description\n    quote: not there  # other\n"
        "    correction: c\n    basis: derived\n",
        "invalid-value",
        5,
        "erratum-quote-missing",
        12,
        "errata[1]",
    ),
    "an erratum's sources": Case(
        FLOP + "errata:\n  - field: description\n    quote: d\n    correction: c\n    basis: cited\n"
        "    sources:\n      - 5  # broken\n      - nowhere  # other\n",
        "invalid-value",
        9,
        "dangling-ref",
        9,
        "sources[1]",
    ),
    "tags": Case(
        FLOP + "tags:\n  - {a: b}  # broken\n  - fine\nnotes: see [[nowhere]]  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        12,
    ),
    "aliases": Case(
        FLOP + "aliases:\n  - 5  # broken\n  - flops/old\nnotes: see [[nowhere]]  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        12,
    ),
    "features": Case(
        "id: engines/x\nkind: engine\ndescription: d\nfeatures:\n  - {a: b}  # broken\n  - fine\n"
        "notes: see [[nowhere]]  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        12,
    ),
    "a spec's sources": Case(
        "id: hw/x\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth:\n    value: 1 TB/s\n    basis: cited\n"
        "    sources:\n      - 5  # broken\n      - nowhere  # other\n",
        "invalid-value",
        9,
        "dangling-ref",
        9,
        "sources[1]",
    ),
    "authors": Case(
        "id: src/x\nkind: source\ntitle: T\nauthors:\n  - {a: b}  # broken\n  - A\nnotes: see [[nowhere]]  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        12,
    ),
    "measurements": Case(
        "id: src/x\nkind: source\ntitle: T\nmeasurements:\n  - a text  # broken\n  - id: m\n    quantity: q\n"
        "    value: 1 s\n    basis: measured\n    where: T1\n    conditions: {hardware: '[[nowhere]]'}  # other\n",
        "invalid-value",
        5,
        "dangling-link",
        29,
    ),
}


def _compiled(tmp_path: Path, text: str) -> tuple[KnowledgeBase, str]:
    rel = f"records/{text.split(chr(10), 1)[0].removeprefix('id: ')}.yaml"
    write_kb(tmp_path, {"records/hw/h100.yaml": H100, "records/src/p.yaml": PAPER, rel: text})
    return compile_kb(tmp_path), rel


def _line(text: str, marker: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if line.endswith(marker))


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_broken_item_hides_no_problem_of_the_other_items(tmp_path: Path, case: Case) -> None:
    kb, rel = _compiled(tmp_path, case.text)
    told = [d for d in kb.diagnostics if d.path == rel]
    broken, other = _line(case.text, "# broken"), _line(case.text, "# other")
    assert [(d.line, d.column) for d in told if d.code == case.broken] == [(broken, case.column)], told
    found = [d for d in told if d.code == case.other]
    assert [(d.line, d.column) for d in found] == [(other, case.other_column)], told
    assert case.label is None or case.label in found[0].message


def test_a_claim_with_a_value_and_a_measurement_is_told_with_its_fix_and_left_out(tmp_path: Path) -> None:
    text = FLOP + CLAIMS + "      - value: 6\n        measured: src/p#m\n      - value: 7\n"
    kb, rel = _compiled(tmp_path, text)
    told = {(d.code, d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.path == rel}
    assert told - {d for d in told if d[0] == "orphan"} == {
        (
            "invalid-value",
            9,
            9,
            "formulas[0].expect[0]: a claim has exactly one of 'value' and 'measured'",
            "keep one: remove `measured:` to state the value, or `value:` to test the formula against the measurement",
        ),
        (
            MISMATCH,
            11,
            16,
            "expect[1] states 7, computes 6 (off by 17%, tolerance 1%)",
            "correct the stated value to 6, or the formula or its inputs",
        ),
    }
    entry = kb.entries["flops/x"]
    assert [row.value for row in entry.record.formulas[0].expect] == [7]  # type: ignore[union-attr]
    assert entry.source is not None and entry.source.data["formulas"][0]["expect"] == [{"value": 7}]
    assert [result.claims[0].index for result in kb.formulas["flops/x"]] == [0]


@pytest.mark.parametrize(
    ("item", "hint"),
    [
        ("text", "write the item as a mapping of its fields, one a line (`id:`, `title:`, `expr:`, `ref:`, ...)"),
        ("id: g\n    expr: 1 + 1\n    ref: flops/y#f", "keep one: remove `ref:` to use this expression, or `expr:`"),
        ("id: g", "add `expr:` with the expression, or `ref:` with another record's formula"),
    ],
)
def test_a_broken_formula_is_told_with_its_fix(tmp_path: Path, item: str, hint: str) -> None:
    kb, rel = _compiled(tmp_path, FLOP + f"formulas:\n  - {item}\n" + FORMULA)
    (told,) = [d for d in kb.diagnostics if d.path == rel and d.line == 6]
    assert (told.code, told.column) == ("invalid-value", 5)
    assert told.hint is not None and told.hint.startswith(hint)


def test_text_that_a_colon_made_a_mapping_is_told_quoted(tmp_path: Path) -> None:
    kb, rel = _compiled(tmp_path, FLOP + "workarounds:\n  - Note: batch less\n  - fine\n")
    (told,) = [d for d in kb.diagnostics if d.path == rel and d.code != "orphan"]
    assert (told.line, told.column, told.message) == (6, 5, "workarounds[0]: expected text, got a mapping")
    assert told.hint == 'quote the item, which `: ` makes a mapping: - "Note: batch less"'
    assert kb.entries["flops/x"].record.workarounds == ["fine"]  # type: ignore[union-attr]


def test_a_ref_that_a_colon_made_a_mapping_is_not_told_to_be_quoted(tmp_path: Path) -> None:
    kb, rel = _compiled(tmp_path, FLOP + "sources:\n  - src: p\n  - src/p\n")
    (told,) = [d for d in kb.diagnostics if d.path == rel and d.code == "invalid-value"]
    assert told.hint is None


def test_a_sweep_with_a_broken_value_is_told_once_and_swept_over_the_others(tmp_path: Path) -> None:
    text = FLOP + "formulas:\n  - id: f\n    expr: 2 * x\n    inputs:\n      x: [{a: b}, 3, 4]\n"
    kb, rel = _compiled(tmp_path, text + "    expect:\n      - where: {x: 4}\n        value: 8\n")
    told = [(d.code, d.line, d.column, d.message) for d in kb.diagnostics if d.path == rel and d.code != "orphan"]
    assert told == [("invalid-value", 9, 11, "formulas[0].inputs.x[0]: expected text, got a mapping")]
    assert kb.entries["flops/x"].record.formulas[0].inputs == {"x": [3, 4]}  # type: ignore[union-attr]


def test_a_duplicate_after_a_broken_item_is_named_as_the_file_has_it(tmp_path: Path) -> None:
    item = "  - {id: m, quantity: q, value: 1 s, basis: measured, where: T1}\n"
    kb, rel = _compiled(tmp_path, "id: src/x\nkind: source\ntitle: T\nmeasurements:\n  - text\n" + item + item)
    (told,) = [d for d in kb.diagnostics if d.path == rel and d.line == 7]
    assert told.message.startswith("measurements[2].id: 'm' is already the id of measurements[1]")


def _through_the_cache(root: Path, answer_first: bool) -> KnowledgeBase:
    """The base compiled through its load cache, which is then saved: as `check` does, or as a first check that
    answers before it stores what it loaded (`answer_first`)."""
    config = load_config(root)
    cache = FileCache(config, answer_first=answer_first)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    cache.save()
    return kb


@pytest.mark.parametrize("answer_first", [False, True])
def test_a_record_read_without_an_item_is_told_the_same_by_a_run_with_the_load_cache(
    tmp_path: Path, answer_first: bool
) -> None:
    """A run with the load cache checks the record again where what it reads changed (its accelerator), at the
    places of the file: the record is read again, not taken from the cache without the item it was read without."""
    formula = "formulas:\n  - id: f\n    expr: hw.memory_bandwidth\n    unit: TB/s\n    hardware: [hw/h100]\n"
    text = FLOP + formula + "    expect:\n      - 6\n      - hardware: hw/h100\n        value: 4 TB/s\n"
    _, rel = _compiled(tmp_path, text)
    first = {
        (d.code, d.line, d.column) for d in _through_the_cache(tmp_path, answer_first).diagnostics if d.path == rel
    }
    (tmp_path / "records/hw/h100.yaml").write_text(H100.replace("3.35 TB/s", "3.5 TB/s"), encoding="utf-8")
    told = _through_the_cache(tmp_path, answer_first).diagnostics
    again = {(d.code, d.line, d.column, d.message) for d in told if d.path == rel}
    assert first == {(code, line, column) for code, line, column, _ in again}
    assert first == {("orphan", 1, 5), ("invalid-value", 11, 9), (MISMATCH, 13, 16)}
    assert any("computes 3.5 TB/s" in message for *_, message in again)


def test_a_row_left_out_still_names_its_accelerators_for_the_scope(tmp_path: Path) -> None:
    row = "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: e\n    basis: unverifed\n"
    formula = "formulas:\n  - id: f\n    expr: hw.memory_bandwidth\n    unit: TB/s\n    expect:\n"
    claim = "      - hardware: hw/h100\n        value: 4 TB/s\n"
    kb, rel = _compiled(tmp_path, FLOP + row + "    values_for: [hw/h100]\n" + formula + claim)
    told = [(d.code, d.line) for d in kb.diagnostics if d.path == rel and d.code != "orphan"]
    assert told == [("unknown-term", 8), (MISMATCH, 16)]


def test_a_source_read_without_an_item_is_sent_whole_between_processes(tmp_path: Path) -> None:
    kb, _ = _compiled(tmp_path, FLOP + CLAIMS + "      - 6\n      - value: 7\n")
    source = kb.entries["flops/x"].source
    assert source is not None
    copy = pickle.loads(pickle.dumps(source))
    claim = ("formulas", 0, "expect", 0, "value")
    assert (copy.data, copy.position(claim), copy.written(claim)) == (source.data, (10, 16), source.written(claim))


def test_items_after_one_left_out_are_named_by_their_index_in_the_file(tmp_path: Path) -> None:
    rows = (
        "hardware_parameters:\n  - not a row\n  - parameter: memory_bandwidth\n    effect: e\n    basis: unverified\n"
    )
    formulas = "formulas:\n  - text\n  - {id: f, expr: '1'}\n  - {id: f, expr: '2'}\n"
    kb, rel = _compiled(tmp_path, FLOP + rows + "    values_for: [hw/h100]\n" + formulas)
    told = {(d.code, d.line, d.message) for d in kb.diagnostics if d.path == rel and d.code != "orphan"}
    assert told >= {
        ("unverified-basis", 9, "hardware_parameters[1] (memory_bandwidth): the basis is unverified"),
        (
            "invalid-value",
            14,
            "formulas[2].id: 'f' is already the id of formulas[1]; formula ids are unique within a record",
        ),
    }


def test_an_erratum_of_the_words_of_an_item_left_out_is_not_checked(tmp_path: Path) -> None:
    erratum = "errata:\n  - field: workarounds[1]\n    quote: some words\n    correction: c\n    basis: derived\n"
    kb, rel = _compiled(tmp_path, FLOP + "workarounds:\n  - {a: b}\n  - other words\n" + erratum)
    told = [(d.code, d.line) for d in kb.diagnostics if d.path == rel and d.code != "orphan"]
    assert told == [("invalid-value", 6), ("erratum-quote-missing", 10)]
    kb, rel = _compiled(tmp_path, FLOP + "workarounds:\n  - {a: b}\n  - some words\n" + erratum.replace("[1]", "[0]"))
    assert [(d.code, d.line) for d in kb.diagnostics if d.path == rel and d.code != "orphan"] == [("invalid-value", 6)]


def test_an_item_found_wrong_in_a_later_validation_is_placed_in_the_file(tmp_path: Path) -> None:
    """The second claim breaks its own rule and has a wrong `rel_tol`; validated again without the first claim, it
    takes the first one's place in the list validated: both are told at the second claim's places in the file."""
    second = "      - value: 6\n        measured: src/p#m\n        rel_tol: -1\n"
    kb, rel = _compiled(tmp_path, FLOP + CLAIMS + "      - 6\n" + second + "      - value: 7\n")
    told = [(d.code, d.line, d.column) for d in kb.diagnostics if d.path == rel and d.code != "orphan"]
    assert told == [("invalid-value", 9, 9), ("invalid-value", 10, 9), ("invalid-value", 12, 18), (MISMATCH, 13, 16)]


def test_build_refuses_a_base_with_an_item_left_out(tmp_path: Path) -> None:
    _compiled(tmp_path, FLOP + CLAIMS + "      - 6\n      - value: 6\n")
    outcome = build(load_config(tmp_path))
    assert outcome.refused and not (tmp_path / "build" / "site").exists()
    assert [(d.code, d.line) for d in outcome.kb.diagnostics if d.severity == "error"] == [("invalid-value", 9)]

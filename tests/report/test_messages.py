"""Every message names the fix in an author's words: for each, where it points and what its hint says.

Each test writes the slip an author makes into a real base, checks it, and reads the one diagnostic of the slip
as `flopkb check` prints it: its line and column, and the words of its message and hint.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.authoring.fmt import format_text
from flopkb.load.models import id_like, id_problem
from flopkb.load.source import parse
from flopkb.load.tabs import replace_line_start_tabs
from flopkb.report.diagnostics import Diagnostic
from flopkb.report.hints import Suggestion
from kbfixture import H100, VOCABULARY, accelerator, compile_kb, write_kb

FLOP = """\
id: flops/x
kind: flop
category: memory-bandwidth
description: Streams [[flops/y]].
"""
OTHER = "id: flops/y\nkind: flop\ncategory: memory-bandwidth\ndescription: Linked from [[flops/x]].\n"


def the_diagnostic(root: Path, files: dict[str, str], code: str) -> Diagnostic:
    kb = compile_kb(write_kb(root, {"records/flops/y.yaml": OTHER, **files}))
    found = [diagnostic for diagnostic in kb.diagnostics if diagnostic.code == code]
    assert len(found) == 1, kb.diagnostics
    return found[0]


# A tab used for indentation


@pytest.mark.parametrize(
    ("text", "line", "column", "fmt_fixes"),
    [
        (FLOP + "scales_with:\n\t- {factor: batch_size, effect: grows}\n", 6, 1, True),
        (FLOP.replace("category:", "\tcategory:"), 3, 1, False),  # one level of spaces would not parse either
        (FLOP + "scales_with:\n  - factor: batch_size\n  \teffect: grows\n", 7, 3, False),
    ],
)
def test_a_tab_that_indents_is_named_with_its_line_and_column(
    tmp_path: Path, text: str, line: int, column: int, fmt_fixes: bool
) -> None:
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "yaml-syntax")
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert diagnostic.message == f"a tab indents line {line} (at {line}:{column}); YAML indents with spaces only"
    assert diagnostic.hint is not None and diagnostic.hint.startswith("replace the tab with spaces")
    assert ("flopkb fmt" in diagnostic.hint) is fmt_fixes
    formatted = format_text(text, "records/flops/x.yaml")
    assert isinstance(formatted, str) is fmt_fixes
    if fmt_fixes:
        assert "\t" not in formatted
        assert parse(formatted, "x.yaml")[0].data == parse(text.replace("\t", "  "), "x.yaml")[0].data  # type: ignore[union-attr]


LINES = ["a: 1", "b:", "\t- 1", "\t\tc: 2", '\t"q\t"', "# \tnote", ""]


@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=8))
def test_replacing_line_start_tabs_changes_only_the_indentation(lines: list[str]) -> None:
    text = "\n".join(lines)
    replaced = replace_line_start_tabs(text)
    assert [line.lstrip("\t") for line in lines] == [line.lstrip(" ") for line in replaced.split("\n")]
    assert all(not line.startswith("\t") for line in replaced.split("\n"))


# A key written twice


def test_a_repeated_key_names_the_line_of_its_first_copy(tmp_path: Path) -> None:
    text = FLOP + "title: One\nnotes: a\ntitle: Two\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "duplicate-key")
    assert (diagnostic.line, diagnostic.column) == (7, 1)
    assert diagnostic.message == "the key 'title' is repeated; its first copy is on line 5"
    assert diagnostic.hint == "keep one of the two: delete this line or line 5, or merge their values"


# A missing field


def test_a_missing_id_suggests_the_id_its_path_implies(tmp_path: Path) -> None:
    text = FLOP.replace("id: flops/x\n", "")
    diagnostic = the_diagnostic(
        tmp_path, {"records/flops/deep/z.yaml": text.replace("[[flops/y]]", "y")}, "missing-field"
    )
    assert (diagnostic.path, diagnostic.line, diagnostic.column) == ("records/flops/deep/z.yaml", 1, 1)
    assert diagnostic.message == "the field 'id' is required in the record"
    assert diagnostic.hint == "add `id: flops/deep/z`, the id that the file's path implies"


def test_a_missing_category_lists_the_vocabularys_categories(tmp_path: Path) -> None:
    text = FLOP.replace("category: memory-bandwidth\n", "")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "missing-field")
    assert (diagnostic.line, diagnostic.column) == (1, 1)
    assert diagnostic.message == "the field 'category' is required in the record"
    assert diagnostic.hint == "add `category:` with one of arithmetic-intensity, memory-bandwidth"


def test_a_missing_kind_lists_the_kinds(tmp_path: Path) -> None:
    text = FLOP.replace("kind: flop\n", "").replace("category:", "categry:")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "missing-field")
    assert diagnostic.message == (
        "the field 'kind' is required; one of flop, fact, engine, accelerator, source; "
        "the record's other fields are not checked until it has a kind"
    )
    assert diagnostic.hint == "add `kind:` with one of flop, fact, engine, accelerator, source"


def test_a_missing_kind_is_named_when_the_record_has_the_fields_of_one_kind(tmp_path: Path) -> None:
    text = FLOP.replace("kind: flop\n", "")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "missing-field")
    assert diagnostic.message == "the field 'kind' is required; one of flop, fact, engine, accelerator, source"
    assert diagnostic.hint == "add `kind: flop`"


def test_a_missing_basis_of_a_measurement_lists_the_two_it_may_be(tmp_path: Path) -> None:
    text = "id: sources/s\nkind: source\ntitle: T\nmeasurements:\n  - id: m\n    quantity: q\n    where: {}\n"
    text += "    value: 1 s\n"
    diagnostic = the_diagnostic(tmp_path, {"records/sources/s.yaml": text}, "missing-field")
    assert (diagnostic.line, diagnostic.column) == (5, 5)
    assert diagnostic.message == "the field 'basis' is required in measurements[0]"
    assert diagnostic.hint == "add `basis:` with one of measured, simulated"


def test_a_missing_field_whose_key_is_misspelt_says_which_key_to_rename(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - factor: batch_size\n    efect: grows with the batch\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "missing-field")
    assert (diagnostic.line, diagnostic.column) == (6, 5)
    assert diagnostic.message == "the field 'effect' is required in scales_with[0]"
    assert diagnostic.hint == "rename 'efect' (line 7) to `effect`"


def test_a_missing_free_text_field_says_what_it_holds(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - factor: batch_size\n    note: grows with the batch\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "missing-field")
    assert diagnostic.message == "the field 'effect' is required in scales_with[0]"
    assert diagnostic.hint == "add `effect:`, how the cost moves with it (markdown; may hold [[wikilinks]])"


def test_every_missing_field_of_a_mapping_is_reported(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": "kind: flop\ndescription: d\n"}))
    missing = sorted(d.message for d in kb.diagnostics if d.code == "missing-field")
    assert missing == ["the field 'category' is required in the record", "the field 'id' is required in the record"]


# One path style


def test_a_place_inside_a_record_is_named_as_readers_write_it(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - {factor: batch_size, effect: grows}\n  - {factor: 3, effect: grows}\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert (diagnostic.line, diagnostic.column) == (7, 14)
    assert diagnostic.message.startswith("scales_with[1].factor: ")


# A sweep that mixes units


def sweep_flop(bandwidths: list[str], expect: str = "") -> str:
    shown = ", ".join(f'"{value}"' for value in bandwidths)
    return (
        FLOP + "formulas:\n  - id: stream\n    expr: bytes / bw\n    unit: s\n    inputs:\n"
        f"      bytes: 10 GB\n      bw: [{shown}]\n" + expect
    )


_BASES = settings(max_examples=30, deadline=None)
"""Each example checks a real base: fewer examples, no deadline."""


@_BASES
@given(st.integers(min_value=1, max_value=4), st.data())
def test_a_mixed_sweep_is_reported_at_its_odd_value_wherever_it_is(size: int, data: st.DataObject) -> None:
    odd = data.draw(st.integers(min_value=0, max_value=size), label="odd")
    values = [f"{10 * (index + 1)} GB/s" for index in range(size)]
    values.insert(odd, "40 GB")  # a dropped `/s`: the formula says which of the two is right, even at a tie
    with tempfile.TemporaryDirectory() as folder:
        diagnostic = the_diagnostic(Path(folder), {"records/flops/x.yaml": sweep_flop(values)}, "formula-unit-mismatch")
    line = 11
    column = 12 + sum(len(value) + 4 for value in values[:odd])
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert diagnostic.message == (
        f"sweep input `bw`: 40 GB (inputs.bw[{odd}]) is [information], but `bytes / bw` needs [information] / [time]"
    )
    assert diagnostic.hint == f"write it in a unit of byte/s, like {values[1 if odd == 0 else 0]}"
    assert "40 GB" not in (diagnostic.hint or "")


def test_a_mixed_sweep_the_formula_cannot_judge_goes_by_its_majority(tmp_path: Path) -> None:
    text = sweep_flop(["1 GB", "2 GB", "3 GB/s"]).replace("bytes / bw", "bw * 1").replace("unit: s", "unit: J")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "formula-unit-mismatch")
    assert diagnostic.message.startswith("sweep input `bw`: 3 GB/s (inputs.bw[2]) is [information] / [time], but ")
    assert diagnostic.message.endswith("the sweep is [information]")


def test_a_mixed_sweep_without_a_majority_is_reported_at_the_input(tmp_path: Path) -> None:
    text = sweep_flop(["1 GB", "3 GB/s"]).replace("bytes / bw", "bw * 1").replace("unit: s", "unit: J")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "formula-unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (11, 11)
    assert diagnostic.message == "sweep input `bw` mixes [information] and [information] / [time]"
    assert diagnostic.hint == "write every value of `bw` in units of one dimension, e.g. all in byte or all in byte/s"


# A claim off by a unit prefix


@_BASES
@given(
    st.floats(min_value=1e-3, max_value=1e6, allow_nan=False),
    st.sampled_from([-3, -2, -1, 1, 2, 3]),
)
def test_a_claim_off_by_a_power_of_a_thousand_asks_unit_prefix(bandwidth: float, steps: int) -> None:
    seconds = 10 / bandwidth  # 10 GB at `bandwidth` GB/s
    stated = f"{seconds * 10.0 ** (3 * steps):.12g} s"
    text = sweep_flop([f"{bandwidth!r} GB/s"], f"    expect:\n      - {{value: {stated}}}\n").replace('["', '"')
    text = text.replace('"]', '"')
    with tempfile.TemporaryDirectory() as folder:
        diagnostic = the_diagnostic(Path(folder), {"records/flops/x.yaml": text}, "claim-mismatch")
    assert (diagnostic.line, diagnostic.column) == (13, 17)
    factor = f"{10 ** (3 * abs(steps)):g}".replace("e+0", "e").replace("e+", "e")
    assert diagnostic.message.endswith(f"× too {'large' if steps > 0 else 'small'}: unit prefix?)")
    assert diagnostic.hint is not None and diagnostic.hint.startswith(f"a unit prefix off by a factor of {factor}? ")
    assert diagnostic.hint.endswith(" s, or the formula or its inputs"), "the hint keeps the formula's unit"


def test_any_other_wrong_claim_gets_the_value_with_its_unit(tmp_path: Path) -> None:
    text = sweep_flop(["10 GB/s"], "    expect:\n      - {value: 2 s}\n").replace('["', '"').replace('"]', '"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "claim-mismatch")
    assert diagnostic.message == "expect[0] states 2 s, computes 1 s (off by 100%, tolerance 1%)"
    assert diagnostic.hint == "correct the stated value to 1 s, or the formula or its inputs"


# Names that are not snake_case


@given(st.lists(st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True), min_size=1, max_size=4), st.data())
def test_a_name_written_in_words_gets_its_snake_case(words: list[str], data: st.DataObject) -> None:
    from flopkb.load.models import SNAKE_CASE
    from flopkb.report.hints import snake_case

    separator = data.draw(st.sampled_from([" ", "-", "  ", " - ", "."]))
    styled = [data.draw(st.sampled_from([word, word.capitalize(), word.upper()])) for word in words]
    suggestion = snake_case(separator.join(styled))
    assert suggestion == "_".join(words)
    assert SNAKE_CASE.fullmatch(suggestion)


def test_a_factor_in_words_is_answered_with_its_snake_case(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - {factor: Batch Size, effect: grows}\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert (diagnostic.line, diagnostic.column) == (6, 14)
    assert diagnostic.message == "scales_with[0].factor: 'Batch Size' is not a snake_case name"
    assert diagnostic.hint == "write it as one name: batch_size"


def test_a_factor_in_camel_case_gets_a_did_you_mean_an_editor_can_apply(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - {factor: seqLen, effect: grows}\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert diagnostic.hint == "did you mean seq_len?"


def test_an_input_named_in_words_is_renamed_not_copied(tmp_path: Path) -> None:
    text = sweep_flop(["10 GB/s"]).replace('["', '"').replace('"]', '"').replace("bytes", "batch_bytes")
    text = text.replace("      batch_bytes: 10 GB", "      Batch Bytes: 10 GB")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "formula-unknown-name")
    assert (diagnostic.line, diagnostic.column) == (7, 11)
    assert diagnostic.hint == "rename the input `Batch Bytes` to batch_bytes"


# A spec the formula needs


def test_a_missing_spec_says_where_to_add_it(tmp_path: Path) -> None:
    text = FLOP + "formulas:\n  - id: peak\n    expr: hw.peak_fp8_dense\n    unit: FLOP/s\n    hardware: [hw/h100]\n"
    diagnostic = the_diagnostic(
        tmp_path, {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}, "formula-missing-spec"
    )
    assert (diagnostic.line, diagnostic.column) == (9, 16)
    assert diagnostic.message == "hw/h100 has no spec `peak_fp8_dense`, which the expression uses (hw.peak_fp8_dense)"
    assert diagnostic.hint == (
        'give hw/h100 a spec `peak_fp8_dense` in its `specs` (e.g. `peak_fp8_dense: {value: "...", basis: '
        "vendor-spec}`), or leave it out of the formula's `hardware`"
    )


# Every unit hint gives an example


def test_a_formula_in_the_wrong_unit_gets_an_example_unit(tmp_path: Path) -> None:
    text = sweep_flop(["10 GB/s"]).replace('["', '"').replace('"]', '"').replace("unit: s", "unit: byte")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "formula-unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (8, 11)
    assert diagnostic.hint == (
        "`bytes / bw` comes out in s: use a unit of that dimension (e.g. `unit: s`), or fix the expression"
    )


def test_a_claim_in_another_dimension_is_told_the_dimension_the_formula_computes(tmp_path: Path) -> None:
    expect = "    expect:\n      - {value: 3 GB}\n"
    text = sweep_flop(["10 GB/s"], expect).replace('["', '"').replace('"]', '"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (13, 17)
    assert diagnostic.hint == "claim what the formula computes: a value of [time], in s or another unit of it"


def test_a_spec_in_another_dimension_gets_an_example_in_the_parameters_unit(tmp_path: Path) -> None:
    wrong = accelerator("hw/b200", memory_bandwidth="8 TB")
    diagnostic = the_diagnostic(tmp_path, {"records/hw/b200.yaml": wrong}, "unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (5, 29)
    assert diagnostic.hint == "write the value in a unit of byte/s, e.g. `8 TB/s`"


@pytest.mark.parametrize(
    ("written", "offered"),
    [
        ("2 byts", "did you mean byte for byts? "),
        ("2 tokns", "did you mean token for tokns? "),
        ("4 kilobyts", "did you mean kilobyte for kilobyts? "),
    ],
)
def test_a_misspelt_unit_offers_the_closest_unit(tmp_path: Path, written: str, offered: str) -> None:
    text = sweep_flop([written]).replace('["', '"').replace('"]', '"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert diagnostic.message.startswith(f"input `bw`: unknown unit '{written.split()[1]}'")
    assert diagnostic.hint is not None and diagnostic.hint.startswith(offered)
    assert diagnostic.hint.endswith("e.g. TB/s, TFLOP/s, GiB"), "and the units there are, with examples"


def test_a_rate_written_with_ps_is_told_to_write_per_second(tmp_path: Path) -> None:
    text = sweep_flop(["4 GBps"]).replace('["', '"').replace('"]', '"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert diagnostic.hint == "write a rate with /s: GB/s for GBps"


# A claim's `where` that names no input


def test_a_misspelt_input_in_a_claims_where_offers_the_input_and_is_told_once(tmp_path: Path) -> None:
    text = sweep_flop(["10 GB/s", "20 GB/s"], '    expect:\n      - where: {b: "10 GB/s"}\n        value: 1 s\n')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")  # not "does not pin bw"
    assert (diagnostic.line, diagnostic.column) == (13, 17)
    assert diagnostic.message.startswith("expect[0].where names `b`, which is not an input of the formula")
    assert diagnostic.hint == "did you mean bw?"


# An expression that does not parse


@pytest.mark.parametrize(
    ("expr", "column", "hint"),
    [
        ("max(bytes, bw", 15, "add the ')' that closes it"),
        ("bytes / bw)", 22, "remove it, or open its group before it"),
        ("bytes bw", 18, "is an operator missing? An expression is made of numbers, input names, hw.<parameter>, "),
    ],
)
def test_an_expression_that_does_not_parse_says_what_to_write(
    tmp_path: Path, expr: str, column: int, hint: str
) -> None:
    text = sweep_flop(["10 GB/s"]).replace("expr: bytes / bw", f'expr: "{expr}"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "formula-syntax")
    assert (diagnostic.line, diagnostic.column) == (7, column)
    assert diagnostic.hint is not None and diagnostic.hint.startswith(hint)


# A value of the wrong shape


ENGINE = "id: engines/e\nkind: engine\ndescription: Serves [[flops/y]].\n"


def test_a_homepage_without_its_scheme_offers_the_url(tmp_path: Path) -> None:
    text = ENGINE + "homepage: github.com/org/e\n"
    diagnostic = the_diagnostic(tmp_path, {"records/engines/e.yaml": text}, "invalid-value")
    assert (diagnostic.line, diagnostic.column) == (4, 11)
    assert diagnostic.hint == "did you mean https://github.com/org/e?"


def test_a_source_url_without_its_scheme_offers_the_url_not_a_record(tmp_path: Path) -> None:
    text = ENGINE + "sources: [www.example.org/paper, sources/nowhere]\n"
    kb = compile_kb(write_kb(tmp_path, {"records/engines/e.yaml": text}))
    hints = [(d.line, d.column, d.hint) for d in kb.diagnostics if d.code == "dangling-ref"]
    assert hints == [(4, 11, "did you mean https://www.example.org/paper?"), (4, 34, None)]


def test_a_source_id_with_a_dot_is_offered_the_close_record_never_a_url(tmp_path: Path) -> None:
    source = "id: sources/mlperf-v4.1-results\nkind: source\ntitle: T\n"
    text = ENGINE + "sources: [mlperf-v4.1-result]\n"
    files = {"records/engines/e.yaml": text, "records/sources/mlperf-v4.1-results.yaml": source}
    diagnostic = the_diagnostic(tmp_path, files, "dangling-ref")
    assert diagnostic.hint == "did you mean sources/mlperf-v4.1-results?"


def test_a_text_where_a_list_goes_is_offered_as_a_list_of_one(tmp_path: Path) -> None:
    text = ENGINE + 'features: "Separate draft"\n'
    diagnostic = the_diagnostic(tmp_path, {"records/engines/e.yaml": text}, "invalid-value")
    assert diagnostic.message == "features: expected a list, got the text 'Separate draft'"
    assert diagnostic.hint == 'make it a list: ["Separate draft"], or one `- item` a line below the field'


def test_a_misspelt_key_of_a_spec_is_offered_both_ways(tmp_path: Path) -> None:
    spec = "  memory_bandwidth:\n    value: 8 TB/s\n    bassis: derived\n"
    text = f"id: hw/b200\nkind: accelerator\nvendor: V\nspecs:\n{spec}"
    kb = compile_kb(write_kb(tmp_path, {"records/hw/b200.yaml": text}))
    hints = {d.code: (d.line, d.hint) for d in kb.diagnostics if d.code in ("missing-field", "unknown-field")}
    assert hints == {
        "missing-field": (6, "rename 'bassis' (line 7) to `basis`"),
        "unknown-field": (7, "did you mean basis?"),
    }


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("4 Gbps", "Gbit/s for Gbps"),
        ("5 mbps", "Mbit/s for mbps"),  # never millibit
        ("5 Mbps", "Mbit/s for Mbps"),
        ("5 MBps", "MB/s for MBps"),
        ("5 KBps", "kB/s (kilobyte per second) or KiB/s (kibibyte per second) for KBps"),
    ],
)
def test_a_rate_written_with_ps_is_told_the_unit_per_second_it_stands_for(
    tmp_path: Path, written: str, hint: str
) -> None:
    text = sweep_flop([written]).replace('["', '"').replace('"]', '"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert diagnostic.message == f"input `bw`: unknown unit '{written.split()[1]}'"
    assert diagnostic.hint == f"write a rate with /s: {hint}"


def test_a_url_without_its_scheme_is_offered_whole_with_it(tmp_path: Path) -> None:
    text = ENGINE + "homepage: github.com/org/e#readme\n"
    diagnostic = the_diagnostic(tmp_path, {"records/engines/e.yaml": text}, "invalid-value")
    assert diagnostic.hint == "did you mean https://github.com/org/e#readme?"
    assert isinstance(diagnostic.hint, Suggestion) and diagnostic.hint.written == "github.com/org/e#readme"


def test_a_misspelt_term_of_several_words_is_told_to_be_written_as_one_name(tmp_path: Path) -> None:
    text = "id: flops/x\nkind: flop\ncategory: memory bandwith\ndescription: d\n"
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "unknown-term")
    assert (diagnostic.line, diagnostic.column) == (3, 11)
    assert diagnostic.hint == "write it as one name: memory-bandwidth"
    assert isinstance(diagnostic.hint, Suggestion) and diagnostic.hint.written == "memory bandwith"


def test_a_file_whose_name_is_no_id_is_told_the_name_to_give_it(tmp_path: Path) -> None:
    diagnostic = the_diagnostic(tmp_path, {"records/flops/Decode Step.yaml": FLOP}, "invalid-id")
    assert diagnostic.hint == "rename the file to records/flops/decode-step.yaml"


@given(st.text(min_size=1, max_size=30))
def test_an_id_offered_for_one_written_is_valid(written: str) -> None:
    like = id_like(written)
    assert like is None or (id_problem(like) is None and like != written)


# A unit in another case, spelt out, or standing for two units: the hint keeps the prefix


@pytest.mark.parametrize(
    ("parameter", "written", "message", "hint"),
    [
        ("memory_capacity", "96 GBytes", "unknown unit 'GBytes'", "write `96 GB`"),
        ("memory_capacity", "96 gb", "unknown unit 'gb'", "write `96 GB` (gigabyte) or `96 Gbit` (gigabit)"),
        ("memory_capacity", "96 Gb", "unknown unit 'Gb'", "write `96 GB` (gigabyte) or `96 Gbit` (gigabit)"),
        ("memory_capacity", "128 KB", "unknown unit 'KB'", "write `128 kB` (kilobyte) or `128 KiB` (kibibyte)"),
        ("memory_bandwidth", "4.0 TByte/s", "unknown unit 'TByte' in 'TByte/s'", "write `4.0 TB/s`"),
        ("memory_bandwidth", "4.0 TB/S", "unknown unit 'S' in 'TB/S'", "write `4.0 TB/s`"),
        ("memory_bandwidth", "4,0 TB/s", "the number '4,0' has a ','",
         "write numbers without thousands separators and with '.' for decimals: `4.0 TB/s`"),
    ],
)  # fmt: skip
def test_a_spec_in_a_unit_that_does_not_read_is_written_out_with_its_prefix(
    tmp_path: Path, parameter: str, written: str, message: str, hint: str
) -> None:
    wrong = accelerator("hw/b200", **{parameter: written})
    diagnostic = the_diagnostic(tmp_path, {"records/hw/b200.yaml": wrong}, "invalid-value")
    assert (diagnostic.line, diagnostic.column) == (5, len(f'  {parameter}: {{value: "'))
    assert diagnostic.message == f"specs.{parameter}: {message}"
    assert diagnostic.hint == hint


def test_a_peak_quoted_from_a_datasheet_loses_its_thousands_separator(tmp_path: Path) -> None:
    wrong = accelerator("hw/b200", peak_bf16_dense="1,979 TFLOP/s")
    diagnostic = the_diagnostic(tmp_path, {"records/hw/b200.yaml": wrong}, "invalid-value")
    assert diagnostic.message == "specs.peak_bf16_dense: the number '1,979' has a ','"
    assert diagnostic.hint == ("write numbers without thousands separators and with '.' for decimals: `1979 TFLOP/s`")


def test_a_bare_number_for_a_bandwidth_keeps_its_digits_in_every_example(tmp_path: Path) -> None:
    wrong = accelerator("hw/b200", memory_bandwidth="4000")
    diagnostic = the_diagnostic(tmp_path, {"records/hw/b200.yaml": wrong}, "unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (5, 29)
    assert diagnostic.hint == (
        "a bare number has no unit: write it with the unit it is in, a unit of byte/s, e.g. `4000 GB/s` or `4000 TB/s`"
    )


@pytest.mark.parametrize(
    ("unit", "named"),
    [("GB/s", "GB/s"), ("Gbit/s", "Gbit/s"), ("[information]/[time]", "byte/s"), ("[information] / [time]", "byte/s")],
)
def test_a_bare_number_is_offered_units_whatever_the_vocabulary_writes_its_unit_as(
    tmp_path: Path, unit: str, named: str
) -> None:
    vocabulary = VOCABULARY.replace("{unit: byte/s,", f'{{unit: "{unit}",')
    wrong = accelerator("hw/b200", memory_bandwidth="3350")
    kb = compile_kb(write_kb(tmp_path, {"records/hw/b200.yaml": wrong}, vocabulary=vocabulary))
    [diagnostic] = [d for d in kb.diagnostics if d.code != "orphan"]
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("unit-mismatch", 5, 29)
    assert diagnostic.message == (
        f"specs.memory_bandwidth: 3350 is dimensionless, but memory_bandwidth is [information] / [time] ({unit})"
    )
    assert diagnostic.hint == (
        f"a bare number has no unit: write it with the unit it is in, a unit of {named}, e.g. `3350 GB/s` or "
        "`3350 TB/s`"
    )


def test_a_spec_missing_a_per_second_keeps_its_number_when_the_vocabulary_unit_has_a_prefix(tmp_path: Path) -> None:
    vocabulary = VOCABULARY.replace("{unit: byte/s,", '{unit: "GB/s",')
    wrong = accelerator("hw/b200", memory_bandwidth="4.77612 TB")
    kb = compile_kb(write_kb(tmp_path, {"records/hw/b200.yaml": wrong}, vocabulary=vocabulary))
    [diagnostic] = [d for d in kb.diagnostics if d.code == "unit-mismatch"]
    assert diagnostic.hint == "write the value in a unit of GB/s, e.g. `4.77612 TB/s`"


_DIMENSIONS = {"byte": "[information]", "FLOP": "[operations]", "s": "[time]", "J": "[energy]"}


@st.composite
def vocabulary_units(draw: st.DrawFn) -> str:
    """A parameter's unit as a vocabulary may write it: a unit with or without a prefix, a compound of two, or the
    dimension of such a compound (`GB/s`, `kJ*byte`, `[information] / [time]`)."""
    above, below = draw(st.sampled_from(sorted(_DIMENSIONS))), draw(st.sampled_from(["", *sorted(_DIMENSIONS)]))
    if draw(st.booleans()):
        return _DIMENSIONS[above] + (f" / {_DIMENSIONS[below]}" if below and below != above else "")
    prefix = draw(st.sampled_from(["", "k", "M", "G", "T", "Gi"] if above == "byte" else ["", "k", "G"]))
    return prefix + above + (f"/{below}" if below and below != above else "")


@_BASES
@given(vocabulary_units(), st.sampled_from(["3350", "0.5", "12 TB", "7 ms", "2 TFLOP/s"]))
def test_a_spec_in_the_wrong_dimension_is_offered_a_value_that_reads_whatever_the_vocabulary_unit(
    unit: str, written: str
) -> None:
    """Never an internal error: the hint's examples have the parameter's dimension and keep the number of a bare
    number as written, the magnitude in base units of a quantity (`12 TB`: `12 TB/s`)."""
    from flopkb.formulas.units import dimension_of, parse_quantity, to_base

    vocabulary = VOCABULARY.replace("{unit: byte/s,", f'{{unit: "{unit}",')
    wanted = dimension_of(unit)
    with tempfile.TemporaryDirectory() as folder:
        files = {"records/hw/b200.yaml": accelerator("hw/b200", memory_bandwidth=written)}
        kb = compile_kb(write_kb(Path(folder), files, vocabulary=vocabulary))
    problems = [d for d in kb.diagnostics if d.code != "orphan"]
    if to_base(parse_quantity(written))[1] == wanted:
        assert problems == []
        return
    [diagnostic] = problems
    assert diagnostic.code == "unit-mismatch" and diagnostic.hint is not None
    examples = diagnostic.hint.split("`")[1::2]
    assert examples
    value = to_base(parse_quantity(written))[0]
    for example in examples:
        offered = to_base(parse_quantity(example))
        assert offered[1] == wanted, (unit, written, example)
        if " " in written:
            assert offered[0] == pytest.approx(value, rel=1e-9), (unit, written, example)
        else:
            assert example.split()[0] == written


@pytest.mark.parametrize(
    ("unit", "message", "hint"),
    [
        ("GBytes/s", "unknown unit 'GBytes' in 'GBytes/s'", "write `GB/s`"),
        ("[info] / [time]", "unknown dimension [info] in '[info] / [time]'",
         "dimensions are [energy], [information], [operations], [time]"),
    ],
)  # fmt: skip
def test_a_vocabulary_unit_that_does_not_read_is_told_at_that_unit(
    tmp_path: Path, unit: str, message: str, hint: str
) -> None:
    vocabulary = VOCABULARY.replace("{unit: byte/s,", f'{{unit: "{unit}",')
    files = {"records/hw/b200.yaml": accelerator("hw/b200", memory_bandwidth="3350")}
    kb = compile_kb(write_kb(tmp_path, files, vocabulary=vocabulary))
    [diagnostic] = [d for d in kb.diagnostics if d.code != "orphan"]
    assert (diagnostic.path, diagnostic.line, diagnostic.column) == ("schema/vocabulary.yaml", 5, 28)
    assert (diagnostic.code, diagnostic.message) == (
        "invalid-value",
        f"parameters.memory_bandwidth.unit: {message}; no accelerator's memory_bandwidth is checked until it reads",
    )
    assert diagnostic.hint == hint


def test_a_spec_missing_a_per_second_keeps_the_number_as_written(tmp_path: Path) -> None:
    wrong = accelerator("hw/b200", memory_bandwidth="4.77612 TB")
    diagnostic = the_diagnostic(tmp_path, {"records/hw/b200.yaml": wrong}, "unit-mismatch")
    assert diagnostic.hint == "write the value in a unit of byte/s, e.g. `4.77612 TB/s`"


def test_a_unit_in_a_what_if_keeps_its_prefix(tmp_path: Path) -> None:
    text = sweep_flop(["4 GBytes/s"]).replace('["', '"').replace('"]', '"')
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "invalid-value")
    assert diagnostic.message == "input `bw`: unknown unit 'GBytes' in 'GBytes/s'"
    assert diagnostic.hint == "write `4 GB/s`"


# Where a claim is


HW_FLOP = FLOP + (
    "formulas:\n  - id: stream\n    expr: bytes / hw.memory_bandwidth\n    unit: ms\n    inputs:\n      bytes: 10 GB\n"
    "    hardware: [hw/h100]\n"
)


def test_a_claim_without_where_is_placed_on_its_accelerator_alone(tmp_path: Path) -> None:
    text = HW_FLOP + "    expect:\n      - {hardware: hw/h100, value: 5 ms}\n"
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    diagnostic = the_diagnostic(tmp_path, files, "claim-mismatch")
    assert (diagnostic.line, diagnostic.column) == (13, 36)
    assert diagnostic.message == "expect[0] on hw/h100 states 5 ms, computes 2.98507 ms (off by 68%, tolerance 1%)"


def test_a_claim_without_where_outside_the_regime_is_placed_on_its_accelerator_alone(tmp_path: Path) -> None:
    text = HW_FLOP.replace("    hardware:", "    valid_when: bytes > 2 * bytes\n    hardware:")
    text += "    expect:\n      - {hardware: hw/h100, value: 2.98507 ms}\n"
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    diagnostic = the_diagnostic(tmp_path, files, "claim-out-of-regime")
    assert diagnostic.message.startswith("expect[0] on hw/h100 lies outside the formula's regime: ")


# A formula without a unit


def test_a_misspelt_unit_is_named_by_what_follows_from_it(tmp_path: Path) -> None:
    text = HW_FLOP.replace("unit: ms", "units: ms") + "    expect:\n      - {hardware: hw/h100, value: 2.98507 ms}\n"
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    result = the_diagnostic(tmp_path, files, "formula-unit-mismatch")
    assert (result.line, result.column) == (7, 11)
    assert result.message == (
        "the result is [time] but the formula has no unit (dimensionless): is `units` on line 8 meant to be `unit`?"
    )
    assert result.hint == "rename `units` on line 8 to `unit`"
    kb = compile_kb(write_kb(tmp_path, files))
    assert [d for d in kb.diagnostics if d.code == "unit-mismatch"] == []  # the claim of a time is right


def test_a_claim_of_what_the_expression_computes_is_not_blamed_for_the_formulas_missing_unit(tmp_path: Path) -> None:
    text = HW_FLOP.replace("    unit: ms\n", "") + "    expect:\n      - {hardware: hw/h100, value: 2.98507 ms}\n"
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    result = the_diagnostic(tmp_path, files, "formula-unit-mismatch")
    assert result.message == "the result is [time] but the formula has no unit (dimensionless)"
    assert result.hint == "give the formula the unit its claim is written in: `unit: ms`"
    kb = compile_kb(write_kb(tmp_path, files))
    assert [d for d in kb.diagnostics if d.code == "unit-mismatch"] == []


def test_a_claim_of_another_dimension_than_a_dimensionless_formula_is_told_to_be_a_number(tmp_path: Path) -> None:
    text = FLOP + "formulas:\n  - id: share\n    expr: a / b\n    inputs: {a: 1 GB, b: 4 GB}\n"
    text += "    expect:\n      - {value: 3 ms}\n"
    claim = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "unit-mismatch")
    assert (claim.line, claim.column) == (10, 17)
    assert claim.message == "expect[0].value: 3 ms is [time], but the formula has no unit (dimensionless)"
    assert claim.hint == "claim what the formula computes: a dimensionless value (a bare number)"


def test_a_claim_of_another_dimension_is_quoted_as_written(tmp_path: Path) -> None:
    text = HW_FLOP + "    expect:\n      - {hardware: hw/h100, value: 4.77612 GB}\n"
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    claim = the_diagnostic(tmp_path, files, "unit-mismatch")
    assert claim.message == "expect[0].value: 4.77612 GB is [information], not [time] (the formula's unit is ms)"
    assert claim.hint == "claim what the formula computes: a value of [time], in ms or another unit of it"


@pytest.mark.parametrize(("written", "fraction"), [("5%", "0.05"), ("2.5 %", "0.025"), ("10%", "0.1")])
def test_a_tolerance_in_percent_is_told_as_the_fraction(tmp_path: Path, written: str, fraction: str) -> None:
    text = HW_FLOP + f"    expect:\n      - {{hardware: hw/h100, value: 2.98507 ms, rel_tol: {written}}}\n"
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    diagnostic = the_diagnostic(tmp_path, files, "invalid-value")
    assert (diagnostic.line, diagnostic.column) == (13, 57)
    assert diagnostic.message == f"formulas[0].expect[0].rel_tol: expected a number, got the text '{written}'"
    assert diagnostic.hint == f"write it as a fraction: {fraction}"


def test_an_invalid_id_is_offered_the_id_the_path_implies(tmp_path: Path) -> None:
    text = ENGINE.replace("id: engines/e", "id: Flops/My Record")
    diagnostic = the_diagnostic(tmp_path, {"records/engines/e.yaml": text}, "invalid-id")
    assert (diagnostic.line, diagnostic.column) == (1, 5)
    assert diagnostic.message == (
        "id: 'Flops/My Record' is not a valid id: the segment 'Flops' must match [a-z0-9][a-z0-9._-]*"
    )
    assert diagnostic.hint == "set id: engines/e, the id that the file's path implies"


# A formula's regime (valid_when)


def regime_diagnostic(root: Path, valid_when: str, code: str) -> Diagnostic:
    """The one `code` diagnostic of a formula on hw/h100 (line 11: `    valid_when: <valid_when>`)."""
    text = HW_FLOP.replace("    hardware:", f"    valid_when: {valid_when}\n    hardware:")
    return the_diagnostic(root, {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}, code)


def test_a_misspelt_parameter_in_valid_when_is_told_once_where_it_is_written(tmp_path: Path) -> None:
    diagnostic = regime_diagnostic(tmp_path, "bytes <= hw.memory_capacty", "formula-unknown-name")
    assert (diagnostic.line, diagnostic.column) == (11, 26)
    assert diagnostic.message == (
        "valid_when: hw.memory_capacty is not a hardware parameter (schema/vocabulary.yaml has no `memory_capacty`)"
    )
    assert diagnostic.hint == "did you mean hw.memory_capacity?"
    assert not [d for d in compile_kb(tmp_path).diagnostics if d.code == "formula-missing-spec"]


def test_a_spec_only_valid_when_uses_is_asked_for_valid_when(tmp_path: Path) -> None:
    diagnostic = regime_diagnostic(tmp_path, "bytes <= hw.memory_capacity", "formula-missing-spec")
    assert diagnostic.message == "hw/h100 has no spec `memory_capacity`, which valid_when uses (hw.memory_capacity)"


def test_valid_when_over_hw_without_accelerators_is_told_at_valid_when(tmp_path: Path) -> None:
    text = FLOP + "formulas:\n  - id: f\n    expr: layers * 2\n    inputs:\n      layers: 32\n"
    text += "    valid_when: layers <= hw.memory_capacity\n    expect:\n      - {value: 64}\n"
    kb = compile_kb(write_kb(tmp_path, {"records/flops/y.yaml": OTHER, "records/flops/x.yaml": text}))
    told = {d.code: (d.line, d.column, d.message) for d in kb.diagnostics if d.code != "orphan"}
    assert told == {
        "formula-missing-spec": (10, 17, "valid_when uses hw.memory_capacity but no accelerator is in scope"),
        "invalid-value": (12, 9, "expect[0] names no accelerator, but valid_when uses hw."),
    }


def test_a_comparison_of_two_dimensions_is_quoted_as_written(tmp_path: Path) -> None:
    diagnostic = regime_diagnostic(tmp_path, "bytes <= hw.memory_bandwidth", "formula-unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (11, 17)
    assert diagnostic.message == (
        "valid_when: `bytes <= hw.memory_bandwidth` compares [information] with [information] / [time]"
    )
    assert diagnostic.hint == "compare quantities of one dimension: correct the side that is not the quantity meant"


def test_a_term_an_accelerator_lacks_is_asked_of_the_accelerator_not_respelt(tmp_path: Path) -> None:
    text = HW_FLOP.replace("expr: bytes / hw.memory_bandwidth", "expr: bytes / hw.memory_capacity")
    text = text.replace("unit: ms", "unit: '1'")  # dimensionless: a unit is text
    files = {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}
    diagnostic = the_diagnostic(tmp_path, files, "formula-missing-spec")
    assert diagnostic.message == "hw/h100 has no spec `memory_capacity`, which the expression uses (hw.memory_capacity)"
    assert diagnostic.hint == (
        'give hw/h100 a spec `memory_capacity` in its `specs` (e.g. `memory_capacity: {value: "...", basis: '
        "vendor-spec}`), or leave it out of the formula's `hardware`"
    )


# An erratum's field


def erratum_of(field: str) -> str:
    return f"errata:\n  - field: {field}\n    quote: Serves\n    correction: Streams.\n    basis: derived\n"


def test_a_misspelt_erratum_field_is_offered_the_records_own_field(tmp_path: Path) -> None:
    files = {"records/engines/e.yaml": ENGINE + erratum_of("descripton")}
    diagnostic = the_diagnostic(tmp_path, files, "invalid-value")
    assert (diagnostic.line, diagnostic.column) == (5, 12)
    assert diagnostic.message == "errata[0].field: 'descripton' is no text field of this record"
    assert diagnostic.hint == "did you mean description?"


@pytest.mark.parametrize("description", ["", "description: 5\n"], ids=["missing", "not-text"])
def test_an_erratum_of_a_broken_required_field_adds_nothing_to_the_fields_own_problem(
    tmp_path: Path, description: str
) -> None:
    text = FLOP.replace("description: Streams [[flops/y]].\n", description) + erratum_of("description")
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": text}))
    assert [(d.code, d.line) for d in kb.diagnostics if d.code != "orphan"] == [
        ("missing-field" if not description else "invalid-value", 1 if not description else 4)
    ]


def test_an_erratum_field_far_from_any_lists_the_records_text_fields_only(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - {factor: batch_size, effect: grows}\n" + erratum_of("statement")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text.replace("Serves", "Streams")}, "invalid-value")
    assert diagnostic.hint == "name a text field of this record: description, scales_with[0].effect"


# A ref without its anchor


def test_a_formula_ref_without_its_formula_lists_the_formulas_there(tmp_path: Path) -> None:
    target = OTHER + "formulas:\n  - {id: a, expr: '1'}\n  - {id: b, expr: '2'}\n"
    text = FLOP + "formulas:\n  - id: r\n    ref: flops/y\n"
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": text, "records/flops/y.yaml": target}))
    [diagnostic] = [d for d in kb.diagnostics if d.code != "orphan"]
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("dangling-anchor", 7, 10)
    assert diagnostic.message == "formulas[0].ref: 'flops/y' names no formula of flops/y: write 'flops/y#<formula-id>'"
    assert diagnostic.hint == "write flops/y#<formula-id>, one of its formulas: a, b"


@pytest.mark.parametrize(
    ("others", "hint"),
    [
        ("  - {id: a, expr: '1'}\n  - {id: b, expr: '2'}\n", "write flops/x#<formula-id>, one of its formulas: a, b"),
        ("  - {id: a, expr: '1'}\n", "write flops/x#a"),
        ("", "flops/x has no other formulas"),
    ],
)
def test_a_formula_ref_to_its_own_record_is_never_offered_itself(tmp_path: Path, others: str, hint: str) -> None:
    text = FLOP + "formulas:\n  - id: r\n    ref: flops/x\n" + others
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "dangling-anchor")
    assert diagnostic.hint == hint


def measured_claim(value: str, measured: str) -> dict[str, str]:
    """A stream formula (unit s) claiming `measured` (line 13), and sources/s, whose one measurement m1 is `value`."""
    source = "id: sources/s\nkind: source\ntitle: T\nmeasurements:\n"
    source += f"  - {{id: m1, quantity: q, basis: measured, where: setup, value: {value}}}\n"
    text = sweep_flop(["10 GB/s"], f"    expect:\n      - measured: {measured}\n").replace('["', '"')
    return {"records/flops/x.yaml": text.replace('"]', '"'), "records/sources/s.yaml": source}


def test_a_measured_claim_without_its_measurement_is_offered_the_one_there(tmp_path: Path) -> None:
    diagnostic = the_diagnostic(tmp_path, measured_claim("1 s", "sources/s"), "dangling-anchor")
    assert (diagnostic.line, diagnostic.column) == (13, 19)
    assert diagnostic.message == (
        "formulas[0].expect[0].measured: 'sources/s' names no measurement of sources/s: "
        "write 'sources/s#<measurement-id>'"
    )
    assert diagnostic.hint == "write sources/s#m1"


def test_a_measurement_of_another_dimension_is_quoted_as_the_source_writes_it(tmp_path: Path) -> None:
    diagnostic = the_diagnostic(tmp_path, measured_claim("4.77612 GB", "sources/s#m1"), "unit-mismatch")
    assert (diagnostic.line, diagnostic.column) == (13, 19)
    assert diagnostic.message == (
        "expect[0].measured: sources/s#m1 measured 4.77612 GB, which is [information], not [time] "
        "(the formula's unit is s)"
    )
    assert diagnostic.hint == "claim a measurement of what the formula computes: a value of [time]"

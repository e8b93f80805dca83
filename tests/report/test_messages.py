"""Every message names the fix in an author's words: for each, where it points and what its hint says.

Each test writes the slip an author makes into a real base, checks it, and reads the one diagnostic of the slip
as `flopkb check` prints it: its line and column, and the words of its message and hint.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flopkb.authoring.fmt import format_text
from flopkb.load.source import parse
from flopkb.load.tabs import replace_line_start_tabs
from flopkb.report.diagnostics import Diagnostic
from kbfixture import compile_kb, write_kb

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
    text = FLOP.replace("kind: flop\n", "")
    diagnostic = the_diagnostic(tmp_path, {"records/flops/x.yaml": text}, "missing-field")
    assert diagnostic.hint == "add `kind:` with one of flop, fact, engine, accelerator, source"


def test_a_missing_basis_of_a_measurement_lists_the_two_it_may_be(tmp_path: Path) -> None:
    text = "id: sources/s\nkind: source\ntitle: T\nmeasurements:\n  - id: m\n    quantity: q\n    where: {}\n"
    text += "    value: 1 s\n"
    diagnostic = the_diagnostic(tmp_path, {"records/sources/s.yaml": text}, "missing-field")
    assert (diagnostic.line, diagnostic.column) == (5, 5)
    assert diagnostic.message == "the field 'basis' is required in measurements[0]"
    assert diagnostic.hint == "add `basis:` with one of measured, simulated"


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

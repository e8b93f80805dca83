"""One test per schema code: the code, the file and the exact line (and column where it matters)."""

from __future__ import annotations

from pathlib import Path

from kbfixture import VOCABULARY, codes, compile_kb, located, write_kb

UNLINKED = ("orphan",)
"""The fixtures here are lone records: that nothing links to them is not what these tests are about."""

FLOP = """\
id: flops/a
kind: flop
category: arithmetic-intensity
description: Mechanism.
"""


def test_valid_record_has_no_schema_problem(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP}))
    assert codes(kb, ignore=UNLINKED) == []
    assert kb.entries["flops/a"].record is not None


def test_yaml_syntax_at_parser_position(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/a.yaml": "id: a\nkind: flop\ndescription: [unclosed\n"}))
    assert codes(kb, ignore=UNLINKED) == [("yaml-syntax", "records/a.yaml", 3)]  # the last line, not past it


def test_yaml_syntax_does_not_stop_the_rest(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(
            tmp_path,
            {
                "records/a.yaml": "a: : :\n  - x\n",
                "records/flops/b.yaml": FLOP.replace("flops/a", "flops/b") + "bogus: 1\n",
            },
        )
    )
    assert ("unknown-field", "records/flops/b.yaml", 5) in codes(kb, ignore=UNLINKED)
    assert [c[0] for c in codes(kb, ignore=UNLINKED)].count("yaml-syntax") == 1


def test_duplicate_key_points_at_the_repeat(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP + "description: again\n"}))
    assert located(kb, ignore=UNLINKED) == [("duplicate-key", "records/flops/a.yaml", 5, 1)]


def test_not_a_record_for_a_list_and_for_an_empty_file(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/a.yaml": "# just a comment\n- a\n", "records/b.yaml": ""}))
    assert codes(kb, ignore=UNLINKED) == [("not-a-record", "records/a.yaml", 2), ("not-a-record", "records/b.yaml", 1)]


def test_encoding_at_the_bad_byte(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/a.yaml": b"id: a\nkind: flop\ntitle: caf\xe9\n"}))
    assert located(kb, ignore=UNLINKED) == [("encoding", "records/a.yaml", 3, 11)]


def test_bom_and_crlf_keep_line_numbers(tmp_path: Path) -> None:
    text = ("\ufeff" + FLOP + "bogus: 1\n").replace("\n", "\r\n").encode("utf-8")
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": text}))
    assert located(kb, ignore=UNLINKED) == [("unknown-field", "records/flops/a.yaml", 5, 1)]


def test_missing_field_names_the_field(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(tmp_path, {"records/flops/a.yaml": "id: flops/a\nkind: flop\ncategory: arithmetic-intensity\n"})
    )
    assert codes(kb, ignore=UNLINKED) == [("missing-field", "records/flops/a.yaml", 1)]
    assert "'description'" in kb.diagnostics[0].message


def test_missing_field_in_a_nested_row_points_at_the_row(tmp_path: Path) -> None:
    text = FLOP + "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: x\n    basis: unverified\n"
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": text}))
    assert located(kb, ignore=UNLINKED) == [("missing-field", "records/flops/a.yaml", 6, 5)]


def test_unknown_field_with_did_you_mean(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP + "workaround:\n  - Disable it\n"}))
    assert located(kb, ignore=UNLINKED) == [("unknown-field", "records/flops/a.yaml", 5, 1)]
    assert [d.hint for d in kb.diagnostics if d.code == "unknown-field"] == ["did you mean workarounds?"]


def test_unknown_field_in_a_nested_row_suggests_the_rows_fields(tmp_path: Path) -> None:
    text = FLOP + "scales_with:\n  - factor: batch_size\n    efect: grows\n"
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": text}))
    assert ("unknown-field", "records/flops/a.yaml", 7) in codes(kb, ignore=UNLINKED)
    assert any(d.hint == "did you mean effect?" for d in kb.diagnostics)


def test_invalid_value_for_a_wrong_type(tmp_path: Path) -> None:
    text = "id: sources/s\nkind: source\ntitle: T\nyear: twenty-twenty\n"
    kb = compile_kb(write_kb(tmp_path, {"records/sources/s.yaml": text}))
    assert located(kb, ignore=UNLINKED) == [("invalid-value", "records/sources/s.yaml", 4, 7)]


def test_text_starting_with_a_wikilink_gets_a_quoting_hint(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(
            tmp_path,
            {"records/flops/a.yaml": FLOP.replace("description: Mechanism.", "description: [[flops/a]] explains it")},
        )
    )
    assert located(kb, ignore=UNLINKED) == [("yaml-syntax", "records/flops/a.yaml", 4, 26)]
    assert "quote the text" in kb.diagnostics[0].hint


def test_wikilink_alone_as_a_plain_value_gets_a_quoting_hint(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(
            tmp_path, {"records/flops/a.yaml": FLOP.replace("description: Mechanism.", "description: [[flops/a]]")}
        )
    )
    assert located(kb, ignore=UNLINKED) == [("invalid-value", "records/flops/a.yaml", 4, 14)]
    assert "quote the text" in next(d.hint or "" for d in kb.diagnostics if d.code == "invalid-value")


def test_unknown_term_with_hint(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(tmp_path, {"records/flops/a.yaml": FLOP.replace("arithmetic-intensity", "arithmetic-intensty")})
    )
    assert located(kb, ignore=UNLINKED) == [("unknown-term", "records/flops/a.yaml", 3, 11)]
    assert next(d.hint for d in kb.diagnostics if d.code == "unknown-term") == "did you mean arithmetic-intensity?"


def test_unknown_kind_is_an_unknown_term(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP.replace("kind: flop", "kind: flops")}))
    assert located(kb, ignore=UNLINKED) == [("unknown-term", "records/flops/a.yaml", 2, 7)]
    assert next(d.hint for d in kb.diagnostics if d.code == "unknown-term") == "did you mean flop?"


def test_unknown_parameter_term_as_a_spec_key(tmp_path: Path) -> None:
    text = (
        "id: hw/x\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwith:\n    value: 1 TB/s\n    basis: unverified\n"
    )
    kb = compile_kb(write_kb(tmp_path, {"records/hw/x.yaml": text}))
    assert ("unknown-term", "records/hw/x.yaml", 5) in codes(kb, ignore=UNLINKED)


def test_invalid_id(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP.replace("id: flops/a", "id: Flops/A")}))
    assert located(kb, ignore=UNLINKED) == [("invalid-id", "records/flops/a.yaml", 1, 5)]


def test_invalid_id_from_the_file_name(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/My Record.yaml": FLOP}))
    assert codes(kb, ignore=UNLINKED) == [("invalid-id", "records/flops/My Record.yaml", 1)]


def test_id_path_mismatch(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/b.yaml": FLOP}))
    assert located(kb, ignore=UNLINKED) == [("id-path-mismatch", "records/flops/b.yaml", 1, 5)]
    assert kb.diagnostics[0].hint.startswith("set id: flops/b")


def test_duplicate_id_by_alias(tmp_path: Path) -> None:
    other = FLOP.replace("flops/a", "flops/b") + "aliases:\n  - flops/a\n"
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP, "records/flops/b.yaml": other}))
    assert located(kb, ignore=UNLINKED) == [("duplicate-id", "records/flops/b.yaml", 6, 5)]


def test_duplicate_id_by_two_extensions(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP, "records/flops/a.yml": FLOP}))
    assert codes(kb, ignore=UNLINKED) == [("duplicate-id", "records/flops/a.yml", 1)]


def test_unit_mismatch_on_an_accelerator_spec(tmp_path: Path) -> None:
    text = (
        "id: hw/x\n"
        "kind: accelerator\n"
        "vendor: V\n"
        "specs:\n"
        "  memory_bandwidth:\n"
        '    value: "989 TFLOP/s"\n'
        "    basis: unverified\n"
    )
    kb = compile_kb(write_kb(tmp_path, {"records/hw/x.yaml": text}))
    assert ("unit-mismatch", "records/hw/x.yaml", 6) in codes(kb, ignore=UNLINKED)


def test_severity_configured_per_code(tmp_path: Path) -> None:
    files = {
        "records/flops/b.yaml": FLOP,
        "pyproject.toml": '[tool.flopkb.severity]\nid-path-mismatch = "warning"\n',
    }
    kb = compile_kb(write_kb(tmp_path, files))
    assert [(d.code, d.severity.value) for d in kb.diagnostics if d.code == "id-path-mismatch"] == [
        ("id-path-mismatch", "warning")
    ]


def test_severity_off_drops_the_code(tmp_path: Path) -> None:
    files = {"records/flops/b.yaml": FLOP, "pyproject.toml": '[tool.flopkb.severity]\nid-path-mismatch = "off"\n'}
    kb = compile_kb(write_kb(tmp_path, files))
    assert "id-path-mismatch" not in [d.code for d in kb.diagnostics]


def test_vocabulary_problem_is_located_in_the_vocabulary(tmp_path: Path) -> None:
    broken = VOCABULARY.replace("  unverified: {description: Not yet verified.}\n", "")
    kb = compile_kb(write_kb(tmp_path, {"records/flops/a.yaml": FLOP}, vocabulary=broken))
    assert codes(kb, ignore=UNLINKED)[0][:2] == ("invalid-value", "schema/vocabulary.yaml")

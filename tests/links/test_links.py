"""Links and refs: every code at its exact line and column, resolution order, code is not a link."""

from __future__ import annotations

from pathlib import Path

from flopkb.links.resolve import resolve_formula_ref, resolve_target
from kbfixture import H100 as ACC
from kbfixture import compile_kb, located, write_kb

QUIET = ("orphan", "unverified-basis")

SRC = """\
id: src/paper
kind: source
title: A paper
"""

FACT = """\
id: facts/ridge
kind: fact
statement: The ridge point.
formulas:
  - id: ridge
    expr: 1 + 1
  - id: other
    expr: "2"
"""

ENGINE = """\
id: engines/vllm
kind: engine
description: An engine.
"""


def base(tmp_path: Path, files: dict[str, str | bytes]) -> list[tuple[str, str, int, int]]:
    common = {
        "records/hw/h100.yaml": ACC,
        "records/src/paper.yaml": SRC,
        "records/facts/ridge.yaml": FACT,
        "records/engines/vllm.yaml": ENGINE,
    }
    return located(compile_kb(write_kb(tmp_path, {**common, **files})), ignore=QUIET)


def shown(kb: object) -> list:
    return [d for d in kb.diagnostics if d.code not in QUIET]  # type: ignore[attr-defined]


def flop(description: str, extra: str = "") -> str:
    return f"id: flops/a\nkind: flop\ncategory: arithmetic-intensity\ndescription: {description}\n{extra}"


# -- dangling-link, in every kind of scalar ----------------------------------


def test_dangling_link_in_a_plain_scalar(tmp_path: Path) -> None:
    assert base(tmp_path, {"records/flops/a.yaml": flop("See [[hw/h100]] and [[hw/h200]].")}) == [
        ("dangling-link", "records/flops/a.yaml", 4, 34)
    ]


def test_dangling_link_in_a_literal_block_scalar(tmp_path: Path) -> None:
    text = flop("|\n  First line.\n  Second [[nope]] here.\n")
    assert base(tmp_path, {"records/flops/a.yaml": text}) == [("dangling-link", "records/flops/a.yaml", 6, 10)]


def test_dangling_link_in_a_folded_block_scalar(tmp_path: Path) -> None:
    text = flop(">\n  First line\n  folded on, with\n\n    [[x/gone|a label]] in an indented line.\n")
    assert base(tmp_path, {"records/flops/a.yaml": text}) == [("dangling-link", "records/flops/a.yaml", 8, 5)]


def test_dangling_link_in_a_quoted_multiline_scalar(tmp_path: Path) -> None:
    text = flop('"one\n  two [[hw/h100]]\n  three [[zzz]]"\n')
    assert base(tmp_path, {"records/flops/a.yaml": text}) == [("dangling-link", "records/flops/a.yaml", 6, 9)]


def test_dangling_link_in_a_crlf_file_with_a_bom(tmp_path: Path) -> None:
    text = ("\ufeff" + flop("|\n  Line one.\n  Line [[two]] and [[three]].\n")).replace("\n", "\r\n").encode("utf-8")
    assert base(tmp_path, {"records/flops/a.yaml": text}) == [
        ("dangling-link", "records/flops/a.yaml", 6, 8),
        ("dangling-link", "records/flops/a.yaml", 6, 20),
    ]


def test_dangling_link_in_nested_markdown_fields(tmp_path: Path) -> None:
    extra = (
        "scales_with:\n"
        "  - factor: batch\n"
        "    effect: grows with [[batchy]]\n"
        "workarounds:\n"
        "  - use [[gone]]\n"
        "notes: see [[hw/h100]]\n"
    )
    assert base(tmp_path, {"records/flops/a.yaml": flop("Mechanism.", extra)}) == [
        ("dangling-link", "records/flops/a.yaml", 7, 24),
        ("dangling-link", "records/flops/a.yaml", 9, 9),
    ]


def test_dangling_link_hint_names_the_closest_id(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(tmp_path, {"records/facts/ridge.yaml": FACT, "records/flops/a.yaml": flop("See [[facts/ridg]].")})
    )
    (diagnostic,) = [d for d in kb.diagnostics if d.code == "dangling-link"]
    assert diagnostic.message == "[[facts/ridg]] resolves to no record"
    assert diagnostic.hint == "did you mean facts/ridge?"


def test_dangling_link_hint_matches_last_segments(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(tmp_path, {"records/facts/ridge.yaml": FACT, "records/flops/a.yaml": flop("See [[rigde]].")})
    )
    assert [d.hint for d in kb.diagnostics if d.code == "dangling-link"] == ["did you mean facts/ridge?"]


def test_matching_is_case_sensitive(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(tmp_path, {"records/facts/ridge.yaml": FACT, "records/flops/a.yaml": flop("See [[Facts/Ridge]].")})
    )
    (diagnostic,) = [d for d in kb.diagnostics if d.code == "dangling-link"]
    assert diagnostic.hint == "did you mean facts/ridge?"


# -- code is not a link ------------------------------------------------------


def test_links_in_code_are_ignored(tmp_path: Path) -> None:
    description = (
        "|\n"
        "  Inline `[[in-code]]` span.\n"
        "\n"
        "  ```\n"
        "  [[fenced]]\n"
        "  ```\n"
        "\n"
        "      [[indented-code]]\n"
        "\n"
        "  ~~~yaml\n"
        "  [[tilde-fence]]\n"
        "  ~~~\n"
        "\n"
        "  But [[real-one]] is a link.\n"
    )
    assert base(tmp_path, {"records/flops/a.yaml": flop(description)}) == [
        ("dangling-link", "records/flops/a.yaml", 17, 7)
    ]


# -- resolution order ---------------------------------------------------------


def test_resolution_by_id_suffix_and_alias(tmp_path: Path) -> None:
    aliased = "id: facts/new\nkind: fact\nstatement: S.\naliases: [facts/old-name]\n"
    text = flop("'[[hw/h100]], [[h100]], [[facts/old-name]], [[ridge#other]], [[facts/ridge#ridge|the ridge]].'")
    assert base(tmp_path, {"records/facts/new.yaml": aliased, "records/flops/a.yaml": text}) == []
    kb = compile_kb(tmp_path)
    assert [link.resolved for link in kb.links["flops/a"]] == [
        "hw/h100",
        "hw/h100",
        "facts/new",
        "facts/ridge",
        "facts/ridge",
    ]
    assert kb.links["flops/a"][4].label == "the ridge"
    assert resolve_target(kb, "old-name") is None  # aliases match whole, not by suffix
    assert resolve_target(kb, "new") == "facts/new"
    assert resolve_formula_ref(kb, "ridge#other") == ("facts/ridge", "other")


def test_full_id_wins_over_a_suffix(tmp_path: Path) -> None:
    files = {
        "records/ridge.yaml": "id: ridge\nkind: fact\nstatement: S.\n",
        "records/flops/a.yaml": flop("'[[ridge]]'"),
    }
    assert base(tmp_path, files) == []
    assert compile_kb(tmp_path).links["flops/a"][0].resolved == "ridge"


def test_ambiguous_link_lists_the_candidates(tmp_path: Path) -> None:
    files = {
        "records/papers/vllm.yaml": SRC.replace("src/paper", "papers/vllm"),
        "records/flops/a.yaml": flop("Uses [[vllm]]."),
    }
    kb = compile_kb(write_kb(tmp_path, {"records/engines/vllm.yaml": ENGINE, **files}))
    assert located(kb, ignore=QUIET) == [("ambiguous-link", "records/flops/a.yaml", 4, 19)]
    assert shown(kb)[0].message == "[[vllm]]: 'vllm' matches several records: engines/vllm, papers/vllm"
    assert shown(kb)[0].hint == "write more of the id: engines/vllm or papers/vllm"


def test_ambiguous_ref(tmp_path: Path) -> None:
    other = ACC.replace("hw/h100", "cloud/h100")
    extra = "affected_by_hardware: [hw/h100, h100]\n"
    assert base(tmp_path, {"records/cloud/h100.yaml": other, "records/flops/a.yaml": flop("M.", extra)}) == [
        ("ambiguous-link", "records/flops/a.yaml", 5, 33)
    ]


# -- typed refs ---------------------------------------------------------------


def test_dangling_ref_in_values_for_with_hint_of_the_right_kind(tmp_path: Path) -> None:
    extra = (
        "hardware_parameters:\n"
        "  - parameter: memory_bandwidth\n"
        "    effect: E.\n"
        "    basis: derived\n"
        "    values_for:\n"
        "      - hw/h100\n"
        "      - hw/h10\n"
    )
    kb = compile_kb(write_kb(tmp_path, {"records/hw/h100.yaml": ACC, "records/flops/a.yaml": flop("M.", extra)}))
    assert located(kb, ignore=QUIET) == [("dangling-ref", "records/flops/a.yaml", 11, 9)]
    assert shown(kb)[0].message == "hardware_parameters[0].values_for[1]: 'hw/h10' resolves to no record"
    assert shown(kb)[0].hint == "did you mean hw/h100?"


def test_dangling_ref_in_sources_but_urls_are_not_refs(tmp_path: Path) -> None:
    extra = "sources: [https://example.org/x, http://example.org/y, src/paper, src/missing]\n"
    assert base(tmp_path, {"records/flops/a.yaml": flop("M.", extra)}) == [
        ("dangling-ref", "records/flops/a.yaml", 5, 67)
    ]


def test_wrong_kind_ref(tmp_path: Path) -> None:
    extra = "affected_by_hardware: [engines/vllm]\nsources:\n  - hw/h100\n"
    kb = compile_kb(
        write_kb(
            tmp_path,
            {
                "records/engines/vllm.yaml": ENGINE,
                "records/hw/h100.yaml": ACC,
                "records/flops/a.yaml": flop("M.", extra),
            },
        )
    )
    assert located(kb, ignore=QUIET) == [
        ("wrong-kind-ref", "records/flops/a.yaml", 5, 24),
        ("wrong-kind-ref", "records/flops/a.yaml", 7, 5),
    ]
    assert shown(kb)[0].message == (
        "affected_by_hardware[0]: 'engines/vllm' is an engine record (engines/vllm); "
        "affected_by_hardware[0] takes an accelerator record"
    )


def test_formula_refs_and_hardware(tmp_path: Path) -> None:
    extra = (
        "formulas:\n"
        "  - id: f1\n    ref: facts/ridge#ridge\n"  # fine
        "  - id: f2\n    ref: facts/ridge#nope\n"  # dangling-anchor at 9
        "  - id: f3\n    ref: hw/h100#x\n"  # wrong kind at 11
        "  - id: f4\n    ref: facts/gone#ridge\n"  # dangling-ref at 13
        "  - id: f5\n    expr: hw.memory_bandwidth\n    unit: byte/s\n"
        "    hardware: [hw/h100, src/paper]\n"  # wrong kind at 17
        "    expect:\n      - hardware: hw/h999\n        value: 1\n"  # dangling-ref at 19
    )
    assert base(tmp_path, {"records/flops/a.yaml": flop("M.", extra)}) == [
        ("dangling-anchor", "records/flops/a.yaml", 9, 10),
        ("wrong-kind-ref", "records/flops/a.yaml", 11, 10),
        ("dangling-ref", "records/flops/a.yaml", 13, 10),
        ("wrong-kind-ref", "records/flops/a.yaml", 17, 25),
        ("dangling-ref", "records/flops/a.yaml", 19, 19),
    ]


def test_dangling_anchor_in_prose_lists_the_formulas(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(
            tmp_path,
            {
                "records/facts/ridge.yaml": FACT,
                "records/hw/h100.yaml": ACC,
                "records/flops/a.yaml": flop('"[[ridge#rigde|x]], [[ridge#zzz]] and [[hw/h100#peak]]"'),
            },
        )
    )
    assert located(kb, ignore=QUIET) == [
        ("dangling-anchor", "records/flops/a.yaml", 4, 15),
        ("dangling-anchor", "records/flops/a.yaml", 4, 34),
        ("dangling-anchor", "records/flops/a.yaml", 4, 52),
    ]
    assert shown(kb)[0].message == "[[ridge#rigde|x]]: facts/ridge has no formula 'rigde'"
    assert shown(kb)[0].hint == "did you mean ridge?"
    assert shown(kb)[1].hint == "its formulas: ridge, other"
    assert shown(kb)[2].hint == "hw/h100 has no formulas; link to the record without '#peak'"


def test_a_dangling_anchor_of_a_source_of_many_measurements_lists_the_first_ones(tmp_path: Path) -> None:
    rows = "".join(
        f"  - {{id: m{index:02d}, quantity: q, value: 1, basis: measured, where: Table 1}}\n" for index in range(20)
    )
    source = f"id: sources/s\nkind: source\ntitle: S\nmeasurements:\n{rows}"
    kb = compile_kb(write_kb(tmp_path, {"records/sources/s.yaml": source, "records/flops/a.yaml": flop('"[[s#zzz]]"')}))
    hint = next(d.hint for d in kb.diagnostics if d.code == "dangling-anchor")
    assert hint == f"its measurements: {', '.join(f'm{index:02d}' for index in range(12))}, and 8 more"


# -- a broken file does not cascade --------------------------------------------


def test_links_to_a_broken_file_still_resolve(tmp_path: Path) -> None:
    files = {
        "records/facts/broken.yaml": "id: facts/broken\nkind: fact\nstatement: [unclosed\n",
        "records/facts/invalid.yaml": "id: facts/invalid\nkind: fcat\n",  # no kind: no model
        "records/flops/a.yaml": flop(
            "'[[facts/broken]], [[broken#any]], [[facts/invalid#f]].'", "affected_by_hardware: [facts/invalid]\n"
        ),
    }
    assert [code for code, *_ in base(tmp_path, files)] == ["yaml-syntax", "unknown-term"]


def test_links_from_an_invalid_file_are_still_checked(tmp_path: Path) -> None:
    text = "id: flops/a\nkind: flop\ndescription: See [[nowhere]].\n"  # no category
    assert base(tmp_path, {"records/flops/a.yaml": text}) == [
        ("missing-field", "records/flops/a.yaml", 1, 1),
        ("dangling-link", "records/flops/a.yaml", 3, 18),
    ]


def test_link_objects_carry_position_and_text(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(
            tmp_path,
            {"records/facts/ridge.yaml": FACT, "records/flops/a.yaml": flop("|\n  x\n  y [[ridge#other|the other]]\n")},
        )
    )
    (link,) = kb.links["flops/a"]
    assert (link.target, link.anchor, link.label, link.text) == (
        "ridge",
        "other",
        "the other",
        "[[ridge#other|the other]]",
    )
    assert (link.file, link.line, link.column, link.origin, link.where) == (
        "records/flops/a.yaml",
        6,
        5,
        "prose",
        "description",
    )


def test_a_unique_suffix_wins_over_an_alias(tmp_path: Path) -> None:
    files = {
        "records/facts/ridge.yaml": "id: facts/ridge\nkind: fact\nstatement: S.\n",
        "records/facts/new.yaml": "id: facts/new\nkind: fact\nstatement: S.\naliases: [ridge]\n",
        "records/flops/a.yaml": flop("'[[ridge]]'"),
    }
    write_kb(tmp_path, files)
    assert compile_kb(tmp_path).links["flops/a"][0].resolved == "facts/ridge"

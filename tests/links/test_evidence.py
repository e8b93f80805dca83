"""Evidence: unverified-basis and missing-source at the basis line, and evidence debt flowing through the graph as
data."""

from __future__ import annotations

from pathlib import Path

from flopkb.links.debt import INHERITED_DEBT, NO_DEBT, NO_SOURCES, OWN_DEBT
from flopkb.links.evidence import formula_scope
from kbfixture import accelerator, compile_kb, located, write_kb

H100 = """\
id: hw/h100
kind: accelerator
vendor: NVIDIA
specs:
  memory_bandwidth:
    value: "3.35 TB/s"
    basis: unverified
  peak_bf16_dense:
    value: "989 TFLOP/s"
    basis: vendor-spec
  memory_capacity: {value: "80 GB", basis: cited, sources: [src/p]}
"""

B200 = accelerator("hw/b200", vendor="NVIDIA", memory_bandwidth="8 TB/s")

SOURCE = "id: src/p\nkind: source\ntitle: P\n"

FLOP = """\
id: flops/a
kind: flop
category: arithmetic-intensity
description: D.
hardware_parameters:
  - parameter: memory_bandwidth
    effect: E.
    basis: unverified
    values_for: [hw/b200]
  - parameter: memory_bandwidth
    effect: E.
    basis: derived
    values_for: [h100]
  - {parameter: peak_bf16_dense, effect: E., basis: measured, values_for: [hw/h100]}
"""

RIDGE = """\
id: facts/r
kind: fact
statement: S.
formulas:
  - id: f
    expr: hw.memory_bandwidth
    unit: byte/s
    hardware: [hw/h100]
"""

BORROWS = """\
id: facts/s
kind: fact
statement: Borrows the formula of [[facts/r]] and the hardware with it.
formulas:
  - id: g
    ref: facts/r#f
"""

OWN_HARDWARE = """\
id: facts/t
kind: fact
statement: Borrows the expression, but computes on verified hardware.
formulas:
  - id: h
    ref: facts/r#f
    hardware: [hw/b200]
"""

DEFAULT_SCOPE = """\
id: flops/d
kind: flop
category: memory-bandwidth
description: Mentions [[hw/b200]] in prose only.
affected_by_hardware: [hw/h100]
formulas:
  - id: k
    expr: 2 * hw.memory_bandwidth
    unit: byte/s
"""

FILES = {
    "records/hw/h100.yaml": H100,
    "records/hw/b200.yaml": B200,
    "records/src/p.yaml": SOURCE,
    "records/flops/a.yaml": FLOP,
    "records/facts/r.yaml": RIDGE,
    "records/facts/s.yaml": BORROWS,
    "records/facts/t.yaml": OWN_HARDWARE,
    "records/flops/d.yaml": DEFAULT_SCOPE,
}


def test_unverified_basis_and_missing_source_at_the_basis(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert located(kb, ignore=("orphan",)) == [
        ("unverified-basis", "records/flops/a.yaml", 8, 12),
        ("missing-source", "records/flops/a.yaml", 14, 53),
        ("unverified-basis", "records/hw/h100.yaml", 7, 12),
        ("missing-source", "records/hw/h100.yaml", 10, 12),
    ]
    messages = {(d.path, d.line): (d.message, d.hint) for d in kb.diagnostics}
    assert messages["records/hw/h100.yaml", 7] == (
        "specs.memory_bandwidth: the basis is unverified",
        "find the evidence, then set the basis to measured, vendor-spec, cited or derived and add sources; "
        "4 other records rest on this figure",
    )
    assert (
        messages["records/hw/h100.yaml", 10][0]
        == "specs.peak_bf16_dense: the basis 'vendor-spec' needs sources, and there are none"
    )
    assert (
        messages["records/flops/a.yaml", 14][0]
        == "hardware_parameters[2] (peak_bf16_dense): the basis 'measured' needs sources, and there are none"
    )


def test_record_level_sources_do_not_stand_in_for_a_rows_sources(tmp_path: Path) -> None:
    flop = (
        "id: flops/x\n"
        "kind: flop\n"
        "category: memory-bandwidth\n"
        "description: D.\n"
        "sources: [src/p]\n"
        "hardware_parameters:\n"
        "  - {parameter: memory_bandwidth, effect: E., basis: cited, values_for: [hw/b200]}\n"
    )
    kb = compile_kb(
        write_kb(tmp_path, {"records/hw/b200.yaml": B200, "records/src/p.yaml": SOURCE, "records/flops/x.yaml": flop})
    )
    assert [code for code, *_ in located(kb, ignore=("orphan",))] == ["missing-source"]


def test_own_and_inherited_debt_as_data(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    evidence = kb.evidence
    assert evidence is not None
    status = {record_id: evidence.of(record_id).status for record_id in kb.entries}
    assert status == {
        "hw/h100": OWN_DEBT,
        "hw/b200": NO_DEBT,
        "src/p": NO_DEBT,
        "flops/a": OWN_DEBT,  # its own unverified row, and a row resting on h100's bandwidth
        "facts/r": INHERITED_DEBT,
        "facts/s": INHERITED_DEBT,
        "facts/t": NO_DEBT,  # its own hardware takes precedence over the borrowed formula's
        "flops/d": INHERITED_DEBT,  # the default scope: affected_by_hardware; prose links carry no debt
    }
    bandwidth = next(item for item in evidence.debt if item.record == "hw/h100")
    assert (bandwidth.path, bandwidth.parameter, bandwidth.label, bandwidth.file, bandwidth.line) == (
        ("specs", "memory_bandwidth"),
        "memory_bandwidth",
        "specs.memory_bandwidth",
        "records/hw/h100.yaml",
        7,
    )
    assert [item.label for item in evidence.debt] == [
        "hardware_parameters[0] (memory_bandwidth)",
        "specs.memory_bandwidth",
    ]
    assert evidence.dependents[bandwidth] == ("facts/r", "facts/s", "flops/a", "flops/d")
    inherited = {
        record_id: [(debt.item.record, debt.via, debt.claim) for debt in evidence.of(record_id).inherited]
        for record_id in kb.entries
    }
    assert inherited["flops/a"] == [("hw/h100", ("hw/h100",), ("hardware_parameters", 1))]
    assert inherited["facts/r"] == [("hw/h100", ("hw/h100",), ("formulas", 0))]
    assert inherited["facts/s"] == [("hw/h100", ("facts/r", "hw/h100"), ("formulas", 0))]
    assert inherited["flops/d"] == [("hw/h100", ("hw/h100",), ("formulas", 0))]
    assert evidence.of("facts/s").sources_of_debt == ("hw/h100",)
    assert [item.label for item in evidence.of("flops/a").own] == ["hardware_parameters[0] (memory_bandwidth)"]
    assert evidence.counts() == {NO_DEBT: 3, OWN_DEBT: 2, INHERITED_DEBT: 3}


def test_debt_follows_formula_ref_chains_and_stops_at_cycles(tmp_path: Path) -> None:
    chain = (
        "id: facts/u\n"
        "kind: fact\n"
        "statement: S.\n"
        "formulas:\n"
        "  - id: x\n"
        "    ref: facts/s#g\n"
        "  - id: loop1\n"
        "    ref: facts/u#loop2\n"
        "  - id: loop2\n"
        "    ref: facts/u#loop1\n"
    )
    kb = compile_kb(write_kb(tmp_path, {**FILES, "records/facts/u.yaml": chain}))
    assert kb.evidence is not None
    assert [(debt.via, debt.claim) for debt in kb.evidence.of("facts/u").inherited] == [
        (("facts/s", "facts/r", "hw/h100"), ("formulas", 0))
    ]


def test_expect_hardware_outside_the_scope_counts(tmp_path: Path) -> None:
    fact = (
        "id: facts/e\n"
        "kind: fact\n"
        "statement: S.\n"
        "formulas:\n"
        "  - id: f\n"
        "    expr: hw.memory_bandwidth\n"
        "    unit: byte/s\n"
        "    hardware: [hw/b200]\n"
        "    expect:\n"
        "      - {hardware: hw/h100, value: 3.35e12}\n"
    )
    kb = compile_kb(write_kb(tmp_path, {**FILES, "records/facts/e.yaml": fact}))
    assert kb.evidence is not None
    assert [debt.via for debt in kb.evidence.of("facts/e").inherited] == [("hw/h100",)]


def test_formula_scope(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    record = kb.entries["facts/s"].record
    assert record is not None
    assert formula_scope(kb, "facts/s", record.formulas[0]) == (["hw/h100"], ("facts/r",))
    flop = kb.entries["flops/d"].record
    assert flop is not None
    assert formula_scope(kb, "flops/d", flop.formulas[0]) == (["hw/h100"], ())


def test_inherited_debt_reaches_the_graph_as_the_standing_its_badge_shows(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert kb.graph is not None and kb.evidence is not None
    assert kb.evidence.of("facts/s").status == INHERITED_DEBT
    assert kb.graph.graph.nodes["facts/s"]["evidence"] == NO_SOURCES  # it cites nothing: worse than its debt
    for record_id in kb.entries:
        assert kb.graph.graph.nodes[record_id]["evidence"] == kb.evidence.standing(record_id)

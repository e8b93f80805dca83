"""A ref written as a [[wikilink]], quoted or not, is told once at its place, with the field as it is written
without brackets; the record is checked as that reads (its scope, its claims), so nothing follows from the slip.
Likewise an item of a hardware scope that is no ref: the scope is the refs written beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbfixture import compile_kb, write_kb

ACME = 'id: hw/acme\nkind: accelerator\nvendor: Acme\nspecs:\n  memory_bandwidth: {value: "4 TB/s", basis: derived}\n'
SOURCE = "id: sources/s\nkind: source\ntitle: S\nmeasurements:\n"
SOURCE += "  - {id: m, quantity: q, value: 4 ms, basis: measured, where: T1}\n"
FLOP = """\
id: flops/decode
kind: flop
category: memory-bandwidth
description: Decode streams the weights.
affected_by_hardware: [hw/acme]
formulas:
  - id: decode-time
    expr: weight_bytes / hw.memory_bandwidth
    unit: ms
    inputs: {weight_bytes: 16 GB}
    expect:
      - hardware: hw/acme
        value: 5 ms
      - hardware: hw/acme
        measured: sources/s#m
"""
F = "records/flops/decode.yaml"
MISMATCH = ("claim-mismatch", 13, 16, None)


def _told(tmp_path: Path, flop: str) -> list[tuple[str, int, int, str | None]]:
    files = {F: flop, "records/hw/acme.yaml": ACME, "records/sources/s.yaml": SOURCE}
    kb = compile_kb(write_kb(tmp_path, files))
    found = [(d.code, d.line, d.column, d.hint) for d in kb.diagnostics if d.path == F and d.code != "orphan"]
    return [(code, line, column, hint if code != "claim-mismatch" else None) for code, line, column, hint in found]


@pytest.mark.parametrize(
    ("written", "column", "hint"),
    [
        ("affected_by_hardware: [[hw/acme]]", 24, "`affected_by_hardware: [hw/acme]`"),
        ('affected_by_hardware: "[[hw/acme]]"', 23, "`affected_by_hardware: [hw/acme]`"),
        ('affected_by_hardware: ["[[acme]]"]', 24, "`affected_by_hardware: [acme]`"),
    ],
)
def test_a_scope_written_as_a_wikilink_is_told_once_and_the_claims_are_still_checked(
    tmp_path: Path, written: str, column: int, hint: str
) -> None:
    told = _told(tmp_path, FLOP.replace("affected_by_hardware: [hw/acme]", written))
    assert told == [("invalid-value", 5, column, f"refs are written without brackets: {hint}"), MISMATCH]


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("measured: [[sources/s#m]]", "`measured: sources/s#m`"),
        ('measured: "[[s#m]]"', "`measured: s#m`"),
        ("measured: '[[sources/s#m|the table]]'", "`measured: sources/s#m`"),
    ],
)
def test_a_measurement_ref_written_as_a_wikilink_is_told_once(tmp_path: Path, written: str, hint: str) -> None:
    told = _told(tmp_path, FLOP.replace("measured: sources/s#m", written))
    assert told == [MISMATCH, ("invalid-value", 15, 19, f"refs are written without brackets: {hint}")]


def test_the_hint_applied_as_written_leaves_only_the_record_s_own_problem(tmp_path: Path) -> None:
    fixed = FLOP.replace("measured: sources/s#m", "measured: s#m")
    assert _told(tmp_path, fixed) == [MISMATCH]


def test_a_scope_with_an_item_that_is_no_ref_keeps_its_refs(tmp_path: Path) -> None:
    told = _told(tmp_path, FLOP.replace("affected_by_hardware: [hw/acme]", "affected_by_hardware: [hw/acme, 3]"))
    assert told == [("invalid-value", 5, 33, None), MISMATCH]


def test_a_formula_s_hardware_with_an_item_that_is_no_ref_keeps_its_refs(tmp_path: Path) -> None:
    own = FLOP.replace("affected_by_hardware: [hw/acme]\n", "").replace(
        "    inputs: {weight_bytes: 16 GB}\n", "    inputs: {weight_bytes: 16 GB}\n    hardware: [{x: 1}, hw/acme]\n"
    )
    assert _told(tmp_path, own) == [("invalid-value", 10, 16, None), MISMATCH]

"""A claim on an accelerator whose record, or a spec the claim needs, has errors is said to be unchecked, at its
`hardware`, naming the file to fix; fixed, the claim is checked."""

from __future__ import annotations

from pathlib import Path

from kbfixture import compile_kb, write_kb

FACT = """\
id: facts/f
kind: fact
statement: S.
formulas:
  - id: t
    expr: weights / hw.memory_bandwidth
    unit: ms
    inputs: {weights: 16 GB}
    hardware: [hw/acme]
    expect:
      - hardware: hw/acme
        value: 5 ms
"""
F = "records/facts/f.yaml"
ACME = 'id: hw/acme\nkind: accelerator\nvendor: Acme\nspecs:\n  memory_bandwidth: {value: "4 TB/s", basis: derived}\n'


def _told(tmp_path: Path, acme: str) -> list[tuple[str, int, int, str, str | None]]:
    kb = compile_kb(write_kb(tmp_path, {"records/facts/f.yaml": FACT, "records/hw/acme.yaml": acme}))
    return [(d.code, d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.path == F and d.code != "orphan"]


def test_a_claim_on_an_accelerator_that_is_checked_is_told_its_mismatch(tmp_path: Path) -> None:
    assert [code for code, *_ in _told(tmp_path, ACME)] == ["claim-mismatch"]


def test_a_claim_on_an_accelerator_whose_record_has_errors_is_told_it_is_not_checked(tmp_path: Path) -> None:
    assert _told(tmp_path, ACME.replace("specs:", "spec:")) == [
        (
            "claim-unchecked",
            11,
            19,
            "expect[0] is not checked: hw/acme has errors, reported in records/hw/acme.yaml",
            "fix the errors of records/hw/acme.yaml; the claim is checked then",
        )
    ]


def test_a_claim_on_an_accelerator_whose_spec_has_errors_names_the_spec(tmp_path: Path) -> None:
    assert [(code, line, message) for code, line, _, message, _ in _told(tmp_path, ACME.replace("TB/s", "TB/q"))] == [
        (
            "claim-unchecked",
            11,
            "expect[0] is not checked: hw/acme has errors in its spec `memory_bandwidth`, reported in "
            "records/hw/acme.yaml",
        )
    ]


def test_a_claim_on_an_accelerator_missing_only_its_vendor_is_still_checked(tmp_path: Path) -> None:
    assert [code for code, *_ in _told(tmp_path, ACME.replace("vendor: Acme\n", ""))] == ["claim-mismatch"]

"""Measurements on source records and claims measured against them: one test per code at its line, the graph
edge, evidence, and the rule as properties (agreement within rel_tol, disagreement past it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.formulas.results import CLAIM_DISAGREES, CLAIM_OK, CLAIM_UNCHECKED
from flopkb.pipeline.compile import KnowledgeBase
from kbfixture import compile_kb, located, write_kb

IGNORE = ("orphan",)
SOURCE = "records/sources/paper.yaml"
FACT = "records/facts/f.yaml"


def paper(measurements: str) -> str:
    """A source whose `measurements:` key is on line 4: the first measurement's `- id:` is on line 5."""
    return f"id: sources/paper\nkind: source\ntitle: A paper\nmeasurements:\n{measurements}"


B32 = """\
  - id: b32
    quantity: throughput of speculative decoding over plain decoding
    value: 1.32
    basis: measured
    where: Table 5
    conditions: {batch: 32, engine: "[[engines/e]]"}
  - id: sim
    quantity: simulated speedup
    value: 1.5
    basis: simulated
    where: Figure 21
"""
PINNED = "      - {where: {batch: 1}, value: 5}\n"
ENGINE = "id: engines/e\nkind: engine\ndescription: An engine.\n"


def claim(expect: str, expr: str = "1 + k / batch", unit: str = '"1"') -> str:
    """A fact whose first claim's first key is on line 10 (its second key on line 11)."""
    return (
        "id: facts/f\nkind: fact\nstatement: S.\nformulas:\n"
        f"  - id: gain\n    expr: {expr}\n    unit: {unit}\n    inputs: {{batch: [1, 32], k: 4}}\n    expect:\n"
        f"{expect}"
    )


def build(tmp_path: Path, expect: str, measurements: str = B32, **more: str) -> KnowledgeBase:
    files = {SOURCE: paper(measurements), FACT: claim(expect, **more), "records/engines/e.yaml": ENGINE}
    return compile_kb(write_kb(tmp_path, files))


def problems(kb: KnowledgeBase) -> list[tuple[str, str, int, int]]:
    return located(kb, IGNORE)


def the_claim(kb: KnowledgeBase, index: int = 0):  # type: ignore[no-untyped-def]
    return kb.formulas["facts/f"][0].claims[index]


# ---------------------------------------------------------------------------
# Agreement and disagreement


def test_a_measurement_within_the_default_tolerance_agrees(tmp_path: Path) -> None:
    # 1 + 4/32 = 1.125 against 1.32: 17% off, so a tolerance of 0.2 lets it pass
    kb = build(tmp_path, "      - {where: {batch: 32}, measured: sources/paper#b32, rel_tol: 0.2}\n")
    assert problems(kb) == []
    found = the_claim(kb)
    assert (found.status, found.stated, found.computed) == (CLAIM_OK, 1.32, 1.125)
    assert found.measurement is not None and found.measurement.where == "Table 5"


def test_a_disagreement_is_a_warning_at_the_measured_line_with_both_numbers(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - where: {batch: 32}\n        measured: sources/paper#b32\n")
    assert problems(kb) == [("measurement-disagrees", FACT, 11, 19)]
    diagnostic = kb.diagnostics[-1]
    assert diagnostic.severity.value == "warning"
    for part in ("1.125", "1.32", "10%", "sources/paper", "Table 5", "batch = 32"):
        assert part in diagnostic.message
    assert the_claim(kb).status == CLAIM_DISAGREES
    assert kb.formulas["facts/f"][0].disagreements == (the_claim(kb),)


def test_the_default_tolerance_of_a_measured_claim_is_ten_percent(tmp_path: Path) -> None:
    # 1 + 4/32 = 1.125: 1.22 is 8.4% above it, 1.26 is 12% above
    near = "  - {id: b32, quantity: q, value: 1.22, basis: measured, where: p. 3}\n"
    assert problems(build(tmp_path / "near", "      - {where: {batch: 32}, measured: sources/paper#b32}\n", near)) == []
    far = near.replace("1.22", "1.26")
    kb = build(tmp_path / "far", "      - {where: {batch: 32}, measured: sources/paper#b32}\n", far)
    assert [code for code, *_ in problems(kb)] == ["measurement-disagrees"]


def test_a_measurement_is_converted_to_the_formula_unit(tmp_path: Path) -> None:
    measured = "  - {id: gain, quantity: relative gain, value: 0.125, basis: measured, where: Table 1}\n"
    kb = build(
        tmp_path, "      - {where: {batch: 32}, measured: sources/paper#gain}\n", measured, expr="k / batch", unit="'%'"
    )
    assert problems(kb) == []
    assert (the_claim(kb).stated, the_claim(kb).computed) == (12.5, 12.5)


def test_a_measurement_of_another_dimension_is_a_unit_mismatch(tmp_path: Path) -> None:
    measured = '  - {id: t, quantity: step time, value: "12 ms", basis: measured, where: Table 2}\n'
    kb = build(tmp_path, "      - where: {batch: 32}\n        measured: sources/paper#t\n", measured)
    assert problems(kb) == [("unit-mismatch", FACT, 11, 19)]
    assert the_claim(kb).status == CLAIM_UNCHECKED


def test_a_simulated_measurement_is_marked(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - {where: {batch: 1}, measured: sources/paper#sim}\n")
    point = the_claim(kb).measurement
    assert point is not None and point.simulated and point.basis == "simulated"


# ---------------------------------------------------------------------------
# Shape of claims and measurements


def test_a_claim_with_both_value_and_measured_is_invalid(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - {where: {batch: 32}, value: 1.125, measured: sources/paper#b32}\n")
    assert [code for code, *_ in problems(kb)] == ["invalid-value"]


def test_a_claim_with_neither_value_nor_measured_is_invalid(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - {where: {batch: 32}}\n")
    assert [(code, line) for code, _, line, _ in problems(kb)] == [("invalid-value", 10)]


def test_measured_names_a_source_and_a_measurement(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - {where: {batch: 32}, measured: sources/paper}\n")
    assert [code for code, *_ in problems(kb)] == ["dangling-anchor"], "told with the source's measurements"


def test_a_measurement_basis_is_measured_or_simulated(tmp_path: Path) -> None:
    cited = "  - {id: x, quantity: q, value: 1, basis: cited, where: p. 1}\n"
    typo = "  - {id: x, quantity: q, value: 1, basis: measurd, where: p. 1}\n"
    assert [code for code, *_ in problems(build(tmp_path / "a", PINNED, cited))] == ["invalid-value"]
    assert [code for code, *_ in problems(build(tmp_path / "b", PINNED, typo))] == ["unknown-term"]


def test_a_measurement_needs_its_fields(tmp_path: Path) -> None:
    kb = build(tmp_path, PINNED, "  - {id: x, quantity: q, value: 1}\n")
    assert [(code, path, line) for code, path, line, _ in problems(kb)] == [("missing-field", SOURCE, 5)] * 2
    assert sorted(d.message.split("'")[1] for d in kb.diagnostics if d.code == "missing-field") == ["basis", "where"]


def test_a_measurement_value_that_is_no_quantity_is_invalid(tmp_path: Path) -> None:
    bad = '  - {id: x, quantity: q, value: "fast", basis: measured, where: p. 1}\n'
    kb = build(tmp_path, "      - {where: {batch: 32}, measured: sources/paper#x}\n", bad)
    assert [(code, path, line) for code, path, line, _ in problems(kb)] == [("invalid-value", SOURCE, 5)]
    assert the_claim(kb).status == CLAIM_UNCHECKED


def test_a_repeated_measurement_id_is_invalid(tmp_path: Path) -> None:
    twice = "  - {id: x, quantity: q, value: 1, basis: measured, where: p. 1}\n" * 2
    kb = build(tmp_path, PINNED, twice)
    assert [(code, path, line) for code, path, line, _ in problems(kb)] == [("invalid-value", SOURCE, 6)]


# ---------------------------------------------------------------------------
# Links


def test_a_measured_ref_to_no_source_is_dangling(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - where: {batch: 32}\n        measured: sources/nope#b32\n")
    assert problems(kb) == [("dangling-ref", FACT, 11, 19)]
    assert the_claim(kb).status == CLAIM_UNCHECKED


def test_a_measured_ref_to_no_measurement_is_a_dangling_anchor(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - where: {batch: 32}\n        measured: sources/paper#b64\n")
    assert problems(kb) == [("dangling-anchor", FACT, 11, 19)]
    assert "b32, sim" in (kb.diagnostics[-1].hint or "")


def test_a_measured_ref_to_another_kind_is_wrong(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - where: {batch: 32}\n        measured: engines/e#b32\n")
    assert problems(kb) == [("wrong-kind-ref", FACT, 11, 19)]


def test_prose_links_to_measurements_resolve(tmp_path: Path) -> None:
    files = {
        SOURCE: paper(B32),
        "records/engines/e.yaml": ENGINE + "notes: See [[sources/paper#b32]] and [[sources/paper#b64]].\n",
    }
    kb = compile_kb(write_kb(tmp_path, files))
    assert problems(kb) == [("dangling-anchor", "records/engines/e.yaml", 4, 38)]


def test_a_measured_claim_is_an_edge_to_its_source_and_the_source_is_no_orphan(tmp_path: Path) -> None:
    kb = build(tmp_path, "      - {where: {batch: 32}, measured: sources/paper#b32, rel_tol: 0.2}\n")
    assert kb.graph is not None
    assert ("facts/f", ("measured",)) in kb.graph.backlinks("sources/paper")
    assert "sources/paper" not in kb.graph.orphans()


def test_a_link_in_a_condition_is_checked(tmp_path: Path) -> None:
    kb = build(tmp_path, PINNED, B32.replace("[[engines/e]]", "[[engines/nope]]"))
    assert [(code, path) for code, path, *_ in problems(kb)] == [("dangling-link", SOURCE)]


# ---------------------------------------------------------------------------
# The rule, as properties


def _claim_at(measured: float, tolerance: float) -> tuple[str, float | None]:
    value = f"{measured!r}"
    source = f"  - {{id: m, quantity: q, value: {value}, basis: measured, where: p. 1}}\n"
    expect = f"      - {{where: {{batch: 32}}, measured: sources/paper#m, rel_tol: {tolerance!r}}}\n"
    with tempfile.TemporaryDirectory() as folder:
        kb = build(Path(folder), expect, source, expr="k * batch")
        found = the_claim(kb)
        return found.status, found.computed


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tolerance=st.floats(min_value=0.0, max_value=1.0))
def test_a_measurement_of_exactly_the_computed_value_never_disagrees(tolerance: float) -> None:
    assert _claim_at(128.0, tolerance) == (CLAIM_OK, 128.0)  # k * batch = 4 * 32


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tolerance=st.floats(min_value=0.0, max_value=1.0),
    beyond=st.floats(min_value=1e-3, max_value=10.0),
    up=st.booleans(),
)
def test_a_measurement_scaled_beyond_the_tolerance_always_disagrees(tolerance: float, beyond: float, up: bool) -> None:
    factor = 1 + (tolerance + beyond) if up else 1 - (tolerance + beyond)
    assert _claim_at(128.0 * factor, tolerance)[0] == CLAIM_DISAGREES


# ---------------------------------------------------------------------------
# Evidence


def test_evidence_marks_a_claim_on_a_simulated_measurement(tmp_path: Path) -> None:
    kb = build(
        tmp_path, "      - {where: {batch: 1}, value: 5}\n      - {where: {batch: 1}, measured: sources/paper#sim}\n"
    )
    assert kb.evidence is not None
    (found,) = kb.evidence.of("facts/f").simulated
    assert (found.claim, found.source, found.measurement, found.where) == (
        ("formulas", 0, "expect", 1),
        "sources/paper",
        "sim",
        "Figure 21",
    )
    assert kb.evidence.of("facts/f").status == "no-debt"


def test_evidence_lists_every_disagreement_with_the_records_resting_on_it(tmp_path: Path) -> None:
    borrower = "id: facts/g\nkind: fact\nstatement: S.\nformulas:\n  - {id: again, ref: facts/f#gain}\n"
    kb = build(tmp_path, "      - {where: {batch: 32}, measured: sources/paper#b32}\n")
    assert kb.evidence is not None and kb.evidence.disagreements[0].dependents == ()
    files = {SOURCE: paper(B32), FACT: claim("      - {where: {batch: 32}, measured: sources/paper#b32}\n")}
    files["records/facts/g.yaml"] = borrower
    files["records/engines/e.yaml"] = ENGINE
    kb = compile_kb(write_kb(tmp_path / "with-borrower", files))
    assert kb.evidence is not None
    (found,) = kb.evidence.disagreements
    assert (found.record, found.formula, found.claim.status, found.dependents) == (
        "facts/f",
        "gain",
        CLAIM_DISAGREES,
        ("facts/g",),
    )

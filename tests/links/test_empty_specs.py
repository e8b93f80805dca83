"""An accelerator whose specs are empty, as `flopkb new` leaves them, is a draft: told at `specs`, with the fix."""

from __future__ import annotations

from pathlib import Path

from flopkb.links.debt import DRAFT
from kbfixture import H100, compile_kb, write_kb

EMPTY = "id: hw/x\nkind: accelerator\nvendor: V\nspecs: {}\n"


def test_an_accelerator_with_empty_specs_is_a_draft_told_at_its_specs(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/hw/x.yaml": EMPTY}))
    told = [(d.code, d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.code != "orphan"]
    assert told == [
        (
            "placeholder",
            4,
            8,
            "specs is empty, with no figure for a formula to compute with: the record is a draft",
            "write its specs in place of `{}`, one parameter of schema/vocabulary.yaml a line, indented below "
            '`specs:`, e.g. `  memory_bandwidth: {value: "3.35 TB/s", basis: vendor-spec, sources: '
            "[sources/its-datasheet]}`",
        )
    ]
    assert kb.evidence is not None and kb.evidence.standing("hw/x") == DRAFT


def test_the_hint_applied_as_written_leaves_no_draft(tmp_path: Path) -> None:
    text = EMPTY.replace("specs: {}\n", 'specs:\n  memory_bandwidth: {value: "3.35 TB/s", basis: derived}\n')
    kb = compile_kb(write_kb(tmp_path, {"records/hw/x.yaml": text}))
    assert [d.code for d in kb.diagnostics if d.code != "orphan"] == []


def test_an_accelerator_with_specs_is_no_draft(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/hw/h100.yaml": H100}))
    assert [d.code for d in kb.diagnostics if d.code != "orphan"] == []

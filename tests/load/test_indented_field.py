"""A field indented into the block of text above it is told (`indented-field`), at its line, with the fix; prose is
never taken for one."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from flopkb.load.indented import indented_fields
from kbfixture import H100, compile_kb, compile_warm, write_kb
from random_kb import render
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

FLOP = """\
id: flops/x
kind: flop
category: memory-bandwidth
description: |  # prose
  When the KV cache fills, the engine evicts blocks; see [[flops/y]].
  formulas:
  - id: stall-time
    expr: kv_bytes / hw.memory_bandwidth
    unit: ms
    inputs:
      kv_bytes: 10 GB
    hardware: [hw/h100]
"""
OTHER = "id: flops/y\nkind: flop\ncategory: memory-bandwidth\ndescription: Linked from [[flops/x]].\n"


def test_a_field_indented_into_the_description_is_told_and_the_hint_fixes_it(tmp_path: Path) -> None:
    files = {"records/flops/x.yaml": FLOP, "records/flops/y.yaml": OTHER, "records/hw/h100.yaml": H100}
    kb = compile_kb(write_kb(tmp_path, files))
    assert [(d.code, d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.code != "orphan"] == [
        (
            "indented-field",
            6,
            3,
            "`formulas:` is indented into the text of description, so it and what it holds are read as that text: "
            "the record has no `formulas`",
            "unindent `formulas:` to the start of its line (line 6), so that it is a field of the record",
        )
    ]
    assert kb.formulas.get("flops/x", []) == []
    (tmp_path / "records/flops/x.yaml").write_text(FLOP.replace("  formulas:", "formulas:"))
    kb = compile_kb(tmp_path)
    assert [d.code for d in kb.diagnostics if d.code != "orphan"] == []
    assert [result.id for result in kb.formulas["flops/x"]] == ["stall-time"]


def test_the_warning_is_kept_on_a_warm_run(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/flops/x.yaml": FLOP, "records/flops/y.yaml": OTHER})
    runs = [compile_warm(root) for _ in range(2)]
    assert [[(d.line, d.column) for d in kb.diagnostics if d.code == "indented-field"] for kb in runs] == [[(6, 3)]] * 2


PROSE = [
    "When the cache fills, the engine evicts blocks.",
    "Limits of this estimate:",
    "- it ignores the prefill",
    "formulas: see the section below",
    "Formulas:",
    "tags:",
    "scales_with: batch_size",
    "  - an item of a nested list",
    "  key: in an indented line",
    "| a | table |",
]


@given(st.lists(st.sampled_from(PROSE), min_size=1, max_size=12), st.sampled_from(["|", ">", "|-"]))
def test_prose_is_never_taken_for_a_field(lines: list[str], indicator: str) -> None:
    lines = [PROSE[0], *lines]  # the first line sets the block's indentation
    text = "id: flops/x\nkind: flop\ndescription: " + indicator + "\n" + "".join(f"  {line}\n" for line in lines)
    told = indented_fields("records/flops/x.yaml", text, "flop")
    # the one reading that is a field: a bare field name, then a list item, a key below it or another field
    fields = [
        index + 4
        for index, line in enumerate(lines[:-1])
        if line == "tags:"
        and lines[index + 1].startswith(("- ", "  - ", "  key:", "tags:", "formulas:", "scales_with:"))
    ]
    assert [(d.line, d.column) for d in told] == [(line, 3) for line in fields]


def record_files(root: Path) -> list[Path]:
    return sorted((root / "records").rglob("*.yaml"))


def test_no_record_of_the_project_nor_of_a_generated_base_is_told(tmp_path: Path) -> None:
    generated = generate(tmp_path / "generated", 300)
    randomised = tmp_path / "random"
    rng = random.Random(16)
    for index in range(200):
        rel = f"records/flops/r{index}.yaml" if index % 2 else f"records/facts/r{index}.yaml"
        (randomised / rel).parent.mkdir(parents=True, exist_ok=True)
        (randomised / rel).write_text(render(rng, rel))
    files = [*record_files(REPO), *record_files(generated), *record_files(randomised)]
    assert len(files) > 500
    told = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:  # a random base's broken file
            continue
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            told.extend(indented_fields(str(path), text, data["kind"]))
    assert told == []

"""Every misspelt name of an expression is told in one run, each at its place with the name meant: misspelt
inputs and misspelt `hw.` parameters together (docs/cli.md: every problem of a record in one run)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.kb.knowledge_base import KnowledgeBase
from kbfixture import H100, compile_kb, write_kb

NAMES = {"kv_bytes": "kv_byte", "hw.memory_bandwidth": "hw.memory_bandwith", "hw.peak_bf16_dense": "hw.peak_bf16_dens"}
"""A name a formula may use, and a slip of it."""


def flop(expr: str, valid_when: str | None = None) -> str:
    regime = f"    valid_when: {valid_when}\n" if valid_when else ""
    return (
        "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: Streams.\nformulas:\n  - id: f\n"
        f"    expr: {expr}\n{regime}    unit: '1'\n    inputs: {{kv_bytes: 10 GB}}\n    hardware: [hw/h100]\n"
    )


def unknown(kb: KnowledgeBase) -> list[tuple[int, int, str, str | None]]:
    return [(d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.code == "formula-unknown-name"]


def test_a_misspelt_input_and_a_misspelt_parameter_are_told_together(tmp_path: Path) -> None:
    files = {"records/flops/x.yaml": flop("kv_byte / hw.memory_bandwith"), "records/hw/h100.yaml": H100}
    assert unknown(compile_kb(write_kb(tmp_path, files))) == [
        (7, 11, "`kv_byte` is neither an input of the formula nor hw.<parameter>", "did you mean kv_bytes?"),
        (
            7,
            21,
            "hw.memory_bandwith is not a hardware parameter (schema/vocabulary.yaml has no `memory_bandwith`)",
            "did you mean hw.memory_bandwidth?",
        ),
    ]


def test_the_misspelt_names_of_a_valid_when_are_told_together(tmp_path: Path) -> None:
    text = flop("kv_bytes / hw.memory_bandwidth", "kv_byte <= hw.memory_capacty")
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": text, "records/hw/h100.yaml": H100}))
    assert [(line, column, hint) for line, column, _, hint in unknown(kb)] == [
        (8, 17, "did you mean kv_bytes?"),
        (8, 28, "did you mean hw.memory_capacity?"),
    ]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(sorted(NAMES)), min_size=1, max_size=4, unique=True), st.data())
def test_every_slip_is_told_in_the_first_run_and_its_hint_fixes_it(meant: list[str], data: st.DataObject) -> None:
    slips = data.draw(st.lists(st.sampled_from(meant), min_size=1, unique=True))
    written = " * ".join(NAMES[name] if name in slips else name for name in meant)
    with tempfile.TemporaryDirectory() as root:
        path = Path(root, "records/flops/x.yaml")
        kb = compile_kb(write_kb(Path(root), {"records/flops/x.yaml": flop(written), "records/hw/h100.yaml": H100}))
        told = unknown(kb)
        places = [written.index(NAMES[name]) + 11 for name in meant if name in slips]  # `expr: ` ends at column 10
        assert [column for _, column, _, _ in told] == places
        for name in slips:  # each hint applied literally
            assert f"did you mean {name}?" in [hint for *_, hint in told]
            written = written.replace(NAMES[name], name)
        path.write_text(flop(written))
        assert unknown(compile_kb(Path(root))) == []

"""A key indented into the mapping above it is told as that, once, at its line; the rest is read as the fix reads."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.load.source import parse
from kbfixture import compile_kb, write_kb

UNLINKED = ("orphan",)

ACME = """\
id: hw/acme
kind: accelerator
vendor: Acme
specs:
  memory_bandwidth:
    value: "4.0 TB/s"
    basis: derived
    sources: [https://example.org/acme]
    peak_bf16_dense:
    value: "1000 TFLOP/s"
    basis: derived
    sources: [https://example.org/acme]
"""
FIXED = ACME.replace("    peak_bf16_dense:", "  peak_bf16_dense:")


def _told(text: str, tmp_path: Path) -> list[tuple[str, int, int, str, str | None]]:
    kb = compile_kb(write_kb(tmp_path, {"records/hw/acme.yaml": text}))
    return [(d.code, d.line, d.column, d.message, d.hint) for d in kb.diagnostics if d.code not in UNLINKED]


def test_a_spec_indented_into_the_spec_above_is_told_once_at_its_key(tmp_path: Path) -> None:
    assert _told(ACME, tmp_path) == [
        (
            "duplicate-key",
            9,
            5,
            "'peak_bf16_dense' is indented into 'memory_bandwidth': the keys below it (value, basis, sources) repeat "
            "that mapping's, and are read as peak_bf16_dense's",
            "indent it by 2 spaces, as 'memory_bandwidth' on line 5",
        )
    ]


def test_the_record_is_read_as_the_hint_fixes_it(tmp_path: Path) -> None:
    broken, _ = parse(ACME, "records/hw/acme.yaml")
    fixed, problems = parse(FIXED, "records/hw/acme.yaml")
    assert broken is not None and fixed is not None and problems == []
    assert broken.data == fixed.data
    assert broken.position(("specs", "peak_bf16_dense", "value")) == (10, 12)
    assert _told(FIXED, tmp_path) == []


def test_a_key_indented_in_and_given_a_wrong_value_is_told_at_its_value_too(tmp_path: Path) -> None:
    told = _told(ACME.replace("1000 TFLOP/s", "1000 TFLOPz"), tmp_path)
    assert [(code, line, column) for code, line, column, *_ in told] == [
        ("duplicate-key", 9, 5),
        ("invalid-value", 10, 12),
    ]


def test_a_key_repeated_with_no_key_indented_in_above_it_is_a_duplicate(tmp_path: Path) -> None:
    text = ACME.replace("    peak_bf16_dense:\n", "    note: n\n")
    assert [(code, line) for code, line, *_ in _told(text, tmp_path)] == [
        ("duplicate-key", 10),
        ("duplicate-key", 11),
        ("duplicate-key", 12),
    ]


_NAMES = st.lists(st.sampled_from(["value", "basis", "sources", "note"]), min_size=1, max_size=4, unique=True)


@settings(max_examples=40, deadline=None)
@given(above=_NAMES, below=_NAMES, indent=st.integers(1, 4))
def test_a_key_indented_in_reads_as_the_same_key_indented_as_the_hint_says(
    above: list[str], below: list[str], indent: int
) -> None:
    """Whatever keys the mapping above holds, a key indented into it whose keys below repeat some of them reads as
    the text indented as the hint says, and is the one problem told."""
    pad, inner = " " * indent, " " * (2 * indent)
    lines = ["specs:", f"{pad}memory_bandwidth:", *(f"{inner}{key}: x" for key in above)]
    indented = [*lines, f"{inner}peak_bf16_dense:", *(f"{inner}{key}: y" for key in below)]
    fixed = [*lines, f"{pad}peak_bf16_dense:", *(f"{inner}{key}: y" for key in below)]
    source, problems = parse("\n".join(indented) + "\n", "a.yaml")
    expected, none = parse("\n".join(fixed) + "\n", "a.yaml")
    assert source is not None and expected is not None and none == []
    if set(below) <= set(above):
        assert [(p.code, p.line, p.hint) for p in problems] == [
            ("duplicate-key", len(lines) + 1, f"indent it by {indent} spaces, as 'memory_bandwidth' on line 2")
        ]
        assert source.data == expected.data
    else:
        assert all("indented into" not in p.message for p in problems)


def test_a_spec_indented_into_the_spec_above_with_its_value_inline_is_told_where_it_belongs(tmp_path: Path) -> None:
    text = ACME.replace(
        '    peak_bf16_dense:\n    value: "1000 TFLOP/s"\n    basis: derived\n    sources: [https://example.org/acme]\n',
        "    peak_bf16_dense: {value: 1000 TFLOP/s, basis: derived}\n",
    )
    assert _told(text, tmp_path) == [
        (
            "unknown-field",
            9,
            5,
            "'peak_bf16_dense' is not a field of 'memory_bandwidth' but a key of specs, "
            "indented into 'memory_bandwidth'",
            "indent it by 2 spaces, as 'memory_bandwidth' on line 5",
        )
    ]
    assert _told(text.replace("    peak_bf16_dense:", "  peak_bf16_dense:"), tmp_path) == []


def test_an_unknown_key_that_the_mapping_one_level_up_has_already_is_only_unknown(tmp_path: Path) -> None:
    text = ACME.replace("    peak_bf16_dense:\n", "  peak_bf16_dense:\n").replace(
        "    basis: derived\n    sources", "    basis: derived\n    peak_bf16_dense: 1\n    sources", 1
    )
    assert [(code, line, message) for code, line, _, message, _ in _told(text, tmp_path)] == [
        ("unknown-field", 8, "'peak_bf16_dense' is not a field here")
    ]

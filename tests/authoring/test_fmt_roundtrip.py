"""`fmt`'s faster round trip (libyaml's events, one-copy fold marks, the collector paused) writes what ruamel.yaml's
own round trip writes, byte for byte."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import FoldedScalarString
from test_fmt import project_records, records, scrambled

from flopkb.authoring import fmt, roundtrip
from flopkb.authoring.fmt import format_bytes
from repo import REPO

PATH = "records/facts/big.yaml"
HEAD = "id: facts/big\nkind: fact\ntitle: A big record\nstatement: Some statement.\n"
ONLY_RUAMEL = {
    "an anchor and an alias": HEAD + "extra:\n  a: &one {x: 1}\n  b: *one\n",
    "a tag": HEAD + "extra: !!str 12\n",
    "a folded block": HEAD + "notes: >-\n  folded here\n  and here\n\n  a paragraph\n",
    "a %YAML directive": "%YAML 1.1\n---\n" + HEAD + "extra: yes\n",
    "a line separator in a string": HEAD + "notes: a\u2028b\n",
    "a syntax error": HEAD + "extra: [a\n",
}
"""What libyaml's events do not tell as ruamel.yaml's scanner does: such texts are read by ruamel.yaml's parser."""
GENERATED = {
    "long literal block": HEAD + "notes: |\n" + "".join(f"  Line {index} of the notes.\n" for index in range(300)),
    "wrapped string": HEAD + "notes:\n" + "".join(f"  Line {index} of the notes.\n" for index in range(300)),
    "quoted and wrapped": HEAD + 'notes: "a\n  b \\u00e9\n\n  c"\n',
    "commented tags": HEAD + "tags:\n" + "".join(f"  - tag-{index}  # why {index}\n" for index in range(300)),
    "claims": HEAD
    + "formulas:\n  - id: f\n    expr: a * b\n    unit: FLOP\n    inputs: {a: [1, 2, 3], b: 2}\n    expect:\n"
    + "".join(
        f'      # claim {index}\n      - value: "{index % 3 * 2 + 2} FLOP"\n        where: {{a: {index % 3 + 1}}}\n'
        for index in range(200)
    ),
    "commented formulas with lists of ids": HEAD
    + "formulas:\n"
    + "".join(
        f"  # formula {index}\n  - id: f{index}\n    expr: a\n    unit: FLOP\n    inputs: {{a: 1}}\n"
        + (
            f"    hardware:\n      - h{index}  # why\n      - g\n"
            if index % 2
            else f"    hardware:\n      - h{index}\n"
        )
        for index in range(100)
    ),
    "deep nesting": HEAD
    + "extra:\n"
    + "".join(f"{'  ' * (depth + 1)}k{depth}:\n" for depth in range(50))
    + "  " * 51
    + "leaf: 0x1F\n",
    "numbers and nulls": HEAD
    + "extra: {a: 1_000, b: 1.50e+3, c: ~, d: null, e: 0o17, f: .inf, g: 2026-12-05, h: yes}\n",
    "keys ruamel.yaml reads as one (refused in its words)": HEAD + "extra: {0o10: a, 8: b}\n",
    **ONLY_RUAMEL,
}


def formatting(text: str) -> tuple[str | None, str | None, list[str]]:
    """What `fmt` makes of a text: the new text, or why it refused to, or the problems that keep it from it."""
    outcome = format_bytes(text.encode("utf-8"), PATH)
    return outcome.text, outcome.refusal, [problem.message for problem in outcome.problems]


def by_ruamel_alone(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[str | None, str | None, list[str]]:
    """`formatting` as it was before libyaml read for ruamel.yaml: ruamel.yaml's scanner and parser read each text."""

    def own_parser(_: str) -> list[Any]:
        raise roundtrip._OwnParserNeeded

    with monkeypatch.context() as patched:
        patched.setattr(roundtrip, "_events", own_parser)
        return formatting(text)


def project_texts() -> list[str]:
    texts = [(REPO / rel).read_text(encoding="utf-8") for rel in project_records()]
    return texts + [scrambled(text, seed) for seed in (1, 2) for text in texts]


def test_the_projects_records_format_as_by_ruamel_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each record as it is, and scrambled: keys reordered, four-space indents, lists of ids in block style."""
    for text in project_texts():
        assert formatting(text) == by_ruamel_alone(monkeypatch, text)


@pytest.mark.parametrize("text", GENERATED.values(), ids=GENERATED.keys())
def test_generated_records_format_as_by_ruamel_alone(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    assert formatting(text) == by_ruamel_alone(monkeypatch, text)


@given(records())
def test_any_flop_record_formats_as_by_ruamel_alone(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert formatting(text) == by_ruamel_alone(monkeypatch, text)


@pytest.mark.parametrize("text", ONLY_RUAMEL.values(), ids=ONLY_RUAMEL.keys())
def test_what_libyaml_would_read_otherwise_is_left_to_ruamel(text: str) -> None:
    with pytest.raises(roundtrip._OwnParserNeeded):
        roundtrip._events(text)


@given(st.text(st.sampled_from("ab \n\t"), max_size=40), st.data())
def test_fold_marks_are_ruamels(text: str, data: st.DataObject) -> None:
    """ruamel.yaml's own `represent_folded_scalarstring` and `roundtrip._Representer` mark the same folds."""
    folded = FoldedScalarString(text)
    inside = [position for position in range(len(text) - 1) if text[position] == " "]
    folded.fold_pos = sorted(data.draw(st.sets(st.sampled_from(inside))) if inside else [])
    ours = roundtrip._Representer().represent_folded(folded)
    theirs = RoundTripRepresenter().represent_folded_scalarstring(folded)
    assert (ours.value, ours.style) == (theirs.value, theirs.style)


def test_the_collector_is_paused_while_formatting_and_restored_after(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    load = roundtrip.load

    def watched(text: str) -> Any:
        seen.append(gc.isenabled())
        return load(text)

    monkeypatch.setattr(roundtrip, "load", watched)
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            assert isinstance(fmt.format_text(GENERATED["claims"], PATH), str)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert seen == [False, False]


@given(
    st.dates().map(str)
    | st.builds(
        lambda year, month, day: f"{year:04d}-{month:02d}-{day:02d}",
        st.integers(0, 9999),
        st.integers(0, 99),
        st.integers(0, 99),
    )
    | st.sampled_from(["2026-13-45", "2026-02-30", "2026-1-1", "2026-01-01 25:61:00", "2026-01-01T00:00:00Z"])
)
def test_a_date_or_a_text_written_as_one_formats_as_text_keeps(date: str) -> None:
    """Records read dates as text, and `check` takes one that is no date (`2026-13-45`): `fmt` did not, it stopped
    with ruamel.yaml's `ValueError` and a traceback. A real date stays as written; one that is no date is quoted."""
    text = f"id: flops/a\nkind: flop\ncategory: kv-cache\ndescription: D.\nwhen: {date}\n"
    outcome = format_bytes(text.encode(), "records/flops/a.yaml")
    assert outcome.refusal is None and outcome.problems == [] and outcome.text is not None
    assert outcome.text.endswith((f"when: {date}\n", f"when: '{date}'\n"))

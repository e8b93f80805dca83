"""`fmt`'s faster round trip (libyaml's events, one-copy fold marks, the collector paused, the lean components of
`roundtrip._LEAN`) writes what ruamel.yaml's own round trip writes, byte for byte."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
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


SPELLINGS = (
    "1",
    "-2",
    "0x1F",
    "0o17",
    "1_000",
    "1.5",
    "1.50e+3",
    ".inf",
    "-.inf",
    ".nan",
    "~",
    "null",
    "true",
    "False",
    "yes",
    "2026-12-05",
    "2026-13-45",
    "'quoted'",
    "''",
    '"double \\u00e9"',
    "plain words",
    "h100",
    "a#b",
    "'a: b'",
    "flops/x",
)
LEAF = st.sampled_from(SPELLINGS)
KEY = st.sampled_from(["a", "b", "c", "value", "where", "n", "id", "1", "k-2"])
COMMENT = st.sampled_from(["", "", "  # why", "    # because: 2"])


def small(draw: st.DrawFn, depth: int) -> Any:
    """Nested small values: a leaf spelled as YAML, a flow list of leaves (a tuple), a mapping or a block list."""
    shape = draw(st.integers(0, 3 if depth < 3 else 1))
    if shape == 0:
        return draw(LEAF)
    if shape == 1:
        return tuple(draw(st.lists(LEAF, max_size=4)))
    if shape == 2:
        keys = draw(st.lists(KEY, min_size=1, max_size=4, unique=True))
        return {key: small(draw, depth + 1) for key in keys}
    return [small(draw, depth + 1) for _ in range(draw(st.integers(1, 4)))]


def lines(draw: st.DrawFn, value: Any, pad: str) -> list[str]:
    """`value`'s lines under a key or a dash, each with or without a comment."""
    if isinstance(value, dict):
        out = []
        for key, child in value.items():
            if isinstance(child, (dict, list)):
                out += [f"{pad}{key}:{draw(COMMENT)}", *lines(draw, child, pad + "  ")]
            else:
                out.append(f"{pad}{key}: {inline(child)}{draw(COMMENT)}")
        return out
    out = []
    for item in value:
        if isinstance(item, (dict, list)):
            nested = lines(draw, item, pad + "  ")
            out += [f"{pad}- {nested[0].lstrip()}", *nested[1:]]
        else:
            out.append(f"{pad}- {inline(item)}{draw(COMMENT)}")
    return out


def inline(value: str | tuple[str, ...]) -> str:
    return value if isinstance(value, str) else "[" + ", ".join(value) + "]"


@st.composite
def small_values(draw: st.DrawFn) -> str:
    """A fact whose `extra` holds many small values: numbers, nulls, dates, quoted and plain strings, flow lists, in
    nested mappings and lists, commented here and there."""
    extra = {f"x{index}": small(draw, 0) for index in range(draw(st.integers(1, 6)))}
    return HEAD + "extra:\n" + "\n".join(lines(draw, extra, "  ")) + "\n"


def by_ruamels_own_components(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[str | None, str | None, list[str]]:
    """`formatting` as it was before the lean components: ruamel.yaml's own composer, resolver, representer (with
    `fmt`'s fold marks), serializer and emitter."""
    with monkeypatch.context() as patched:
        patched.setattr(roundtrip, "_LEAN", {})
        return formatting(text)


Reference = Callable[[pytest.MonkeyPatch, str], tuple[str | None, str | None, list[str]]]
REFERENCES = pytest.mark.parametrize(
    "reference", [by_ruamel_alone, by_ruamels_own_components], ids=["ruamels-parser", "ruamels-components"]
)


def project_texts() -> list[str]:
    texts = [(REPO / rel).read_text(encoding="utf-8") for rel in project_records()]
    return texts + [scrambled(text, seed) for seed in (1, 2) for text in texts]


@REFERENCES
def test_the_projects_records_format_as_by_ruamel_alone(monkeypatch: pytest.MonkeyPatch, reference: Reference) -> None:
    """Each record as it is, and scrambled: keys reordered, four-space indents, lists of ids in block style."""
    for text in project_texts():
        assert formatting(text) == reference(monkeypatch, text)


@REFERENCES
@pytest.mark.parametrize("text", GENERATED.values(), ids=GENERATED.keys())
def test_generated_records_format_as_by_ruamel_alone(
    monkeypatch: pytest.MonkeyPatch, reference: Reference, text: str
) -> None:
    assert formatting(text) == reference(monkeypatch, text)


@REFERENCES
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records() | small_values())
def test_any_record_formats_as_by_ruamel_alone(reference: Reference, text: str) -> None:
    """Flop records in any key order, indentation and list style; facts of many small values (numbers, nulls, dates,
    quoted strings, flow lists) in nested mappings and lists; both commented here and there."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert formatting(text) == reference(monkeypatch, text)


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

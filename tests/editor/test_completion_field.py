"""Which field's value a completion is typed in is read from the YAML before the cursor, across lines and inside
quotes, in time linear in its length: a megabyte line answers."""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.editor.unit_names import unit_typed
from flopkb.editor.value_at import Typed, value_at

WORD = st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True)
ID = st.from_regex(r"[a-z][a-z0-9-]{0,5}(/[a-z0-9][a-z0-9-]{0,5}){0,2}", fullmatch=True)
VALUE = st.one_of(
    ID, st.lists(ID, min_size=1, max_size=5), st.lists(st.dictionaries(WORD, ID, min_size=1), min_size=1, max_size=3)
)
DOCUMENT = st.dictionaries(WORD, VALUE, min_size=1, max_size=5)


def values(node: yaml.Node, field: str | None = None) -> list[tuple[str, yaml.ScalarNode]]:
    """(field, scalar) of every scalar that is a mapping's value or an item of a list that is one."""
    if isinstance(node, yaml.MappingNode):
        return [pair for key, value in node.value for pair in values(value, key.value)]
    if isinstance(node, yaml.SequenceNode):
        return [pair for item in node.value for pair in values(item, field)]
    assert isinstance(node, yaml.ScalarNode)
    return [(field, node)] if field is not None else []


@settings(max_examples=300, deadline=None)
@given(
    document=DOCUMENT,
    flow=st.sampled_from([True, False, None]),
    style=st.sampled_from([None, '"', "'"]),
    width=st.integers(min_value=10, max_value=80),
    data=st.data(),
)
def test_the_field_and_what_is_typed_are_those_yaml_reads_at_any_point_of_any_value(
    document: dict[str, Any], flow: bool | None, style: str | None, width: int, data: st.DataObject
) -> None:
    """A document written in flow or block style, lists folded over lines, values plain or quoted: cut anywhere in a
    value (inside its quotes), what is before the cut is that value's field, and the value as typed so far."""
    text = yaml.safe_dump(document, default_flow_style=flow, default_style=style, width=width, sort_keys=False)
    field, scalar = data.draw(st.sampled_from(values(yaml.compose(text))))
    quote = text[scalar.start_mark.index] if scalar.style in ('"', "'") else ""
    start = scalar.start_mark.index + len(quote)
    cut = data.draw(st.integers(min_value=start, max_value=scalar.end_mark.index - len(quote)))
    assert value_at(text[:cut]) == Typed(field, text[start:cut], quote)


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ("kind: flop\nhardware: [hw/a,\n  hw/b, h", Typed("hardware", "h", "")),
        ("hardware: [hw/a,  # the first\n  ", Typed("hardware", "", "")),
        ("formulas:\n  - {id: f,\n     ref: facts/r", Typed("ref", "facts/r", "")),
        ("hardware:\n  - hw/a\n  -  h", Typed("hardware", "h", "")),
        ('sources: ["sources/a", "sou', Typed("sources", "sou", '"')),
        ("statement: 'it''s [[ri", Typed("statement", "it''s [[ri", "'")),
        ('statement: "see\n  [[ri', Typed("statement", "see\n  [[ri", '"')),
        ("hardware: [\nformulas:\n  - id: f\n    ref: fa", Typed("ref", "fa", "")),  # a list not closed above
        ("\ufeffid: x\nhardware: [hw/a,\n  h", Typed("hardware", "h", "")),  # after a byte order mark
        ('\ufeffhardware: "h', Typed("hardware", "h", '"')),
        ("kind: flop\r\nhardware: [hw/a,\r\n  h", Typed("hardware", "h", "")),
        ("kind: flop\nhard", Typed(None, "hard", "")),  # a key
        ("hardware: [[hw/a", Typed(None, "hw/a", "")),  # a list of lists
        ('hardware: "hw/a" ', None),  # after the closing quote
        ("hardware: hw/a # h", None),
        ("statement: |\n  see [[ri", None),
        ("hardware:\n", Typed(None, "", "")),  # a key, at the start of its line
    ],
)
def test_the_value_typed_is_read_as_yaml_reads_it(before: str, expected: Typed | None) -> None:
    assert value_at(before) == expected


@pytest.mark.parametrize(
    "text",
    [
        "notes: [" + "a" * 1_000_000 + "]",
        "notes: [" + "a" * 1_000_000,
        "a:" * 500_000 + "!",
        "k: [" + "a, " * 300_000 + "]x",
        "k: [" + "a, " * 300_000 + "\n  a",
        "value: 4 " + "T*" * 250_000 + "!",
        "x " * 500_000 + "hw." + "a" * 100,
        "notes: " + "[" * 1_000_000,
    ],
    ids=[
        "closed-list",
        "open-list",
        "many-keys",
        "many-items",
        "many-items-over-lines",
        "unit-product",
        "many-words",
        "deep",
    ],
)
def test_a_megabyte_text_is_read_at_once(text: str) -> None:
    began = time.process_time()  # the CPU this takes, whatever else the machine runs
    value = value_at(text)
    unit_typed(text.rsplit("\n", 1)[-1], (value.field, value.typed) if value and value.field else None)
    assert time.process_time() - began < 2  # a former regular expression took hours on the first line

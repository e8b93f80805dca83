"""Which field a completion is in is read from the line in time linear in its length: a megabyte token answers."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.editor.completion import _field_of
from flopkb.editor.unit_names import unit_typed

QUADRATIC = re.compile(r"^\s*(?:-\s+)?\{?.*?\b(\w+):\s*(?:\[[^\]]*?)?([^\s,\[\]{}:]*)$")
"""The expression the field was read with before: right, but quadratic on a long token (20 s at 60,000 characters)."""

LINE = st.text(alphabet=st.sampled_from([*"ab_1: -[]{},#\t", "é", "𝄞"]), max_size=30)


@settings(max_examples=3000)
@given(LINE)
def test_the_field_is_the_one_the_former_expression_found(line: str) -> None:
    former = QUADRATIC.match(line)
    expected = (former.group(1), former.group(2)) if former is not None else None
    assert _field_of([line], 0, line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "notes: [" + "a" * 1_000_000 + "]",
        "notes: [" + "a" * 1_000_000,
        "a:" * 500_000 + "!",
        "k: [" + "a, " * 300_000 + "]x",
        "value: 4 " + "T*" * 250_000 + "!",
        "x " * 500_000 + "hw." + "a" * 100,
    ],
    ids=["closed-list", "open-list", "many-keys", "many-items", "unit-product", "many-words"],
)
def test_a_megabyte_line_is_read_at_once(line: str) -> None:
    began = time.perf_counter()
    field = _field_of([line], 0, line)
    unit_typed(line, field)
    assert time.perf_counter() - began < 2  # the former expression took hours on the first line

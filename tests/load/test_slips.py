"""The YAML slips authors make most, told in their words (`flopkb.load.slips`): at the line of the slip, whatever
line libyaml stopped at, and never a slip that is not the one in the way."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.load.slips import explained
from flopkb.load.source import _holds, parse
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_slips import TOLD, slips_of, told_near, with_slip

RECORDS = {
    path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8") for path in REPO.glob("records/**/*.yaml")
}
SLIPPED = list(slips_of(RECORDS))
"""Every line of the project's records that can take each slip (`benchmarks/bench_slips.py` counts what each
gives)."""


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SLIPPED))
def test_a_slip_told_in_an_authors_words_is_told_at_its_line(slipped: tuple[str, int, str]) -> None:
    rel, number, kind = slipped
    source, diagnostics = parse(with_slip(RECORDS[rel], number, kind), rel)
    syntax = [diagnostic for diagnostic in diagnostics if diagnostic.code == "yaml-syntax"]
    if source is not None or not syntax:
        return  # the slip still parses (a plain value may hold ':', an indent may be another valid layout)
    told = syntax[0]
    if any(words in told.message for words in TOLD):
        assert abs(told.line - number) <= told_near(kind), told
        assert told.hint


@pytest.mark.parametrize(
    ("text", "line", "column", "message", "hint"),
    [
        ("id: x\nhomepage https://x.org\nkind: engine\n", 2, 1, "a ':' is missing after 'homepage'", None),
        (
            "id: x\ntitle: llama.cpp: the engine\nkind: engine\n",
            2,
            8,
            "': ' inside a value that is not quoted starts a key of its own",
            'quote the value: `title: "llama.cpp: the engine"`',
        ),
        (
            'id: x\nfeatures:\n  - "a\n  - "b"\nkind: engine\n',
            3,
            5,
            'the value on line 3 opens a quote (") that does not close on that line',
            'end the value with "',
        ),
        ("id: x\ntags: [a, b\nkind: engine\n", 2, 7, "the list that '[' opens on line 2 is not closed", None),
        (
            "id: x\ndescription: |\n  one\ntwo three\n  four\nkind: engine\n",
            4,
            1,
            "line 4 is indented by 0 spaces, the line above by 2",
            "indent it by 2 spaces, as the line above",
        ),
        (
            "id: x\nspecs:\n  a:\n    value: 1\n    sources:\n      - u\n     note: |\n      t\nkind: accelerator\n",
            7,
            1,
            "line 7 is indented by 5 spaces, the key on line 5 by 4",
            "indent it by 4 spaces, as line 5",
        ),
        (
            "id: x\ncategory:memory\nkind: flop\n",
            2,
            10,
            "a space is missing after 'category:'",
            "write `category: memory`",
        ),
        (
            'id: x\nformulas:\n  - id: a\n    expr: "1"\n  -id: b\n    expr: "2"\nkind: fact\n',
            5,
            3,
            "a space is missing after '-', which starts an item of a list",
            "write `- id: b`",
        ),
        (
            "id: x\ntitle: 'the model's cost'\nkind: fact\n",
            2,
            18,
            "a ' inside a value quoted with ' ends the value there",
            "write each ' inside it twice: `title: 'the model''s cost'`, or quote the value with \" instead",
        ),
        (
            'id: x\ntitle: "open\n' + "".join(f"k{index}: v\n" for index in range(40)) + 'notes: "closed"\n',
            2,
            8,
            'the value on line 2 opens a quote (") that does not close on that line',
            'end the value with "',
        ),
    ],
)
def test_each_slip_is_told_where_it_is(text: str, line: int, column: int, message: str, hint: str | None) -> None:
    source, diagnostics = parse(text, "x.yaml")
    assert source is None
    assert [(d.code, d.line, d.column, d.message) for d in diagnostics] == [("yaml-syntax", line, column, message)]
    assert hint is None or diagnostics[0].hint == hint


def test_a_slip_that_no_guess_repairs_keeps_libyamls_message() -> None:
    text = "id: x\nkind: engine\n? [a\n"
    assert explained(text, 3, _holds) is None
    _, diagnostics = parse(text, "x.yaml")
    assert not any(words in diagnostics[0].message for words in TOLD)


BASE = "id: x\nkind: fact\ntitle: T\n"


@pytest.mark.parametrize(
    "text",
    [
        BASE + "summary: a\nfoo x" + " " * 40_000 + "y z: q\n",
        BASE + "summary: a" + " " * 40_000 + "b: c\nfoo: [\n",
    ],
)
def test_a_long_run_of_spaces_is_read_once(text: str) -> None:
    """Guessing reads a line in one pass: a run of 40,000 spaces in a broken line once took a minute."""
    _, diagnostics = parse(text, "x.yaml")
    assert [d.code for d in diagnostics] == ["yaml-syntax"]


@pytest.mark.parametrize(
    ("wrapped", "hint"),
    [
        (
            "summary: this is a long\n  text that continues: here\n",
            'quote the value, from line 4 to line 5: `summary: "this is a long …"`',
        ),
        ("summary: a\n  b\n  c: d\n  e\n", 'quote the value, from line 4 to line 7: `summary: "a …"`'),
    ],
)
def test_a_wrapped_line_of_text_with_a_colon_is_told_to_quote_the_value_never_to_become_a_key(
    wrapped: str, hint: str
) -> None:
    _, diagnostics = parse(BASE + wrapped + "notes: x\n", "x.yaml")
    assert [(d.message, d.hint) for d in diagnostics] == [
        ("': ' inside a value that is not quoted starts a key of its own", hint)
    ]


def test_lines_are_the_files_own_where_a_value_holds_a_lone_carriage_return() -> None:
    text = 'id: x\nkind: fact\ntitle: "a\rb\rc\rd"\nnotes: |\n  text\n  more\n summary: x\nfoo: 1\n'
    _, diagnostics = parse(text, "x.yaml")
    assert (diagnostics[0].line, diagnostics[0].hint) == (7, "indent it by 0 spaces, as the line below")


def test_a_slip_above_a_tab_is_told_first() -> None:
    _, diagnostics = parse(BASE + "homepage https://x.org\nnotes:\n\t- a\n", "x.yaml")
    assert [(d.line, d.message) for d in diagnostics] == [(4, "a ':' is missing after 'homepage'")]


def test_a_hash_in_a_value_is_no_comment_in_a_hint() -> None:
    _, diagnostics = parse(BASE + "source x#y  # a note\n", "x.yaml")
    assert diagnostics[0].hint == "write `source: x#y`"


CLAIM = BASE + "claims:\n  - id: c\n"


@pytest.mark.parametrize(
    ("text", "line", "message", "hint"),
    [
        (
            CLAIM + "    expect:\n      - where: {a: 1}\n         value: 2\n      - where: {a: 2}\n        value: 3\n",
            8,
            "line 8 is indented by 9 spaces, the key 'where' on the line above by 8",
            "indent it by 8 spaces, as 'where' on the line above",
        ),
        (
            BASE + "measurements:\n - id: m\n    value: 1\n  - id: n\n    value: 2\n",
            5,
            "line 5 is indented by 1 space, the line below by 4",
            "indent it by 2 spaces, so that what follows '- ' lines up with the line below",
        ),
        (
            BASE + "measurements:\n  - id: m\n    conditions:\n      gpus: 8\n   - id: n\n    value: 2\n",
            8,
            "line 8 is indented by 3 spaces, the item on line 5 by 2",
            "indent it by 2 spaces, as line 5",
        ),
        (
            CLAIM + "    inputs:\n      k: 1\n     expect:\n      - value: 2\n",
            8,
            "line 8 is indented by 5 spaces, the key on line 6 by 4",
            "indent it by 4 spaces, as line 6",
        ),
        (
            CLAIM + "    inputs:\n      batch: 1\n       hardware: tpu\n",
            8,
            "line 8 is indented by 7 spaces, the line above by 6",
            "indent it by 6 spaces, as the line above",
        ),
        (
            CLAIM + "    inputs:\n       k: 1\n      n: 2\n    unit: x\n",
            7,
            "line 7 is indented by 7 spaces, the line below by 6",
            "indent it by 6 spaces, as the line below",
        ),
    ],
    ids=[
        "an item's key",
        "a list's first item",
        "an item after a deeper block",
        "an enclosing key",
        "one space off",
        "a block's first line",
    ],
)
def test_a_line_set_off_a_level_open_around_it_is_told_that_level(
    text: str, line: int, message: str, hint: str
) -> None:
    """An item's key is a level (`- where:` opens one at `where`); an item lines up its lines below; a key is set
    one space off its enclosing key's siblings rather than read as a wrapped value with ': ' in it; a block's first
    line set one space deeper is told, not the second, where libyaml stopped."""
    _, diagnostics = parse(text, "x.yaml")
    assert [(d.line, d.message, d.hint) for d in diagnostics] == [(line, message, hint)]


def test_a_key_that_opens_a_block_is_never_set_as_deep_as_its_block() -> None:
    """Set as deep as its neighbours, `tdp:` would parse as a key with no value beside its own `value`."""
    _, diagnostics = parse("id: x\nkind: accelerator\nspecs:\n  a:\n    value: 1\n   tdp:\n    value: 2\n", "x.yaml")
    assert [(d.line, d.hint) for d in diagnostics] == [(6, "indent it by 2 spaces, as line 4")]


@pytest.mark.parametrize(
    ("siblings", "hint"),
    [
        ("workarounds:\n   - |\n    a\n  - |\n    b\n", "so that what follows '- ' lines up with the line below"),
        ("specs:\n a:\n    value: 1\n  b:\n    value: 2\n", "2 less than the block below it"),
    ],
)
def test_the_first_of_two_siblings_set_off_is_told_never_the_second(siblings: str, hint: str) -> None:
    """libyaml stops at the second, which set as deep as the first parses too: a depth of an odd number of spaces is
    no level to line up with, and the first is set over its lines below."""
    _, diagnostics = parse(BASE + siblings, "x.yaml")
    assert [(d.line, d.hint) for d in diagnostics] == [(5, f"indent it by 2 spaces, {hint}")]


def test_the_last_item_set_off_is_told_to_line_up_with_the_item_above() -> None:
    _, diagnostics = parse(BASE + "authors:\n  - a\n  - b\n - c\nyear: 2024\n", "x.yaml")
    assert [(d.line, d.hint) for d in diagnostics] == [(7, "indent it by 2 spaces, as the line above")]

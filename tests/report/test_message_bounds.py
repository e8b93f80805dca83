"""Every message and hint stays bounded whatever a record holds: a quote of record text is cut at `QUOTE` characters
and says how many it leaves out, the diagnostic's place is unchanged, and a short text is quoted as before."""

from __future__ import annotations

import json
import string
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.cli import main
from flopkb.editor.actions import quick_fixes
from flopkb.editor.diagnostics import SOURCE
from flopkb.report.cut import MESSAGE, QUOTE, cut
from flopkb.report.diagnostics import make
from flopkb.report.hints import Suggestion
from kbfixture import accelerator, write_kb

BOUND = 1_000
"""What a user reads of one diagnostic, at most, in characters of its message and of its hint: a message quotes at
most three pieces of record text, each cut at `QUOTE` (200) characters, among fewer than 400 characters of its own
words. Under `MESSAGE`, the bound of the last resort: a quote that were not cut would be cut there, and fail this."""

H100 = accelerator("hw/h100", memory_bandwidth="3.35 TB/s")


def flop(
    more: str = "", description: str = "D.", kind: str = "flop", category: str = "arithmetic-intensity"
) -> dict[str, str]:
    """A flop record whose `description` is on line 4, after the fields `more`."""
    text = f"id: flops/x\nkind: {kind}\ncategory: {category}\n{more}description: {description}\n"
    return {"records/flops/x.yaml": text}


def formula(lines: str, **more: str) -> dict[str, str]:
    """A fact with one formula `g`, its fields `lines` (each indented by four spaces), and the records `more`."""
    return {"records/facts/f.yaml": f"id: facts/f\nkind: fact\nstatement: S.\nformulas:\n  - id: g\n{lines}", **more}


def measured(where: str) -> dict[str, str]:
    """A source's measurement taken `where`, and a claim that disagrees with it."""
    source = (
        "id: sources/p\nkind: source\ntitle: P\nmeasurements:\n"
        f"  - {{id: m, quantity: q, value: 1.5, basis: measured, where: {where}}}\n"
    )
    claim = "    expect:\n      - {where: {k: 1}, measured: sources/p#m}\n"
    return formula(
        f"    expr: k\n    unit: '1'\n    inputs: {{k: [1, 2]}}\n{claim}", **{"records/sources/p.yaml": source}
    )


@dataclass(frozen=True)
class Place:
    """A place of a record a message quotes: the files with `text` there, and the longest `text` that still makes
    the same diagnostics (YAML reads a key of at most 1,024 characters, an expression has at most 2,000, a quantity
    200), so that only the length of the quote changes."""

    name: str
    files: Callable[[str], dict[str, str]]
    longest: int = 100_000


PLACES = [
    Place("prose link target", lambda x: flop(description=f"See [[{x}]].")),
    Place("prose link label", lambda x: flop(description=f"See [[nowhere|{x}]].")),
    Place("split link", lambda x: flop(description=f"|\n  See [[{x}\n  ]] there.")),
    Place("typed ref value", lambda x: flop(f"affected_by_hardware: [{x}]\n")),
    Place("typed ref in brackets", lambda x: flop(f'affected_by_hardware: ["[[{x}]]"]\n')),
    Place("alias", lambda x: flop(f"aliases: [A{x}]\n")),
    Place("anchor", lambda x: {**flop(description=f"See [[hw/h100#{x}]]."), "records/hw/h100.yaml": H100}),
    Place("vocabulary term", lambda x: flop(category=x)),
    Place("kind", lambda x: flop(kind=x)),
    Place("unit", lambda x: {"records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth=f"3 {x}")}, 190),
    Place("unknown field", lambda x: flop(f"{x}: 1\n"), 1_000),
    Place("repeated key", lambda x: flop(f"{x}: 1\n{x}: 2\n"), 1_000),
    Place("erratum field", lambda x: flop(f"errata:\n  - {{field: {x}, quote: D, correction: C., basis: derived}}\n")),
    Place(
        "tagged value",
        lambda x: {"records/sources/p.yaml": f"id: sources/p\nkind: source\ntitle: P\nyear: !!int {x}\n"},
    ),
    Place("url", lambda x: {"records/sources/p.yaml": f"id: sources/p\nkind: source\ntitle: P\nurl: {x}\n"}),
    Place("scales_with factor", lambda x: flop(f"scales_with:\n  - {{effect: E, factor: a {x}}}\n")),
    Place(
        "hw parameter name",
        lambda x: formula(
            f"    unit: '1'\n    hardware: [hw/h100]\n    expr: hw.{x}\n", **{"records/hw/h100.yaml": H100}
        ),
        1_990,
    ),
    Place("formula expression", lambda x: formula(f"    unit: '1'\n    expr: 1 + {x}\n"), 1_990),
    Place("formula function", lambda x: formula(f"    unit: '1'\n    expr: 1 + {x}(2)\n"), 1_990),
    Place(
        "formula input",
        lambda x: formula(f"    unit: '1'\n    expr: {x}\n    inputs:\n      {x}:\n        - 1\n        - 2 s\n"),
        1_000,
    ),
    Place(
        "claim's where",
        lambda x: formula(
            f"    unit: '1'\n    expr: k\n    inputs: {{k: [1, 2]}}\n"
            f"    expect:\n      - value: 2\n        where: {{{x}: 1}}\n"
        ),
        1_000,
    ),
    Place("measurement's where", measured),
    Place(
        "formula id", lambda x: formula(f"    expr: '1'\n  - id: g{x}\n    expr: '1'\n  - id: g{x}\n    expr: '1'\n")
    ),
]


def diagnostics(files: dict[str, str]) -> list[dict[str, object]]:
    """What `flopkb check --format json` reports on a base of `files`, but orphans."""
    with tempfile.TemporaryDirectory() as folder:
        root = write_kb(Path(folder), files)
        result = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json", "--no-cache"])
    found = json.loads(result.output)["diagnostics"]
    return [d for d in found if d["code"] != "orphan"]


def places(found: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted((d["code"], d["path"], d["line"], d["column"]) for d in found)


@pytest.mark.parametrize("place", PLACES, ids=lambda place: place.name)
@settings(max_examples=10, deadline=None)
@given(piece=st.text(string.ascii_lowercase, min_size=1, max_size=6), data=st.data())
def test_a_long_text_anywhere_gives_bounded_messages_at_the_same_places(
    place: Place, piece: str, data: st.DataObject
) -> None:
    size = data.draw(st.integers(min(QUOTE + 1, place.longest), place.longest) | st.just(place.longest), label="size")
    short = "zq" + piece  # no id, kind, field, term or function begins so: the text means nothing, long or short
    long = (short * size)[:size]
    found = diagnostics(place.files(long))
    assert found, "the place makes a diagnostic"
    assert places(found) == places(diagnostics(place.files(short)))
    for diagnostic in found:
        assert len(str(diagnostic["message"])) <= BOUND < MESSAGE, diagnostic
        assert len(str(diagnostic.get("hint", ""))) <= BOUND, diagnostic


def test_a_dangling_link_quotes_its_first_characters_and_says_how_many_are_cut() -> None:
    target = "a" * 100_000
    [found] = diagnostics(flop(description=f"See [[{target}]]."))
    assert found["message"] == f"[[{'a' * 171}… (99,831 more characters) resolves to no record"
    assert (found["code"], found["line"], found["column"]) == ("dangling-link", 4, 18)
    assert len(str(found["message"])) <= QUOTE + len(" resolves to no record")


def test_a_short_link_is_quoted_whole() -> None:
    [found] = diagnostics(flop(description="See [[nowhere]]."))
    assert found["message"] == "[[nowhere]] resolves to no record"


@given(st.text(max_size=300), st.integers(30, 250))
def test_a_cut_keeps_a_short_text_and_says_what_it_leaves_out_of_a_long_one(text: str, limit: int) -> None:
    shown = cut(text, limit)
    assert len(shown) <= limit
    if len(text) <= limit:
        assert shown == text
    else:
        kept, _, told = shown.rpartition("… (")
        assert text.startswith(kept) and told == f"{len(text) - len(kept):,} more characters)"


def test_a_diagnostic_is_bounded_and_its_fixes_are_kept() -> None:
    name = "n" * 5_000
    made = make("dangling-ref", "records/x.yaml", 3, 7, "m" * 5_000, Suggestion(f"did you mean {name}?", "w", [name]))
    assert len(made.message) == MESSAGE and made.message.endswith("… (3,025 more characters)")
    assert isinstance(made.hint, Suggestion) and len(made.hint) == MESSAGE
    assert (made.hint.written, made.hint.offered) == ("w", (name,))
    assert (made.line, made.column) == (3, 7)


def test_a_quick_fix_says_what_it_writes_in_bounded_words_and_writes_it_whole() -> None:
    written, name = "example.org/" + "p" * 100_000, "https://example.org/" + "p" * 100_000
    where = types.Range(start=types.Position(line=3, character=10), end=types.Position(line=3, character=100_022))
    data = {"range": [3, 10, 3, 100_022], "offered": [name], "written": written}
    text = "\n\n\nsources: [" + written + "]\n"
    diagnostic = types.Diagnostic(range=where, message="m", source=SOURCE, data=data)
    [action] = quick_fixes(
        "file:///x.yaml", [diagnostic], text, 1, types.PositionEncodingKind.Utf16, lambda _, told: told
    )
    assert action.title == f"Write '{cut(name)}' for '{cut(written)}'" and len(action.title) <= 2 * QUOTE + 20
    assert action.edit is not None and action.edit.document_changes is not None
    [change] = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit) and change.edits[0].new_text == name

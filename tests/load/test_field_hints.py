"""An unknown key's "did you mean": never a field its mapping holds already (the fix, applied, would repeat the key)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from flopkb.report.hints import Suggestion
from kbfixture import compile_kb, write_kb
from repo import REPO

VOCABULARY = (REPO / "schema" / "vocabulary.yaml").read_text(encoding="utf-8")
RECORDS = {path.relative_to(REPO).as_posix(): path.read_text("utf-8") for path in REPO.glob("records/**/*.yaml")}
KEYED = sorted((rel, key) for rel, text in RECORDS.items() for key in YAML(typ="safe").load(text) if len(key) > 3)
"""Each top-level key of each of the project's records."""


def _unknown_field_hint(text: str) -> tuple[int, str | None]:
    """The line and hint of the one `unknown-field` a record at records/facts/t.yaml gets."""
    with tempfile.TemporaryDirectory() as folder:
        kb = compile_kb(write_kb(Path(folder), {"records/facts/t.yaml": text}, vocabulary=VOCABULARY))
    [found] = [d for d in kb.diagnostics if d.code == "unknown-field"]
    return found.line, found.hint


def test_a_misspelling_of_a_field_given_already_is_told_where_that_field_is() -> None:
    line, hint = _unknown_field_hint('id: facts/t\nkind: fact\ntitle: "A"\ntitel: "B"\nstatement: see [[facts/t]]\n')
    assert line == 4
    assert hint == "did you mean title? It is given already, on line 3: keep one of the two"
    assert not isinstance(hint, Suggestion)  # no quick fix: written over `titel`, it would repeat `title`


def test_a_misspelling_of_a_field_not_given_is_offered_as_its_fix() -> None:
    _, hint = _unknown_field_hint('id: facts/t\nkind: fact\ntitel: "B"\nstatement: see [[facts/t]]\n')
    assert isinstance(hint, Suggestion)
    assert hint.offered == ("title",)
    assert hint == "did you mean title?"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(st.sampled_from(KEYED), st.data())
def test_the_fix_of_an_unknown_key_never_names_a_key_its_mapping_holds(
    keyed: tuple[str, str], data: st.DataObject
) -> None:
    rel, key = keyed
    at = data.draw(st.integers(0, len(key) - 1), label="dropped character")
    misspelt = key[:at] + key[at + 1 :]
    text = RECORDS[rel].replace(rel.removeprefix("records/").removesuffix(".yaml"), "facts/t", 1)
    given_keys = set(YAML(typ="safe").load(text))
    if misspelt in given_keys:
        return
    _, hint = _unknown_field_hint(text.rstrip("\n") + f"\n{misspelt}: x\n")
    if isinstance(hint, Suggestion):
        assert not set(hint.offered) & given_keys, hint

"""Link completion is bounded whatever the base holds: every name offered holds what was typed, `LIMIT` at most,
the list marked incomplete exactly when names that hold it were left out (a record of thousands of aliases)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.editor.completion import LIMIT, complete
from flopkb.kb.knowledge_base import KnowledgeBase
from kbfixture import compile_kb, write_kb

ALIASES = [f"facts/a{number}" for number in range(1_500)]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    many = f"id: facts/many\nkind: fact\nstatement: Many names.\naliases: [{', '.join(ALIASES)}]\n"
    other = "id: facts/a-ridge\nkind: fact\nstatement: A ridge.\n"
    root = write_kb(tmp_path_factory.mktemp("kb"), {"records/facts/many.yaml": many, "records/facts/other.yaml": other})
    return compile_kb(root)


@settings(max_examples=60, deadline=None)
@given(typed=st.text(alphabet="acfmnst/0123456789-", max_size=6))
def test_every_name_offered_holds_what_was_typed_and_the_list_is_bounded(kb: KnowledgeBase, typed: str) -> None:
    before = f"statement: see [[{typed}"
    found = complete(kb, [before], 0, before, len(before), "utf-16")
    labels = [item.label for item in found.items]
    holding = [name for name in [*kb.entries, *ALIASES] if typed.lower() in name.lower()]
    assert all(typed.lower() in label.lower() for label in labels)
    assert len(labels) == min(len(holding), LIMIT)
    assert found.is_incomplete == (len(holding) > LIMIT)

"""Link completion is bounded whatever the base holds: every name offered holds what was typed, `LIMIT` at most,
the list marked incomplete exactly when names that hold it were left out (a record of thousands of aliases). An id
typed on any line of a flow list, plain or quoted, is offered, and every item offered there resolves."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from flopkb.editor.completion import LIMIT, complete
from flopkb.kb.knowledge_base import KnowledgeBase
from kbfixture import accelerator, compile_kb, write_kb

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


HARDWARE = [f"hw/v{vendor}/chip-{number}" for vendor in range(3) for number in range(4)]


@pytest.fixture(scope="module")
def hardware_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    files = {f"records/{name}.yaml": accelerator(name, memory_bandwidth="1 TB/s") for name in HARDWARE}
    files["records/facts/chip-1.yaml"] = "id: facts/chip-1\nkind: fact\nstatement: Not hardware.\n"
    return compile_kb(write_kb(tmp_path_factory.mktemp("hw"), files))


@settings(max_examples=80, deadline=None)
@given(
    listed=st.lists(st.sampled_from(HARDWARE), max_size=4),
    breaks=st.lists(st.booleans(), min_size=5, max_size=5),
    quote=st.sampled_from(["", '"', "'"]),
    wanted=st.sampled_from(HARDWARE),
    cut=st.integers(min_value=0, max_value=20),
)
def test_an_id_typed_on_any_line_of_a_flow_list_or_in_quotes_is_offered_and_every_item_resolves(
    hardware_kb: KnowledgeBase, listed: list[str], breaks: list[bool], quote: str, wanted: str, cut: int
) -> None:
    """A flow list of hardware folded over lines anywhere, the last item a prefix of an id, plain or quoted: the id
    is offered, and every item offered, applied, leaves a list YAML reads whose last item is an accelerator."""
    entries = [f"{quote}{name}{quote}" for name in listed] + [quote + wanted[:cut]]
    text = "id: flops/x\nkind: flop\naffected_by_hardware: ["
    for number, entry in enumerate(entries):
        text += ("," if number else "") + ("\n  " if breaks[number] else " ") + entry
    lines = text.split("\n")
    found = complete(hardware_kb, lines, len(lines) - 1, lines[-1], len(lines[-1].encode("utf-16-le")) // 2, "utf-16")
    labels = [item.label for item in found.items]
    assert wanted in labels
    for item in found.items:
        assert isinstance(item.text_edit, types.TextEdit)
        edit = item.text_edit
        assert edit.range.end.character == len(lines[-1]) and edit.range.start.line == len(lines) - 1
        start = len(lines[-1]) - (edit.range.end.character - edit.range.start.character)
        completed = "\n".join([*lines[:-1], lines[-1][:start] + edit.new_text]) + quote + "]\n"
        value = yaml.safe_load(completed)["affected_by_hardware"][-1]
        assert value == item.label and value in HARDWARE

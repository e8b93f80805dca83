"""Completion on a later line of a flow list or mapping, in a block list, and inside quotes: what is offered, and the
record it leaves once the chosen item is applied, which `check` finds nothing wrong with."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from test_lsp_completion import FILES, complete_list
from test_lsp_rename import edited

from kbfixture import VOCABULARY, write_kb
from lsp_session import lsp_session, open_file, replaced, settled

pytestmark = pytest.mark.asyncio

CURSOR = "‸"
RIDGE = "id: facts/ridge\nkind: fact\nstatement: A ridge.\nformulas:\n  - id: ridge\n    expr: 1000 / 4\n"
BASE = {
    **FILES,
    "records/facts/ridge.yaml": RIDGE,
    "records/sources/book.yaml": "id: sources/book\nkind: source\ntitle: B\n",
}
ODD_TERMS = VOCABULARY.replace(
    "categories:\n", 'categories:\n  "on": {description: Read as true unquoted.}\n  it\'s "odd": {description: O.}\n'
)
"""Two categories a record cannot write as they are: `on` unquoted is a boolean, the other holds both quotes."""
FLOP = "id: flops/decode\nkind: flop\ncategory: memory-bandwidth\ndescription: Decode streams the weights.\n"
FACT = "id: facts/t\nkind: fact\nstatement: A ridge.\n"

ODD = 'it\'s "odd"'
H100, MI300X, RIDGE_ID = "hw/nvidia/h100", "hw/amd/mi300x", "facts/ridge"


def same(*labels: str) -> dict[str, str]:
    """Items that insert their label."""
    return {label: label for label in labels}


TERMS = same("arithmetic-intensity", "memory-bandwidth")
CATEGORY = "category: memory-bandwidth"
CASES: dict[str, tuple[str, dict[str, str], str]] = {
    "flow-list-second-line": (FLOP + "affected_by_hardware: [hw/amd/mi300x,\n  nv‸]\n", same(H100), H100),
    "flow-list-after-a-comment": (
        FLOP + "affected_by_hardware: [\n  hw/amd/mi300x,  # the first\n  ‸\n]\n",
        same(MI300X, H100),
        H100,
    ),
    "flow-mapping-second-line": (FACT + "formulas:\n  - {id: f,\n     ref: facts/ridge#‸}\n", same("ridge"), "ridge"),
    "block-list": (FACT + "sources:\n  - sources/paper\n  - bo‸\n", same("sources/book"), "sources/book"),
    "double-quoted-item": (FLOP + 'affected_by_hardware: ["hw/amd/mi300x",\n  "h1‸"]\n', same(H100), H100),
    "single-quoted": (FACT + "sources: ['pa‸']\n", same("sources/paper"), "sources/paper"),
    "link-in-single-quotes-after-astral": (
        FACT.replace("A ridge.", "'Décodé 𝄞, see [[ridg‸]].'"),
        {RIDGE_ID: "ridge"},
        RIDGE_ID,
    ),
    "link-in-double-quotes-second-line": (
        FACT.replace("A ridge.", '"Decode\n  streams, see [[the-pa‸]]."'),
        same("the-paper"),
        "the-paper",
    ),
    "term-in-quotes": (
        FLOP.replace(CATEGORY, 'category: "it‸"'),
        {**TERMS, "on": "on", ODD: 'it\'s \\"odd\\"'},
        ODD,
    ),
    "term-in-apostrophes": (
        FLOP.replace(CATEGORY, "category: 'it‸'"),
        {**TERMS, "on": "on", ODD: "it''s \"odd\""},
        ODD,
    ),
    "term-quoted-where-plain": (
        FLOP.replace(CATEGORY, "category: ‸"),
        {**TERMS, "on": '"on"', ODD: '"it\'s \\"odd\\""'},
        "on",
    ),
}


def cursor_of(marked: str) -> tuple[str, types.Position]:
    """The text without the cursor mark, and the mark's position (UTF-16)."""
    before, _, _ = marked.partition(CURSOR)
    line = before.count("\n")
    character = len(before.rsplit("\n", 1)[-1].encode("utf-16-le")) // 2
    return marked.replace(CURSOR, ""), types.Position(line=line, character=character)


def rel_of(text: str) -> str:
    """The record file of the record `text` holds (its id on the first line)."""
    return f"records/{text.split(chr(10), 1)[0].removeprefix('id: ')}.yaml"


async def complete_and_check(root: Path, marked: str, chosen: str) -> tuple[dict[str, str], list[str]]:
    """label -> inserted text of every item offered at the cursor of `marked`, and what the check says of the
    record (but that nothing links to it) once the item labelled `chosen` is applied."""
    text, position = cursor_of(marked)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, rel_of(text), text)
        await settled(lsp, uri)
        found = await complete_list(lsp, uri, position.line, position.character)
        edits = {item.label: item.text_edit for item in found.items}
        assert all(isinstance(edit, types.TextEdit) for edit in edits.values())
        replaced(lsp, uri, 2, edited(text, [edits[chosen]]))
        told = [item.message for item in await settled(lsp, uri) if item.code != "orphan"]
    return {label: edit.new_text for label, edit in edits.items() if edit is not None}, told


@pytest.mark.parametrize(("marked", "offered", "chosen"), CASES.values(), ids=CASES.keys())
async def test_the_chosen_item_completes_the_value_as_check_reads_it(
    tmp_path: Path, marked: str, offered: dict[str, str], chosen: str
) -> None:
    """`offered`: label -> inserted text of every item offered at the cursor; `chosen` applied leaves a record
    `check` finds nothing wrong with (it reads the term, the record or the anchor intended)."""
    found, told = await complete_and_check(write_kb(tmp_path, BASE, vocabulary=ODD_TERMS), marked, chosen)
    assert found == offered
    assert told == []


async def test_a_unit_that_cannot_start_a_plain_value_is_quoted_there(tmp_path: Path) -> None:
    marked = FACT + "formulas:\n  - id: share\n    expr: 1 / 2\n    unit: ‸\n"
    found, told = await complete_and_check(write_kb(tmp_path, BASE), marked, "%")
    assert (found["%"], found["TB"], found["µs"]) == ('"%"', "TB", "µs")
    assert told == []


@pytest.mark.parametrize(
    "marked",
    [
        FLOP + "affected_by_hardware:‸\n",  # `key:hw/...` would be one key
        FLOP + 'affected_by_hardware: "hw/amd/mi300x" ‸\n',  # after the closing quote
        FLOP + "affected_by_hardware: [hw/amd/mi300x] # ‸\n",  # in a comment
        FLOP + "affected_by_hardware: [hw/amd/mi300x]\nhar‸\n",  # a key
        FLOP + "affected_by_hardware: [hw/amd/mi300x, {h: ‸}]\n",  # another key's value
    ],
    ids=["right-after-the-colon", "after-the-closing-quote", "comment", "key", "nested-mapping"],
)
async def test_nothing_is_offered_where_a_value_would_break_the_yaml_or_not_be_the_field_s(
    tmp_path: Path, marked: str
) -> None:
    root = write_kb(tmp_path, BASE)
    text, position = cursor_of(marked)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", text)
        await settled(lsp, uri)
        found = await complete_list(lsp, uri, position.line, position.character)
    assert list(found.items) == []

"""Completion: link targets in their shortest resolving form, anchors, typed fields of the right kind, terms, hw."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from flopkb.editor.completion import LIMIT
from flopkb.formulas.units import parse_quantity
from kbfixture import accelerator, write_kb
from lsp_session import lsp_session, open_file, settled

pytestmark = pytest.mark.asyncio

FILES = {
    "records/hw/nvidia/h100.yaml": accelerator("hw/nvidia/h100", memory_bandwidth="3.35 TB/s"),
    "records/hw/amd/mi300x.yaml": accelerator("hw/amd/mi300x", memory_bandwidth="5.3 TB/s"),
    "records/old/h100.yaml": "id: old/h100\nkind: fact\nstatement: An older note.\n",
    "records/sources/paper.yaml": (
        "id: sources/paper\nkind: source\ntitle: P\naliases: [the-paper]\nmeasurements:\n"
        "  - {id: b32, quantity: gain, value: 0.2, basis: simulated, where: Figure 22}\n"
    ),
}
EDITED = """\
id: flops/decode
kind: flop
category: memory-bandwidth
description: Decode streams the weights, see [[
hardware_parameters:
  - parameter: memory_bandwidth
    effect: It moves.
    basis: vendor-spec
    values_for: [
"""


async def completions(lsp: object, uri: str, text: str, line: int, character: int) -> dict[str, str]:
    """label -> inserted text of every completion at (line, character)."""
    found = await lsp.text_document_completion_async(  # type: ignore[attr-defined]
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )
    assert isinstance(found, types.CompletionList)
    return {item.label: item.text_edit.new_text for item in found.items}


async def test_completion_knows_targets_kinds_anchors_terms_and_parameters(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", EDITED)
        await settled(lsp, uri)
        lines = EDITED.split("\n")

        linked = await completions(lsp, uri, EDITED, 3, len(lines[3]))
        assert linked["hw/amd/mi300x"] == "mi300x"  # the last segment is unique
        assert linked["hw/nvidia/h100"] == "nvidia/h100"  # 'h100' is also old/h100's
        assert linked["the-paper"] == "the-paper"
        assert set(linked) >= {"old/h100", "sources/paper", "flops/decode"}

        typed = await completions(lsp, uri, EDITED, 8, len(lines[8]))
        assert set(typed) == {"hw/amd/mi300x", "hw/nvidia/h100"}  # values_for takes accelerators only

        terms = await completions(lsp, uri, EDITED, 2, len("category: "))
        assert set(terms) == {"arithmetic-intensity", "memory-bandwidth"}
        basis = await completions(lsp, uri, EDITED, 7, len("    basis: "))
        assert "vendor-spec" in basis and "memory-bandwidth" not in basis

        text = EDITED + "formulas:\n  - id: t\n    expr: hw.\n    expect:\n      - {measured: sources/paper#}\n"
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        await settled(lsp, uri)
        lines = text.split("\n")
        parameters = await completions(lsp, uri, text, 11, len(lines[11]))
        assert set(parameters) == {"memory_bandwidth", "memory_capacity", "peak_bf16_dense", "peak_fp8_dense"}
        anchors = await completions(lsp, uri, text, 13, lines[13].index("}"))
        assert anchors == {"b32": "b32"}


TYPING_UNITS = """\
id: hw/gamma
kind: accelerator
vendor: V
specs:
  memory_bandwidth: {value: "4 T
  memory_capacity: {value: 80 G, basis: derived}
"""
FORMULA_UNIT = """\
id: facts/ridge
kind: fact
statement: A ridge.
formulas:
  - id: ridge
    expr: 1000 / k
    inputs: {k: 4, batch: [1, 3
    unit: FLOP/
"""


async def test_units_are_completed_from_the_unit_registry_where_a_unit_goes(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/gamma.yaml", TYPING_UNITS)
        await settled(lsp, uri)
        after_number = await completions(lsp, uri, TYPING_UNITS, 4, len(TYPING_UNITS.split("\n")[4]))
        in_flow = await completions(lsp, uri, TYPING_UNITS, 5, len("  memory_capacity: {value: 80 G"))
        other = open_file(lsp, root, "records/facts/ridge.yaml", FORMULA_UNIT)
        await settled(lsp, other)
        lines = FORMULA_UNIT.split("\n")
        in_unit_field = await completions(lsp, other, FORMULA_UNIT, 7, len(lines[7]))
        in_a_list_of_numbers = await completions(lsp, other, FORMULA_UNIT, 6, len(lines[6]))

    assert after_number == in_flow == in_unit_field
    assert {"TB", "GiB", "TFLOP", "s", "ms", "W", "%", "token"} <= after_number.keys()
    assert in_a_list_of_numbers == {}
    for name in after_number:  # every name offered is one `check` reads, with the dimension its detail gives
        assert parse_quantity(f"4 {name}").magnitude == 4


async def test_a_completed_unit_replaces_what_was_typed_of_it(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/gamma.yaml", TYPING_UNITS)
        await settled(lsp, uri)
        found = await lsp.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=4, character=len(TYPING_UNITS.split("\n")[4])),
            )
        )
    assert isinstance(found, types.CompletionList)
    (terabyte,) = [item for item in found.items if item.label == "TB"]
    assert terabyte.detail == "terabyte · [information]"
    assert isinstance(terabyte.text_edit, types.TextEdit)
    end = len(TYPING_UNITS.split("\n")[4])
    assert (terabyte.text_edit.range.start.character, terabyte.text_edit.range.end.character) == (end - 1, end)


async def complete_list(lsp: object, uri: str, line: int, character: int) -> types.CompletionList:
    found = await lsp.text_document_completion_async(  # type: ignore[attr-defined]
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )
    assert isinstance(found, types.CompletionList)
    return found


async def rewrite(lsp: object, uri: str, text: str) -> None:
    """The buffer (at version 1) holding `text` at version 2, checked."""
    lsp.text_document_did_change(  # type: ignore[attr-defined]
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await settled(lsp, uri)  # type: ignore[arg-type]


async def test_link_completion_sends_only_the_aliases_typed_and_at_most_the_limit(tmp_path: Path) -> None:
    """A record with thousands of aliases: after `[[` a bounded list marked incomplete; after `[[a1` only names that
    hold `a1`, the record's own id (which does not) left out."""
    aliases = ", ".join(f"facts/a{number}" for number in range(3_000))
    many = f"id: facts/many\nkind: fact\nstatement: Many names.\naliases: [{aliases}]\n"
    root = write_kb(tmp_path, {**FILES, "records/facts/many.yaml": many})
    async with lsp_session(root) as lsp:
        text = "id: facts/t\nkind: fact\nstatement: see [[\n"
        uri = open_file(lsp, root, "records/facts/t.yaml", text)
        await settled(lsp, uri)
        everything = await complete_list(lsp, uri, 2, len("statement: see [["))
        typed = text.replace("[[", "[[a1")
        await rewrite(lsp, uri, typed)
        narrowed = await complete_list(lsp, uri, 2, len("statement: see [[a1"))
    assert everything.is_incomplete and len(everything.items) == LIMIT
    labels = [item.label for item in narrowed.items]
    assert len(labels) == LIMIT and narrowed.is_incomplete  # more than 200 aliases hold "a1"
    assert all("a1" in label for label in labels) and "facts/a7" not in labels and "facts/many" not in labels


ANCHORED = """\
id: facts/t
kind: fact
statement: A ridge.
formulas:
  - id: f
    ref: {target}#
  - id: g
    expr: 2 * 3
    expect:
      - measured: {measured}#
"""


@pytest.mark.parametrize(
    ("target", "measured", "ref_anchors", "measured_anchors"),
    [
        ("facts/ridge", "sources/paper", {"ridge"}, {"b32"}),
        ("sources/paper", "facts/ridge", set(), set()),  # a source's measurement is no formula; a fact measures none
    ],
)
async def test_anchors_in_a_typed_ref_are_those_the_field_takes_of_a_record_it_takes(
    tmp_path: Path, target: str, measured: str, ref_anchors: set[str], measured_anchors: set[str]
) -> None:
    ridge = FORMULA_UNIT.replace("    inputs: {k: 4, batch: [1, 3\n    unit: FLOP/\n", "    inputs: {k: 4}\n")
    root = write_kb(tmp_path, {**FILES, "records/facts/ridge.yaml": ridge})
    text = ANCHORED.format(target=target, measured=measured)
    lines = text.split("\n")
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/t.yaml", text)
        await settled(lsp, uri)
        after_ref = await completions(lsp, uri, text, 5, len(lines[5]))
        after_measured = await completions(lsp, uri, text, 9, len(lines[9]))
        in_sources = text.replace("statement: A ridge.", "statement: A ridge.\nsources: [sources/paper#")
        await rewrite(lsp, uri, in_sources)
        after_source = await completions(lsp, uri, in_sources, 3, len(in_sources.split("\n")[3]))
    assert set(after_ref) == ref_anchors and set(after_measured) == measured_anchors
    assert after_source == {}  # `sources` takes a record, no anchor

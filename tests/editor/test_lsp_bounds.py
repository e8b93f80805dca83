"""Requests stay bounded: a big sweep's hover shows its first rows, a megabyte line answers at once, a buffer over
check's size limit and a YAML file that is no record get nothing."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from test_lsp_hover import ALPHA, BETA, eval_output, hover_at
from test_lsp_lanes import formatting_notes

from kbfixture import write_kb
from lsp_session import lsp_session, open_file, settled

pytestmark = pytest.mark.asyncio

SWEEP = f"""\
id: facts/sweep
kind: fact
statement: A sweep.
formulas:
  - id: ridge
    expr: hw.peak_bf16_dense / hw.memory_bandwidth * batch / (batch + k)
    unit: FLOP/byte
    inputs:
      batch: {list(range(1, 31))}
      k: [1, 2]
    hardware: [hw/alpha, hw/beta]
"""
LINKING = "id: facts/linking\nkind: fact\nstatement: As [[facts/sweep#ridge]] has it.\n"


async def test_a_sweep_s_hover_shows_its_first_rows_on_each_accelerator_and_how_many_more(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/linking.yaml": LINKING}
    root = write_kb(tmp_path, {**files, "records/facts/sweep.yaml": SWEEP})
    printed = eval_output(root, "facts/sweep").splitlines()
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/sweep.yaml")
        linking = open_file(lsp, root, "records/facts/linking.yaml")
        await settled(lsp, uri)
        on_formula = await hover_at(lsp, uri, SWEEP, "id: ridge")
        on_link = await hover_at(lsp, linking, LINKING, "[[facts/sweep#ridge]]")
    assert on_formula is not None and on_link is not None
    assert on_link.endswith(on_formula.removeprefix("```text"))
    lines = on_formula.removeprefix("```text\n").removesuffix("\n```").split("\n")
    for name in ("hw/alpha", "hw/beta"):  # the first rows `flopkb eval` prints on each accelerator
        eval_rows = [line.split() for line in printed if name in line]
        assert [line.split() for line in lines if name in line] == eval_rows[:10]
    assert "  … 100 more rows: flopkb eval facts/sweep" in lines  # 30 × 2 points on 2 accelerators, 20 shown
    header = next(line for line in lines if line.lstrip().startswith("batch"))
    assert header.split() == next(line for line in printed if line.lstrip().startswith("batch")).split()


async def _completion(lsp: object, uri: str, line: int, character: int) -> types.CompletionList | None:
    found = await lsp.text_document_completion_async(  # type: ignore[attr-defined]
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )
    assert found is None or isinstance(found, types.CompletionList)
    return found


LONG = "id: facts/long\nkind: fact\nstatement: Long notes.\nnotes: [" + "a" * 1_000_000 + "]\n"
"""Under check's limit of a megabyte: checked, and answered. Its last line took the completion 20 s at 60,000."""


async def test_completion_and_hover_at_the_end_of_a_megabyte_line_answer_at_once(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/long.yaml", LONG)
        await settled(lsp, uri)
        began = time.perf_counter()
        for character in (1_000_009, 1_000_008, 500_000):
            found = await _completion(lsp, uri, 3, character)
            assert found is not None and not found.items
            assert await hover_at(lsp, uri, LONG, "a]") is None
        assert time.perf_counter() - began < 10  # six requests; a second of them cost 20 s or more before


OVERSIZED = "id: facts/big\nkind: fact\nstatement: See [[hw/alpha]] " + "é" * 600_000 + "\n"
"""1.2 MB in UTF-8, 600,000 characters: over check's limit, which counts bytes."""


async def test_a_buffer_over_check_s_size_limit_is_answered_nothing(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/big.yaml", OVERSIZED)
        diagnostics = await settled(lsp, uri)
        assert [item.code for item in diagnostics] == ["not-a-record"]
        at_link = types.Position(line=2, character=OVERSIZED.split("\n")[2].index("alpha"))
        document = types.TextDocumentIdentifier(uri=uri)
        assert await hover_at(lsp, uri, OVERSIZED, "[[hw/alpha]]") is None
        assert await lsp.text_document_definition_async(types.DefinitionParams(document, at_link)) is None
        assert await _completion(lsp, uri, 2, OVERSIZED.split("\n")[2].index("[[") + 2) is None
        options = types.FormattingOptions(tab_size=2, insert_spaces=True)
        assert await lsp.text_document_formatting_async(types.DocumentFormattingParams(document, options)) is None
        linked = open_file(lsp, root, "records/facts/linked.yaml", "id: facts/linked\nkind: fact\nstatement: [[")
        assert await _completion(lsp, linked, 2, 13) is not None  # the server still answers


@pytest.mark.parametrize("content", [b"id: facts/latin\nkind: fact\nstatement: caf\xe9 [[hw/alpha]]\n", None])
async def test_a_document_not_open_is_answered_nothing_and_its_file_not_read(
    tmp_path: Path, content: bytes | None
) -> None:
    """A request racing a `didClose`, or a plugin asking about a file it never opened: no internal error, whether the
    file is not UTF-8 or not there."""
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA})
    closed = root / "records/facts/closed.yaml"
    if content is not None:
        closed.parent.mkdir()
        closed.write_bytes(content)
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/hw/alpha.yaml"))
        document = types.TextDocumentIdentifier(uri=closed.as_uri())
        at_link = types.Position(line=2, character=20)
        assert await lsp.text_document_hover_async(types.HoverParams(document, at_link)) is None
        assert await lsp.text_document_definition_async(types.DefinitionParams(document, at_link)) is None
        context = types.ReferenceContext(include_declaration=True)
        assert (
            await lsp.text_document_references_async(
                types.ReferenceParams(context=context, text_document=document, position=at_link)
            )
            is None
        )
        assert await _completion(lsp, closed.as_uri(), 2, 18) is None
        options = types.FormattingOptions(tab_size=2, insert_spaces=True)
        assert await lsp.text_document_formatting_async(types.DocumentFormattingParams(document, options)) is None


WORKFLOW = "name: ci\non: push\njobs:\n  test:\n    steps:\n      - run: see [[\nid: x\nkind: fact\n"
"""A YAML file that is no record, with `id:` and `kind:` keys that a formatter of records would move to the top."""


@pytest.mark.parametrize("rel", [".github/workflows/ci.yml", "records-notes/ci.yaml", "../outside/ci.yaml"])
async def test_a_yaml_file_that_is_no_record_gets_no_completion_and_no_formatting(tmp_path: Path, rel: str) -> None:
    root = write_kb(tmp_path / "base", {"records/hw/alpha.yaml": ALPHA})
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(WORKFLOW, encoding="utf-8")
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, rel)
        record = open_file(lsp, root, "records/facts/new.yaml", WORKFLOW)
        await settled(lsp, record)
        assert await _completion(lsp, record, 5, 20) is not None  # the same text, in a record file: completed
        assert await _completion(lsp, uri, 5, 20) is None
        options = types.FormattingOptions(tab_size=2, insert_spaces=True)
        document = types.TextDocumentIdentifier(uri=uri)
        assert await lsp.text_document_formatting_async(types.DocumentFormattingParams(document, options)) is None


async def test_the_vocabulary_gets_unit_completion(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA})
    text = (root / "schema/vocabulary.yaml").read_text(encoding="utf-8")
    before = text[: text.index("{unit: byte/s") + len("{unit: by")]
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "schema/vocabulary.yaml")
        await settled(lsp, uri)
        found = await _completion(lsp, uri, before.count("\n"), len(before.rsplit("\n", 1)[1]))
    assert found is not None and {"B", "TB", "FLOP"} <= {item.label for item in found.items}


NOTES = "kind: fact\nid: facts/notes\nstatement: x\nnotes:\n" + "".join(f"  - note {i}\n" for i in range(60_000))
"""Just under a megabyte: `flopkb fmt` takes seconds on it (it moves `id` first)."""


async def test_a_long_formatting_is_cancelled_at_once_and_requests_are_answered_meanwhile(tmp_path: Path) -> None:
    async with formatting_notes(tmp_path, NOTES) as (lsp, params):
        uri = params.text_document.uri
        sent = lsp.protocol.send_request_async(types.TEXT_DOCUMENT_FORMATTING, params, msg_id="formatting")
        formatting = asyncio.ensure_future(sent)
        await asyncio.sleep(0.5)
        began = time.perf_counter()
        assert await _completion(lsp, uri, 5, len("  - note 1")) is not None  # answered while fmt runs
        lsp.cancel_request(types.CancelParams(id="formatting"))
        with pytest.raises(JsonRpcException) as cancelled:
            await formatting
        assert cancelled.value.code == types.LSPErrorCodes.RequestCancelled
        assert time.perf_counter() - began < 3


async def test_a_link_of_100_000_characters_is_quoted_short_in_the_editor_at_the_link(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path, {"records/facts/f.yaml": f"id: facts/f\nkind: fact\nstatement: See [[{'a' * 100_000}]].\n"}
    )
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/f.yaml")
        [found] = [item for item in await settled(lsp, uri) if item.code == "dangling-link"]
    assert found.message == f"[[{'a' * 171}… (99,831 more characters) resolves to no record"
    assert (found.range.start.line, found.range.start.character) == (2, 15)

"""Quick fixes: each "did you mean" hint offers its names; the one applied leaves no diagnostic behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from kbfixture import accelerator, write_kb
from lsp_session import environment, lsp_session, open_file, settled, text_edits

pytestmark = pytest.mark.asyncio

TYPOS = """\
id: flops/decode
kind: flop
category: memory-bandwith
description: Decode streams the weights on [[hw/alhpa]], as [[flops/other#stram]] does.
affected_by_hardware: [hw/alpah]
scales_with:
  - factor: batch_size
    efect: grows with the batch
"""
OTHER = """\
id: flops/other
kind: flop
category: memory-bandwidth
description: Streams, see [[flops/decode]].
formulas:
  - id: stream
    expr: 2 * 3
"""


def apply(text: str, edit: types.TextEdit) -> str:
    """`edit` applied to `text` (positions in UTF-16, which this text's ASCII makes code points)."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: edit.range.start.line]) + edit.range.start.character
    end = sum(len(line) + 1 for line in lines[: edit.range.end.line]) + edit.range.end.character
    return text[:start] + edit.new_text + text[end:]


async def test_every_did_you_mean_is_a_quick_fix_that_leaves_no_diagnostic(tmp_path: Path) -> None:
    alpha = accelerator("hw/alpha", memory_bandwidth="4 TB/s")
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": alpha, "records/flops/other.yaml": OTHER})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml", TYPOS)
        text, version = TYPOS, 1
        fixed: list[str] = []
        while True:
            diagnostics = [item for item in await settled(lsp, uri) if item.code != "orphan"]
            if not diagnostics:
                break
            # a missing field whose key is misspelt says which key to rename; the key's own diagnostic fixes both
            diagnostics = [item for item in diagnostics if "\nhint: did you mean " in item.message]
            actions = await lsp.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=diagnostics[0].range,
                    context=types.CodeActionContext(diagnostics=diagnostics[:1]),
                )
            )
            assert actions, f"no quick fix for {diagnostics[0].code}: {diagnostics[0].message}"
            action = actions[0]
            fixed.append(f"{diagnostics[0].code}: {action.title}")
            of, edits = text_edits(action, uri)
            assert of == version
            for edit in edits:
                text = apply(text, edit)
            version += 1
            lsp.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        assert fixed == [
            "unknown-term: Write 'memory-bandwidth' for 'memory-bandwith'",
            "dangling-link: Write 'hw/alpha' for 'hw/alhpa'",
            "dangling-anchor: Write 'stream' for 'stram'",
            "dangling-ref: Write 'hw/alpha' for 'hw/alpah'",
            "unknown-field: Write 'effect' for 'efect'",
        ]
        assert "category: memory-bandwidth\n" in text and "[[hw/alpha]], as [[flops/other#stream]]" in text
        assert "[hw/alpha]" in text and "    effect: grows with the batch\n" in text


UNFORMATTED = """\
kind: flop   # the kind first: fmt moves it
id: flops/decode
description: Decode streams the weights.
category: memory-bandwidth
"""


async def test_formatting_is_flopkb_fmt_with_comments_kept(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/flops/decode.yaml": UNFORMATTED})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/flops/decode.yaml")
        edits = await lsp.text_document_formatting_async(
            types.DocumentFormattingParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                options=types.FormattingOptions(tab_size=2, insert_spaces=True),
            )
        )
        assert edits is not None and len(edits) == 1
        formatted = apply(UNFORMATTED, edits[0])
    run = subprocess.run(
        [sys.executable, "-m", "flopkb", "fmt", "--root", str(root)],
        env=environment(),
        capture_output=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert formatted == (root / "records/flops/decode.yaml").read_text(encoding="utf-8") != UNFORMATTED
    assert "# the kind first: fmt moves it" in formatted

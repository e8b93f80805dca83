"""Inlay hints come from the last full check: after one that changes the hints of an open document, a client that
takes `workspace/inlayHint/refresh` is asked to fetch them again, so an open record's hints follow an edit of another
record it computes with; after one that changes none, it is not asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from test_lsp_watching import FILES

from kbfixture import write_kb
from lsp_session import lsp_session, open_file, replaced, settled

pytestmark = pytest.mark.asyncio

WHOLE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=99, character=0))


def refreshes(lsp: LanguageClient) -> list[None]:
    """The server's `workspace/inlayHint/refresh` requests, as they come."""
    asked: list[None] = []

    @lsp.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def refresh(params: None) -> None:
        asked.append(params)

    return asked


async def hints(lsp: LanguageClient, uri: str) -> list[str]:
    found = await lsp.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=WHOLE)
    )
    return [str(hint.label) for hint in found or []]


async def until(condition: list[None], seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition:
            return
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("supported", [True, False])
async def test_an_edit_of_another_record_asks_the_editor_to_fetch_the_hints_again_when_they_change(
    tmp_path: Path, supported: bool
) -> None:
    """An edit of the accelerator that changes no claim's value (a comment, the vendor) leaves the open record's hints
    as they are: the editor is not asked to fetch them again; an edit of the bandwidth the claim computes with is."""
    root = write_kb(tmp_path, FILES)
    async with lsp_session(root, hints_refresh=supported) as lsp:
        asked = refreshes(lsp)
        claim = open_file(lsp, root, "records/facts/traffic.yaml")
        accelerator = open_file(lsp, root, "records/hw/h100.yaml")
        await settled(lsp, accelerator)
        await until(asked)
        assert len(asked) >= supported  # after the first check: a document that asked before it got nothing
        assert await hints(lsp, claim) == ["= 3.35 TB ✓"]
        asked.clear()
        text = (root / "records/hw/h100.yaml").read_text(encoding="utf-8")
        replaced(lsp, accelerator, 2, text.replace("vendor: V", "vendor: W") + "# a note\n")
        await settled(lsp, accelerator)
        await until(asked, 1.0)
        assert asked == []
        replaced(lsp, accelerator, 3, text.replace("3.35", "2"))
        await settled(lsp, accelerator)
        await until(asked, 5.0 if supported else 1.0)
        assert bool(asked) == supported
        assert await hints(lsp, claim) == ["= 2 TB ✗ (off by 67.5%)"]

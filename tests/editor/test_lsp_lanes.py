"""Requests' work off the message loop (`flopkb.editor.lanes`): concurrent requests on a base whose links are built on
first use all answer in full; cancelled formattings neither pile up in threads nor slow the next one; a base a newer
check replaces is released only after the requests that took it are done."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp_hover import ALPHA, hover_at

from flopkb.config import load_config
from flopkb.editor.checked import Buffer
from flopkb.editor.checker import Checker
from flopkb.editor.server import FlopkbServer
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import Link
from kbfixture import compile_kb, write_kb
from lsp_session import lsp_session, open_file, settled

FACTS = 3000
NOTES = "kind: fact\nid: facts/notes\nstatement: x\nnotes:\n" + "".join(f"  - note {i}\n" for i in range(15_000))
"""`flopkb fmt` takes a second or two on it (it moves `id` first)."""


def _fact(number: int) -> str:
    return f"id: facts/f{number}\nkind: fact\nstatement: On [[hw/alpha]] and [[facts/f{(number + 1) % FACTS}]].\n"


@pytest.mark.asyncio
async def test_concurrent_references_and_hovers_on_links_built_on_first_use_all_answer_in_full(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA} | {f"records/facts/f{n}.yaml": _fact(n) for n in range(FACTS)}
    root = write_kb(tmp_path, files)
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/f0.yaml")
        await settled(lsp, uri)
        for version, edited in enumerate([_fact(0).replace("On", "Also on"), _fact(0).replace("On", "Again on")], 2):
            lsp.text_document_did_change(  # the second edit's check takes the links from the load cache: lazily built
                types.DidChangeTextDocumentParams(
                    types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    [types.TextDocumentContentChangeWholeDocument(text=edited)],
                )
            )
            await settled(lsp, uri)
        at_link = types.Position(line=2, character=edited.split("\n")[2].index("[[hw/alpha") + 3)
        params = types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=at_link,
            context=types.ReferenceContext(include_declaration=False),
        )
        asked = [lsp.text_document_references_async(params) for _ in range(8)]
        hovers = [hover_at(lsp, uri, edited, "hw/alpha]]") for _ in range(4)]
        answers = await asyncio.gather(*asked, *hovers)
        assert [len(found or []) for found in answers[:8]] == [FACTS] * 8
        assert all(text is not None and "hw/alpha" in text for text in answers[8:])


@asynccontextmanager
async def formatting_notes(
    tmp_path: Path, notes: str
) -> AsyncIterator[tuple[LanguageClient, types.DocumentFormattingParams]]:
    """A session with the record `notes` open and checked, and the parameters of its formatting."""
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/notes.yaml", notes)
        await settled(lsp, uri)
        options = types.FormattingOptions(tab_size=2, insert_spaces=True)
        yield lsp, types.DocumentFormattingParams(types.TextDocumentIdentifier(uri=uri), options)


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.asyncio
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the server's threads in /proc")
async def test_cancelled_formattings_neither_pile_up_in_threads_nor_slow_the_next_one(tmp_path: Path) -> None:
    async with formatting_notes(tmp_path, NOTES) as (lsp, params):
        began = time.perf_counter()
        assert await lsp.text_document_formatting_async(params)
        alone = time.perf_counter() - began
        before = _threads(lsp._server.pid)  # type: ignore[attr-defined]
        for number in range(8):
            sent = lsp.protocol.send_request_async(types.TEXT_DOCUMENT_FORMATTING, params, msg_id=f"cancelled-{number}")
            formatting = asyncio.ensure_future(sent)
            await asyncio.sleep(0.05)
            lsp.cancel_request(types.CancelParams(id=f"cancelled-{number}"))
            with pytest.raises(JsonRpcException):
                await formatting
        after = _threads(lsp._server.pid)  # type: ignore[attr-defined]
        began = time.perf_counter()
        assert await lsp.text_document_formatting_async(params)
        assert time.perf_counter() - began < 3.5 * alone  # the one cancelled while it ran, then its own (each: 9x)
        assert after < before + 4  # not one a cancelled request (other threads come and go)


@pytest.mark.asyncio
async def test_a_newer_formatting_of_a_document_supersedes_its_queued_one(tmp_path: Path) -> None:
    async with formatting_notes(tmp_path, NOTES) as (lsp, params):
        running = asyncio.ensure_future(lsp.text_document_formatting_async(params))
        await asyncio.sleep(0.2)
        queued = asyncio.ensure_future(lsp.text_document_formatting_async(params))
        await asyncio.sleep(0.05)
        newest = asyncio.ensure_future(lsp.text_document_formatting_async(params))
        with pytest.raises(JsonRpcException) as superseded:
            await queued
        assert superseded.value.code == types.LSPErrorCodes.ContentModified
        assert await running == await newest


def test_a_base_a_newer_check_replaces_is_released_after_the_requests_that_took_it(tmp_path: Path) -> None:
    """The server's requests' lane (no client: its message loop is not running, so `after_requests` queues at once)
    with a checker whose check is replaced while a request still reads its base."""
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA})
    config = load_config(root)
    server = FlopkbServer(root)
    checker = Checker(config)
    checker.attach("utf-16", lambda checked: None, server.after_requests)
    try:
        first = checker.wait(timeout=60)
        assert first is not None and first.kb is not None and first.kb.evidence is not None
        holding, go_on = threading.Event(), threading.Event()

        def request(kb: KnowledgeBase = first.kb) -> bool:
            holding.set()
            go_on.wait(60)
            return kb.evidence is not None  # what a hover reads

        answer = server.requests.put(request)
        assert holding.wait(60)
        generation = checker.update({"records/facts/f.yaml": Buffer("id: facts/f\nkind: fact\nstatement: x\n", 1)})
        newer = checker.wait(generation, timeout=60)
        assert newer is not None and newer.kb is not first.kb
        time.sleep(0.2)  # a release at once would be done by now
        assert first.kb.evidence is not None
        go_on.set()
        assert answer.result(60)
        server.requests.put(lambda: None).result(60)  # the release queued after the request
        assert first.kb.evidence is None
    finally:
        go_on.set()
        checker.stop()
        checker.join(10)


def test_links_built_on_first_use_are_waited_for_by_a_second_reader(tmp_path: Path) -> None:
    """Two threads read a base's links while they are built (a request and the message loop's code actions): the
    second waits for them instead of finding none. The building is held until the second has asked."""
    kb = compile_kb(write_kb(tmp_path, {"records/hw/alpha.yaml": ALPHA, "records/facts/f0.yaml": _fact(0)}))
    built = dict(kb.links)
    assert built["facts/f0"]
    building, go_on = threading.Event(), threading.Event()

    def later() -> dict[str, list[Link]]:
        building.set()
        go_on.wait(10)
        return built

    kb.links_later(later, lambda: {}, lambda record_id: built.get(record_id, []))
    seen: dict[str, object] = {}
    first = threading.Thread(target=lambda: seen.setdefault("first", kb.links))
    first.start()
    assert building.wait(10)
    second = threading.Thread(target=lambda: seen.setdefault("second", (kb.links, kb.edges)))
    second.start()
    second.join(0.3)  # the second asks while the links are being built
    go_on.set()
    first.join(10)
    second.join(10)
    assert seen["first"] is built
    assert seen["second"] == (built, {})

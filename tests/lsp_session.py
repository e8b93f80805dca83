"""A pytest-lsp client talking to `flopkb lsp` over stdio, and what the tests compare its answers with."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from repo import REPO

UTF8, UTF16 = types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16
T = TypeVar("T")
PUSH_CLIENT = "neovim@v0.9.1"
"""A client that takes pushed diagnostics (Neovim before 0.10 does not pull them)."""

Seen = tuple[str, int, int, str, str, str]
"""A diagnostic as a user reads it: (path, line, character, code, severity, message with hint)."""


def environment() -> dict[str, str]:
    """This process's environment, with the worktree's compiler first on the module path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "compiler"), env.get("PYTHONPATH")]))
    return env


@asynccontextmanager
async def lsp_session(
    root: Path,
    *,
    encoding: str = UTF16,
    client: str = PUSH_CLIENT,
    watch: bool = False,
    hints_refresh: bool = False,
    diagnostics_refresh: bool = False,
    started_in: Path | None = None,
) -> AsyncIterator[LanguageClient]:
    """`flopkb lsp --root ROOT`, initialized with `client`'s capabilities offering `encoding`; shut down after.

    `watch`: the client watches files for the server; `hints_refresh`: it takes `workspace/inlayHint/refresh`;
    `diagnostics_refresh`: it takes `workspace/diagnostic/refresh`.
    `started_in`: `flopkb lsp` without `--root`, started in that folder; ROOT is the client's workspace folder."""
    command = [sys.executable, "-m", "flopkb", "lsp", "--root", str(root)]
    if started_in is not None:
        run = f"import os, runpy, sys; os.chdir({str(started_in)!r}); sys.argv = ['flopkb', 'lsp']; "
        command = [sys.executable, "-c", run + "runpy.run_module('flopkb', run_name='__main__')"]
    config = ClientServerConfig(server_command=command, server_env=environment())
    lsp = await config.start()
    assert isinstance(lsp, LanguageClient)
    lsp.diagnostics = Pushes()
    capabilities = client_capabilities(client)
    capabilities.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    if watch:
        capabilities.workspace = capabilities.workspace or types.WorkspaceClientCapabilities()
        capabilities.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        )
    if hints_refresh:
        capabilities.workspace = capabilities.workspace or types.WorkspaceClientCapabilities()
        capabilities.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    if diagnostics_refresh:
        capabilities.workspace = capabilities.workspace or types.WorkspaceClientCapabilities()
        capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    try:
        result = await lsp.initialize_session(
            types.InitializeParams(
                capabilities=capabilities, workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="kb")]
            )
        )
        assert result.capabilities.position_encoding == encoding
        yield lsp
        await lsp.shutdown_session()
    finally:
        server = lsp._server
        if server is not None and server.returncode is None:  # the test failed before the shutdown: end it here
            server.kill()
        await lsp.stop()


class Pushes(dict[str, Sequence[types.Diagnostic]]):
    """The client's latest diagnostics by URI (pytest-lsp's `diagnostics`), and every push in order (`log`)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, list[types.Diagnostic]]] = []

    def __setitem__(self, uri: str, diagnostics: Sequence[types.Diagnostic]) -> None:
        self.log.append((uri, list(diagnostics)))
        super().__setitem__(uri, diagnostics)


def open_file(lsp: LanguageClient, root: Path, rel: str, text: str | None = None) -> str:
    """Open the file at `rel` (with its text on disk, or `text`); its URI."""
    uri = (root / rel).as_uri()
    text = (root / rel).read_text(encoding="utf-8") if text is None else text
    lsp.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text))
    )
    return uri


def replaced(lsp: LanguageClient, uri: str, version: int, text: str) -> None:
    """The whole text of the open document at `uri` replaced by `text`, as its `version`."""
    lsp.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def settled(lsp: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The diagnostics of `uri` once the server has checked everything sent so far (pushed ones are in before): a
    workspace pull, answered after the full check (a document pull may be answered by the check of the edited buffer
    first)."""
    report = await lsp.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    return [item for found in report.items if found.uri == uri for item in found.items]


def pushed(lsp: LanguageClient, root: Path) -> list[Seen]:
    """Every diagnostic the server pushed last, in every file, as the user reads it."""
    return as_seen(lsp.diagnostics, root)


def as_seen(by_uri: Mapping[str, Sequence[types.Diagnostic]], root: Path) -> list[Seen]:
    """Diagnostics by document URI, as the user reads them."""
    seen = []
    for uri, diagnostics in by_uri.items():
        rel = Path(uri.removeprefix("file://")).relative_to(root).as_posix()
        for item in diagnostics:
            severity = {types.DiagnosticSeverity.Error: "error", types.DiagnosticSeverity.Warning: "warning"}
            start = item.range.start
            seen.append((rel, start.line, start.character, str(item.code), severity[item.severity], item.message))
    return sorted(seen)


def checked(root: Path, encoding: str) -> list[Seen]:
    """What `flopkb check --format json` reports, at the positions a client with `encoding` counts."""
    run = subprocess.run(
        [sys.executable, "-m", "flopkb", "check", "--format", "json", "--no-cache", "--root", str(root)],
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    return seen(root, json.loads(run.stdout)["diagnostics"], encoding)


def seen(root: Path, reported: list[dict[str, Any]], encoding: str) -> list[Seen]:
    """Diagnostics as `check --format json` prints them, at the positions a client with `encoding` counts."""
    found = []
    for item in reported:
        before = _line(root / item["path"], item["line"])[: item["column"] - 1]
        character = len(before.encode("utf-8")) if encoding == UTF8 else len(before.encode("utf-16-le")) // 2
        message = item["message"] + (f"\nhint: {item['hint']}" if "hint" in item else "")
        found.append((item["path"], item["line"] - 1, character, item["code"], item["severity"], message))
    return sorted(found)


def _line(path: Path, line: int) -> str:
    try:
        lines = path.read_text(encoding="utf-8").removeprefix("\ufeff").split("\n")
    except (OSError, UnicodeDecodeError):
        return ""
    return lines[line - 1] if line <= len(lines) else ""


def text_edits(action: types.CodeAction | types.Command, uri: str) -> tuple[int | None, list[types.TextEdit]]:
    """The version a quick fix's edit is of, and its edits of the document at `uri` (one `TextDocumentEdit`)."""
    assert isinstance(action, types.CodeAction) and action.edit is not None and action.edit.document_changes
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
    return change.text_document.version, [edit for edit in change.edits if isinstance(edit, types.TextEdit)]


def record_files(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in (root / "records").rglob("*.y*ml"))


class ThreadedSession:
    """An `lsp_session` run on an event loop of its own thread, for synchronous tests (hypothesis)."""

    def __init__(self, root: Path, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._session = lsp_session(root, **options)
        self.lsp = self.run(self._session.__aenter__())

    def run(self, awaitable: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(timeout=600)

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """Call `function` (one that sends a notification) on the session's loop."""

        async def wrapped() -> T:
            return function(*args)

        return self.run(wrapped())

    def close(self) -> None:
        self.run(self._session.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

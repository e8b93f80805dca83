"""`flopkb lsp`: the pygls server, wired to the checking thread (`flopkb.editor.checker`).

Diagnostics are pushed (`textDocument/publishDiagnostics`) to clients that do
not pull them, and pulled (`textDocument/diagnostic`, `workspace/diagnostic`)
by those that do; after every check the server publishes only the files
whose diagnostics changed (open or not), or asks a pulling client to pull
again. Files changed on disk reach it through watched-file notifications,
registered dynamically when the client allows it.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from collections.abc import Callable, Hashable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer

import flopkb
from flopkb.config import Config
from flopkb.editor.actions import quick_fixes
from flopkb.editor.addresses import Addresses, spelled_root
from flopkb.editor.capabilities import (
    creates_files,
    pulls,
    refreshes_diagnostics,
    refreshes_hints,
    versions_edits,
    watches_files,
)
from flopkb.editor.checked import Buffer, Checked
from flopkb.editor.checker import Checker
from flopkb.editor.lanes import Lane
from flopkb.editor.positions import code_point_offset, diagnostic_range, lines_of, lsp_position
from flopkb.editor.pulls import Pulled
from flopkb.editor.settings import Watching, read_settings, workspace_root
from flopkb.editor.tracking import Tracked
from flopkb.load.files import MAX_FILE_BYTES
from flopkb.load.sources import RECORD_SUFFIXES

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase

NAME = "flopkb"
T = TypeVar("T")
SYMBOLS = 200
"""At most this many workspace symbols are answered: the editor asks again as more is typed."""
RESCAN = "flopkb.rescan"
STORE_SECONDS = 10.0
"""At exit, the longest wait for the load cache and the latest diagnostics to be stored (`flopkb.pipeline.verdict`)."""
_REQUESTS_ONLY = (
    "flopkb.authoring.fmt",
    "flopkb.editor.completion",
    "flopkb.editor.create",
    "flopkb.editor.hover",
    "flopkb.editor.navigation",
    "flopkb.editor.rename",
)
"""Modules only requests use (rich, ruamel.yaml, the templates, the formula tables: 0.1 to 0.2 s): imported in a
thread once the first diagnostics are out, not before the first check (`flopkb check` imports none of them)."""


class FlopkbServer(LanguageServer):
    """The language server of one knowledge base, found at `root` or at the client's workspace folder.

    `started`: a checker made before the server (`flopkb lsp`), whose first check runs while pygls is imported; used
    when its base is the one the client names.
    """

    def __init__(self, root: Path | None = None, started: Checker | None = None) -> None:
        super().__init__(NAME, flopkb.__version__)
        self.given_root = root
        self.started = started
        self.config: Config | None = None
        self.addresses: Addresses | None = None
        self.checker: Checker | None = None
        self.published: dict[str, list[types.Diagnostic]] = {}
        """The diagnostics of the last check, by root-relative path: pushed, or there to pull."""
        self.pushed_to: dict[str, str] = {}
        """The URI each file's diagnostics were pushed to, when it has any."""
        self.hints: dict[str, list[types.InlayHint] | None] = {}
        """The open documents' inlay hints in the last full check (`flopkb.editor.inlay.shown`)."""
        self.pulled = Pulled()
        """Where the last workspace pull reported each file's diagnostics."""
        self.tracked = Tracked()
        """The open documents' edits, and the fixable diagnostics the client was sent of them: where quick fixes go."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self.watching = Watching()
        self.imported = False
        """Whether the modules only requests use are imported (`_REQUESTS_ONLY`), or on their way."""
        self.requests = Lane("flopkb-request")
        """Where hover, completion, definition and references are worked out, one at a time (the base's lazily built
        parts are built once), and where a retired base is released after them (`after_requests`)."""
        self.formatting = Lane("flopkb-format")
        """Where formatting is worked out (it reads no base): beside the requests' lane, as it takes seconds on a
        record of a megabyte; a newer formatting of a document supersedes its queued one."""

    # where files are

    def relative(self, uri: str) -> str | None:
        """The root-relative path of a document, or None when it is not in the knowledge base."""
        return self.addresses.relative(uri) if self.addresses is not None else None

    def answered(self, uri: str, *, vocabulary: bool = False) -> tuple[str, str] | None:
        """The root-relative path and text of an open document that requests are answered in: a record file of the
        base (or, with `vocabulary`, its vocabulary) within check's size limit. Other YAML files get nothing, and so
        does a document that is not open (pygls would read its file, whatever its size or encoding)."""
        document = self.workspace.text_documents.get(unquote(uri))
        rel = self.relative(uri)
        if document is None or rel is None or self.config is None:
            return None
        in_records = rel.startswith(f"{self.config.records.rstrip('/')}/") and rel.endswith(RECORD_SUFFIXES)
        if not in_records and not (vocabulary and self.config.root / rel == self.config.vocabulary_path):
            return None
        text = document.source
        if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", errors="surrogatepass")) > MAX_FILE_BYTES:
            return None  # check refuses it at once: every request would cost seconds
        return rel, text

    def uri_of(self, rel: str) -> str:
        """The URI of a root-relative path, in the client's words (`flopkb.editor.addresses`)."""
        assert self.addresses is not None
        return self.addresses.uri(rel)

    def buffers(self) -> dict[str, Buffer]:
        found = {}
        for document in self.workspace.text_documents.values():
            rel = self.relative(document.uri)
            if rel is not None:
                found[rel] = Buffer(document.source, document.version or 0)
        return found

    # checking

    def start(self, params: types.InitializeParams) -> None:
        root = self.given_root or workspace_root(params) or Path.cwd()
        started, self.started = self.started, None
        config = self.settings(root.resolve(), changed=False)
        if started is not None and (config is None or started.config.root != config.root):
            started.stop()
            started = None
        if config is None:
            return
        self.config = config
        self.addresses = Addresses(config.root, spelled_root(config.root, workspace_root(params)))
        self.loop = asyncio.get_running_loop()
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        self.checker = started or Checker(config)  # the first check starts now, not a round trip later
        told = watches_files(self.client_capabilities)
        self.checker.attach(str(encoding), self.checked, self.after_requests, told_of_disk=told, uri=self.addresses.uri)

    def recheck(self, *, disk: bool = False, changed: list[str] | None = None, config_changed: bool = False) -> None:
        """Check again: the buffers, and when `disk`, the files on disk at `changed` (document URIs; None: any)."""
        if self.checker is None or self.config is None:
            return
        config = self.settings(self.config.root, changed=True) if config_changed else None
        self.config = config or self.config
        paths = None if changed is None else [rel for rel in map(self.relative, changed) if rel is not None]
        self.checker.update(self.buffers(), config, disk=disk, changed=paths)

    async def watch(self) -> None:
        """Ask a client that watches files for the server to watch what the check of the settings reads, where it
        watches something else (`flopkb.editor.settings.Watching`)."""
        if watches_files(self.client_capabilities) and self.config is not None:
            withdrawn, registered = self.watching.to(self.config)
            if withdrawn is not None:
                await self.client_unregister_capability_async(withdrawn)
            if registered is not None:
                await self.client_register_capability_async(registered)

    def settings(self, root: Path, *, changed: bool) -> Config | None:
        """The base's settings, or None when they cannot be used: then the author is told why."""
        found = read_settings(root, changed=changed)
        if isinstance(found, str):
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, found))
            return None
        return found

    def checked(self, checked: Checked) -> None:
        """Called in the checking thread: the results go out from the message loop."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.publish, checked)
            full = checked.kb is not None and checked.files is None and checked.related
            if full and refreshes_hints(self.client_capabilities):
                self.loop.call_soon_threadsafe(self.refresh_hints, checked)

    def refresh_hints(self, checked: Checked) -> None:
        """Ask the client to fetch the inlay hints again when an open document's differ from the last full check's
        (a claim computed anew, an edited buffer's lines moved): worked out in the requests' lane (the hints of a
        record of 12,000 claims take 0.2 s), queued from the message loop before the base can be released there
        (`after_requests`), and compared back on the loop in the order of the checks."""
        from flopkb.editor.inlay import shown

        def work() -> None:
            hints = shown(checked, self.checker_encoding)
            self.on_loop(partial(self.hints_shown, hints))

        self.requests.put(work)

    def hints_shown(self, hints: dict[str, list[types.InlayHint] | None]) -> None:
        if hints != self.hints:
            self.hints = hints
            self.workspace_inlay_hint_refresh(None)

    def on_loop(self, function: Callable[[], object]) -> None:
        """Run `function` on the message loop, between two messages (at once before the loop runs)."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(function)
        else:
            function()

    def after_requests(self, function: Callable[[], None]) -> None:
        """Run `function` on the message loop once the work of the requests that took the latest base so far is done:
        where the checker releases the base a newer check replaced. Requests take it on the message loop and queue
        their work in the requests' lane at once, so what is queued there from the loop comes after all of them; and
        it hands `function` back to the loop, where the handlers that read a base on the loop (code actions, inlay
        hints, symbols, rename) are never in the middle of reading it."""
        self.on_loop(partial(self.requests.put, partial(self.on_loop, function)))

    def publish(self, checked: Checked) -> None:
        """Push the diagnostics of every file whose diagnostics changed, of those the check tells; or ask a pulling
        client to pull again."""
        told = checked.diagnostics
        if pulls(self.client_capabilities) and not checked.related:
            return  # a pull waits for the check's related places
        if not self.imported and checked.files is None:  # not beside the first check's stages (its open files first)
            self.imported = True
            threading.Thread(target=_import_request_modules, name="flopkb-imports", daemon=True).start()
        if checked.files is not None:
            told = {**{rel: items for rel, items in self.published.items() if rel not in checked.files}, **told}
        if pulls(self.client_capabilities):
            moved = self.pulled.moved(self.uri_of)  # a file opened or closed under another spelling of its path
            if (self.published != told or moved) and refreshes_diagnostics(self.client_capabilities):
                self.workspace_diagnostic_refresh(None)
            self.published = told
            return
        self.tracked.told(checked)  # pushed, or equal to what was
        for rel in sorted(self.published.keys() | told.keys()):
            diagnostics, uri = told.get(rel, []), self.uri_of(rel)
            before = self.pushed_to.pop(rel, uri)
            if before != uri:  # opened (or closed) under another spelling of its path: its diagnostics move there
                self.push(before, [], None)
            if self.published.get(rel, []) != diagnostics or before != uri:
                buffer = checked.buffers.get(rel)
                self.push(uri, diagnostics, buffer.version if buffer is not None else None)
            if diagnostics:
                self.pushed_to[rel] = uri
        self.published = told

    def push(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        self.text_document_publish_diagnostics(params)

    def location(self, checked: Checked, place: tuple[str, int, int]) -> types.Location:
        path, line, column = place
        text = checked.text_of(path)
        return types.Location(uri=self.uri_of(path), range=diagnostic_range(text, line, column, self.checker_encoding))

    def at(self, uri: str, position: types.Position) -> tuple[KnowledgeBase, str, int, int] | None:
        """The last checked base, and the file and flopkb's (line, column) of a position in an open document."""
        document = self.answered(uri)
        checked = self.checker.latest if self.checker is not None else None
        if document is None or checked is None or checked.kb is None:
            return None
        rel, text = document
        line, column = lines_of(text).position(code_point_offset(text, position, self.checker_encoding))
        return checked.kb, rel, line, column

    @property
    def checker_encoding(self) -> str:
        encoding = self.checker.encoding if self.checker is not None else None
        return encoding or types.PositionEncodingKind.Utf16

    async def current_on_disk(self) -> Checked | None:
        """The check of the buffers as they are now and of the files on disk read again, once it is done."""
        self.recheck(disk=True)
        return await self.current()

    async def off_loop(self, work: Callable[[], T], lane: Lane | None = None, key: Hashable | None = None) -> T:
        """`work` done in a lane (`flopkb.editor.lanes`; by default the requests' lane, whose work reads the latest
        base one request at a time): the message loop goes on answering (diagnostics, `$/cancelRequest`,
        `shutdown`); a cancelled request is answered at once, and its work is dropped, or, begun, not heard of."""
        return await asyncio.wrap_future(self.requests.put(work) if lane is None else lane.put(work, key))

    async def current(self, rel: str | None = None) -> Checked | None:
        """The check of the buffers as they are now, once it is done (off the message loop); for the diagnostics of
        the file `rel` alone, the check of its edited buffer first when it tells them."""
        if self.checker is None:
            return None
        generation = self.checker.update(self.buffers())
        return await asyncio.get_running_loop().run_in_executor(None, partial(self.checker.wait, generation, rel=rel))


def _import_request_modules() -> None:
    for name in _REQUESTS_ONLY:
        importlib.import_module(name)


def make_server(root: Path | None = None, started: Checker | None = None) -> FlopkbServer:
    server = FlopkbServer(root, started)

    @server.feature(types.INITIALIZE)
    def initialize(ls: FlopkbServer, params: types.InitializeParams) -> None:
        ls.start(params)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: FlopkbServer, params: types.InitializedParams) -> None:
        ls.recheck()
        await ls.watch()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: FlopkbServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.addresses is not None:
            ls.addresses.opened(params.text_document.uri)
        document = params.text_document
        ls.tracked.opened(document.uri, ls.relative(document.uri), document.version)
        ls.recheck()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: FlopkbServer, params: types.DidChangeTextDocumentParams) -> None:
        document = params.text_document
        ls.tracked.changed(document.uri, document.version, params.content_changes, ls.checker_encoding)
        ls.recheck()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: FlopkbServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.recheck(disk=True, changed=[params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: FlopkbServer, params: types.DidCloseTextDocumentParams) -> None:
        if ls.addresses is not None:
            ls.addresses.closed(params.text_document.uri)
        ls.tracked.closed(params.text_document.uri)
        ls.recheck()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_changed(ls: FlopkbServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.recheck(
            disk=True,
            changed=[change.uri for change in params.changes],
            config_changed=any(os.path.basename(change.uri) == "pyproject.toml" for change in params.changes),
        )
        await ls.watch()  # the settings may name other folders

    @server.command(RESCAN)
    def rescan(ls: FlopkbServer, *arguments: object) -> None:
        """Read the disk again (files the editor did not tell of: changed while it was not watching)."""
        ls.recheck(disk=True)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=NAME, inter_file_dependencies=True, workspace_diagnostics=True),
    )
    async def pull(ls: FlopkbServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        rel = ls.relative(params.text_document.uri)
        checked = await ls.current(rel)
        items = checked.diagnostics.get(rel, []) if checked is not None and rel is not None else []
        if checked is not None and rel is not None:
            ls.tracked.told(checked, rel)
        result_id = str(checked.generation) if checked is not None else None
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def pull_all(ls: FlopkbServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
        checked = await ls.current()
        if checked is None:
            return types.WorkspaceDiagnosticReport(items=[])
        ls.tracked.told(checked)
        return types.WorkspaceDiagnosticReport(items=ls.pulled.reports(checked, ls.uri_of))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: FlopkbServer, params: types.HoverParams) -> types.Hover | None:
        from flopkb.editor.hover import hover_markdown

        found = ls.at(params.text_document.uri, params.position)
        text = await ls.off_loop(partial(hover_markdown, *found)) if found is not None else None
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["[", "#", ".", " ", "/"])
    )
    async def completion(ls: FlopkbServer, params: types.CompletionParams) -> types.CompletionList | None:
        from flopkb.editor.completion import complete

        checked = ls.checker.latest if ls.checker is not None else None
        document = ls.answered(params.text_document.uri, vocabulary=True)
        if checked is None or checked.kb is None or document is None:
            return None
        lines = document[1].split("\n")
        if params.position.line >= len(lines):
            return None
        line_text = lines[params.position.line]
        offset = code_point_offset(
            line_text, types.Position(line=0, character=params.position.character), ls.checker_encoding
        )
        before, character = line_text[:offset], params.position.character
        return await ls.off_loop(
            partial(complete, checked.kb, lines, params.position.line, before, character, ls.checker_encoding)
        )

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def go_to_definition(ls: FlopkbServer, params: types.DefinitionParams) -> list[types.Location] | None:
        from flopkb.editor.navigation import definition

        found = ls.at(params.text_document.uri, params.position)
        document = ls.answered(params.text_document.uri)
        checked = ls.checker.latest if ls.checker is not None else None
        if found is None or document is None or checked is None:
            return None
        kb, rel, line, column = found
        line_text = document[1].split("\n")[line - 1]
        places = await ls.off_loop(partial(definition, kb, rel, line, column, line_text))
        return [ls.location(checked, place) for place in places] or None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def find_references(ls: FlopkbServer, params: types.ReferenceParams) -> list[types.Location] | None:
        from flopkb.editor.navigation import references

        found = ls.at(params.text_document.uri, params.position)
        checked = ls.checker.latest if ls.checker is not None else None
        if found is None or checked is None:
            return None
        return [ls.location(checked, place) for place in await ls.off_loop(partial(references, *found))] or None

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: FlopkbServer, params: types.DocumentSymbolParams) -> list[types.SymbolInformation] | None:
        from flopkb.editor.navigation import document_symbols

        rel = ls.relative(params.text_document.uri)
        checked = ls.checker.latest if ls.checker is not None else None
        entry = checked.entry_at(rel) if checked is not None and rel is not None else None
        if checked is None or entry is None:
            return None
        return [
            types.SymbolInformation(name=name, kind=kind, location=ls.location(checked, (entry.path, line, column)))
            for name, kind, line, column in document_symbols(entry)
        ]

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_actions(ls: FlopkbServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        from flopkb.editor.create import create_actions

        uri, diagnostics = params.text_document.uri, list(params.context.diagnostics)
        document = ls.answered(uri, vocabulary=True)
        if document is None:
            return None
        rel, text = document  # the buffer as it is now: the diagnostics' places may be of an older one
        version = ls.workspace.get_text_document(uri).version if versions_edits(ls.client_capabilities) else None
        placed = partial(ls.tracked.placed, uri, rel)
        actions = quick_fixes(uri, diagnostics, text, version, ls.checker_encoding, placed)
        checked = ls.checker.latest if ls.checker is not None else None
        if checked is not None and ls.config is not None and creates_files(ls.client_capabilities):
            actions += create_actions(
                checked, ls.config, rel, text, version, diagnostics, ls.uri_of, ls.checker_encoding
            )
        return actions or None

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    async def formatting(ls: FlopkbServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
        """`flopkb fmt` on the buffer: the whole text replaced by its canonical form, comments kept; nothing when fmt
        leaves the file as it is (a problem, or a form it could not keep the meaning of)."""
        from flopkb.authoring.fmt import format_bytes

        document = ls.answered(params.text_document.uri)
        if document is None:
            return None
        rel, text = document
        encoded = text.encode("utf-8", errors="surrogatepass")
        outcome = await ls.off_loop(partial(format_bytes, encoded, rel), ls.formatting, key=rel)
        if not outcome.changed or outcome.text is None:
            return None
        end = lsp_position(text, len(text), ls.checker_encoding)
        whole = types.Range(start=types.Position(line=0, character=0), end=end)
        return [types.TextEdit(range=whole, new_text=outcome.text)]

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    def inlay_hints(ls: FlopkbServer, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        from flopkb.editor.inlay import document_hints

        rel = ls.relative(params.text_document.uri)
        checked = ls.checker.latest if ls.checker is not None else None
        found = document_hints(checked, rel, ls.checker_encoding) if checked is not None and rel is not None else None
        if found is None:
            return None
        return [hint for hint in found if params.range.start.line <= hint.position.line <= params.range.end.line]

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(
        ls: FlopkbServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        from flopkb.editor.rename import prepared

        rel = ls.relative(params.text_document.uri)
        checked = await ls.current() if rel is not None else None
        if rel is None or checked is None:
            return None
        return prepared(checked, rel, params.position, ls.checker_encoding)

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def rename(ls: FlopkbServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        from flopkb.editor.rename import merged, named_at, planned, refused, workspace_edit
        from flopkb.links.mv import MoveError

        rel = ls.relative(params.text_document.uri)
        checked = await ls.current_on_disk() if rel is not None else None
        if rel is None or checked is None:
            return None
        old, _, _ = named_at(checked, rel, params.position, ls.checker_encoding)
        try:
            move = planned(checked, old, params.new_name)
        except MoveError as error:
            raise refused(str(error)) from None
        return workspace_edit(checked, *merged([move]), ls.uri_of, ls.checker_encoding, renamed=move)

    @server.feature(
        types.WORKSPACE_WILL_RENAME_FILES,
        types.FileOperationRegistrationOptions(
            filters=[
                types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*.{yaml,yml}")),
                types.FileOperationFilter(
                    pattern=types.FileOperationPattern(glob="**", matches=types.FileOperationPatternKind.Folder)
                ),
            ]
        ),
    )
    async def will_rename_files(ls: FlopkbServer, params: types.RenameFilesParams) -> types.WorkspaceEdit | None:
        from flopkb.editor.rename import explorer_edit, files_moved, in_records

        renamed = [(ls.relative(item.old_uri), ls.relative(item.new_uri)) for item in params.files]
        if ls.config is None or not in_records(ls.config, [old for old, _ in renamed]):
            return None  # not worth a check of the whole base
        checked = await ls.current_on_disk()
        if checked is None or checked.kb is None:
            return None
        edits, originals, warnings = files_moved(checked, renamed)
        edit, refusals = explorer_edit(checked, edits, originals, ls.uri_of, ls.checker_encoding)
        for warning in [*warnings, *refusals]:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, warning))
        return edit

    @server.feature(types.WORKSPACE_SYMBOL)
    def find_symbols(ls: FlopkbServer, params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation] | None:
        from flopkb.editor.navigation import workspace_symbols

        checked = ls.checker.latest if ls.checker is not None else None
        if checked is None or checked.kb is None:
            return None
        return [
            types.SymbolInformation(name=name, kind=kind, container_name=detail, location=ls.location(checked, place))
            for name, kind, detail, place in workspace_symbols(checked.kb, params.query, SYMBOLS)
        ]

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: FlopkbServer, params: None) -> None:
        if ls.checker is not None:
            ls.checker.stop()

    @server.feature(types.EXIT)
    def exit_server(ls: FlopkbServer, params: None) -> None:
        """Let the checking thread store the load cache and the latest diagnostics for the next start, for a while."""
        if ls.checker is not None:
            ls.checker.stop()
            ls.checker.join(STORE_SECONDS)

    return server

"""Checks in a thread of their own: the whole pipeline over the files on disk with the open buffers laid over them.

The message loop never waits for a check: an edit records the buffers and
wakes the checking thread, which compiles the base read through an
`Overlay` of the buffers over the work tree (`flopkb.load.sources`): a
buffer is loaded as its file would be, a new record's buffer is a file of
the base, and the load cache keys it by its digest like any file. A check that an edit supersedes stops before its
next stage and its result is dropped; the thread then checks the newest
buffers. Each finished check is handed to `on_checked` with every file's
diagnostics, converted to the client's positions; what loading and the
stages derived is kept for the next check (the load cache in memory), so a
keystroke reloads the edited buffer alone and the stages redo only what
depends on it. The bases of earlier checks are collected once typing
pauses, or every few checks.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from lsprotocol import types
from pygls import uris

from flopkb.config import Config
from flopkb.editor.diagnostics import to_lsp
from flopkb.editor.positions import diagnostic_range
from flopkb.editor.related import related_places
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase, Stage
from flopkb.load.files import Unreadable
from flopkb.load.source import decode
from flopkb.load.sources import Overlay
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base, stamp_severities
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.diagnostics import Diagnostic, internal_error

IDLE_SECONDS = 0.5
"""The previous checks' bases are collected once no edit came for this long after a check ..."""
UNCOLLECTED_CHECKS = 4
"""... or after this many checks (a base is kept by each until then)."""


@dataclass(frozen=True)
class Buffer:
    """An open document: its text and the client's version of it."""

    text: str
    version: int


@dataclass
class Checked:
    """One finished check."""

    config: Config
    generation: int
    buffers: dict[str, Buffer]
    """The buffers it checked, by root-relative path."""
    kb: KnowledgeBase | None
    """The compiled base (None when the check failed)."""
    diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    """Every file's diagnostics, by root-relative path, in the client's positions."""
    texts: dict[str, str] = field(default_factory=dict)
    """The text each file's diagnostics were placed in."""

    entries_by_path: dict[str, Entry] = field(default_factory=dict)

    def entry_at(self, rel: str) -> Entry | None:
        if not self.entries_by_path and self.kb is not None:
            self.entries_by_path = {entry.path: entry for entry in self.kb.entries.values()}
        return self.entries_by_path.get(rel)

    def text_of(self, rel: str) -> str:
        """The text of a file as this check read it: its buffer, its loaded source, or the file."""
        text = self.texts.get(rel)
        if text is None:
            entry = self.entry_at(rel)
            if rel in self.buffers:
                text = self.buffers[rel].text
            elif entry is not None and entry.source is not None:
                text = entry.source.text
            else:
                text = _disk_text(self.config, rel)
            self.texts[rel] = text
        return text


class Checker:
    """The checking thread of one server: `update` the buffers, get each finished check in `on_checked`."""

    def __init__(self, config: Config, encoding: str, on_checked: Callable[[Checked], None]) -> None:
        self.config = config
        self.encoding = encoding
        self.latest: Checked | None = None
        self._on_checked = on_checked
        self._cache = FileCache(config)
        self._buffers: dict[str, Buffer] = {}
        self._generation = 0
        self._done = -1
        self._stopping = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="flopkb-check", daemon=True)
        self._thread.start()

    def update(self, buffers: dict[str, Buffer], config: Config | None = None, *, disk: bool = False) -> int:
        """The generation of the check of these buffers and configuration: a new one when they changed, or when files
        on disk did (`disk`)."""
        with self._changed:
            if buffers == self._buffers and config in (None, self.config) and not disk and self._generation > 0:
                return self._generation
            self._buffers = dict(buffers)
            if config is not None and config != self.config:
                self.config, self._cache = config, FileCache(config)
            self._generation += 1
            self._changed.notify_all()
            return self._generation

    def wait(self, generation: int | None = None, timeout: float | None = None) -> Checked | None:
        """The finished check of `generation` (default: the newest requested) or a later one, once it is done."""
        with self._changed:
            wanted = self._generation if generation is None else generation
            self._changed.wait_for(lambda: self._done >= wanted or self._stopping, timeout)
            return self.latest

    def stop(self) -> None:
        """Stop checking at the next stage; the thread writes the load cache for the next run, and ends."""
        with self._changed:
            self._stopping = True
            self._generation += 1  # what runs is superseded
            self._changed.notify_all()

    def _run(self) -> None:
        uncollected = 0
        while True:
            with self._changed:
                edited = self._changed.wait_for(
                    lambda: self._generation > self._done or self._stopping, IDLE_SECONDS if uncollected else None
                )
            if not edited or uncollected >= UNCOLLECTED_CHECKS:
                _collect_previous_bases()
                uncollected = 0
            if not edited:
                continue
            with self._changed:
                if self._stopping:
                    self._cache.save()
                    return
                generation, buffers, config, cache = self._generation, self._buffers, self.config, self._cache
            checked = self._check(generation, config, cache, buffers)
            uncollected += 1
            with self._changed:
                if checked is None or generation != self._generation or self._stopping:
                    continue  # superseded: the newer buffers are checked next
                self.latest = checked
                self._on_checked(checked)  # before waiters are woken: what is pushed goes out before what they answer
                self._done = generation
                self._changed.notify_all()

    def _check(self, generation: int, config: Config, cache: FileCache, buffers: dict[str, Buffer]) -> Checked | None:
        texts = {rel: buffer.text for rel, buffer in buffers.items()}
        try:
            encoded = {rel: text.encode("utf-8", errors="surrogatepass") for rel, text in texts.items()}
            over = replace(config, files=Overlay(config.files, encoded))
            stages = self._until_superseded(CHECK_STAGES, generation)
            kb = compile_knowledge_base(over, stages, cache)
            gc.unfreeze()  # loading froze what it allocated; let the previous checks' bases be collected
            if generation != self._generation:
                return None
            cache.keep_derived()
            checked = Checked(over, generation, buffers, kb)
            self._convert(checked, kb.diagnostics)
        except Exception as error:  # flopkb's bug: reported on each open buffer, and the server keeps running
            failed = [internal_error(rel, error, "checking the open files") for rel in buffers]
            checked = Checked(config, generation, buffers, None)
            self._convert(checked, stamp_severities(failed, config))
        return checked

    def _until_superseded(self, stages: Iterable[Stage], generation: int) -> Iterator[Stage]:
        for stage in stages:
            if generation != self._generation:
                return
            yield stage

    def _convert(self, checked: Checked, diagnostics: list[Diagnostic]) -> None:
        kb = checked.kb
        for diagnostic in diagnostics:
            related = [
                types.DiagnosticRelatedInformation(
                    location=types.Location(
                        uri=uri_of(checked.config, path),
                        range=diagnostic_range(checked.text_of(path), line, column, self.encoding),
                    ),
                    message=what,
                )
                for path, line, column, what in (related_places(kb, diagnostic) if kb is not None else [])
            ]
            lsp = to_lsp(diagnostic, checked.text_of(diagnostic.path), self.encoding, related or None)
            checked.diagnostics.setdefault(diagnostic.path, []).append(lsp)


def _collect_previous_bases() -> None:
    """The bases of the checks before the last are cyclic garbage, which the next check's loading would freeze out of
    the collector's reach for good (`pipeline.compile._bulk_allocation`): the server grew by a base a keystroke.

    A full collection takes as long as a keystroke's check, so it runs when typing pauses (or every few checks).
    """
    gc.collect()


def uri_of(config: Config, rel: str) -> str:
    """The URI of a root-relative path."""
    path = str(config.root / rel)
    return uris.from_fs_path(path) or Path(path).as_uri()


def _disk_text(config: Config, rel: str) -> str:
    """The text of a file that is not a loaded record (the vocabulary, a file that failed): empty if unreadable."""
    try:
        decoded = decode(config.files.read(rel), rel)
    except Unreadable:
        return ""
    return decoded if isinstance(decoded, str) else ""

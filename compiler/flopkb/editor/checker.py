"""Checks in threads of their own: the edited buffer first, then the whole pipeline over the files on disk with the
open buffers laid over them.

The message loop never waits for a check: an edit records the buffers and
wakes two threads. The first checks the edited buffer alone against the
latest full check (`flopkb.editor.focus`: the pipeline's stages over the
records its file's diagnostics read) and hands its file's diagnostics out at
once. The second compiles the whole base, read through an `Overlay` of the
buffers over the work tree (`flopkb.load.sources`): a buffer is loaded as its
file would be, a new record's buffer is a file of the base, and the load
cache keys it by its digest like any file; that check brings every other
file's diagnostics up to date (the records that compute with the edited
one). A check that an edit supersedes stops before its next stage and its
result is dropped; the thread then checks the newest buffers. Each finished
check is handed to `on_checked` with its files' diagnostics, converted to the
client's positions; what loading and the stages derived is kept for the next
check (the load cache in memory), so a keystroke reloads the edited buffer
alone and the stages redo only what depends on it.

A base that a newer full check replaces is released (`KnowledgeBase.release`)
once nothing reads it: its cycles broken, it is freed at once, without the
full collections that took seconds at 10,000 records while typing.

The first check, of the files on disk, starts when the checker is made
(its thread imports the pipeline: this module and the server's import none
of it): `flopkb lsp` makes it before it imports pygls and lsprotocol (0.6 s),
and imports them once the check is about to parse (`until_underway`), so
the parse workers (`flopkb.pipeline.compile.read_sources`) parse while the
server imports them (`flopkb.editor.start`). It waits for `attach` (the
client's position encoding, where checks go) before converting. Its
diagnostics go out before their related places (`flopkb.editor.convert`),
whose files it then parses again with positions (0.2 to 0.4 s at 10,000 records): later checks find those
positions kept in the load cache. What its loading froze is unfrozen after
them too, as that sets off a full collection. With nothing stored in the load
cache, it loads as `flopkb check --no-cache` does (the cache's answer-first
run: no file read, hashed and stat-ed before the parse), and the cache keeps
what it loaded once its diagnostics are out (`FileCache.settle`). Loaded, it
tells the open buffers before its stages run over the whole base (0.7 to 1.1 s
of CPU at 10,000 records): `_open_first`. A document opened with its file's
text (as an editor opens one as it starts the server) does not supersede a
check, which would load the base again (`_current`).

Before it, when the last check stored its diagnostics and they still hold
for the files on disk (`flopkb.pipeline.verdict`: every record's stat as
the load cache kept it), those are handed out as soon as the client's
encoding is known, without related places and without loading anything;
the first check then starts (with a warm cache it parses nothing that could
overlap the import), and its diagnostics, the same, change nothing the
server pushes but the related places. When the server stops, the latest
check's diagnostics are stored in turn, with the load cache.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from flopkb.config import Config
from flopkb.editor.checked import Buffer, Checked, disk_text
from flopkb.editor.disk import Remembered
from flopkb.load.sources import Overlay
from flopkb.pipeline.verdict import store, stored, stored_path
from flopkb.report.diagnostics import Diagnostic, internal_error

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase, Stage
    from flopkb.pipeline.cache import FileCache


OPEN_FIRST = 8
"""At most this many open buffers are told before the first check's stages run (`Checker._open_first`)."""
OUT_SECONDS = 1.0
"""How long the first check waits for the stored diagnostics to be sent (by the message loop) before it starts."""


def _at_once(release: Callable[[], None]) -> None:
    release()


class Checker:
    """The checking threads of one server: `update` the buffers, get each finished check in `on_checked` (`attach`).

    The first check, of the files on disk, starts at once. `on_loop` runs a function once nothing reads the base a
    newer check replaced any more (the server: after the requests that took it, `FlopkbServer.after_requests`; by
    default, at once): there, that base is released. `told_of_disk`: every change of a file on disk is told
    (`update(disk=True, changed=...)`), so the disk is not walked and stat-ed every check (`flopkb.editor.disk`).
    """

    def __init__(self, config: Config) -> None:
        self._told_of_disk = False
        self.config = config
        self.encoding: str | None = None
        """The client's position encoding: None until `attach`."""
        self.latest: Checked | None = None
        """The latest full check."""
        self.preview: Checked | None = None
        """The latest check of an edited buffer first (`flopkb.editor.focus`): its file's diagnostics only."""
        self._on_checked: Callable[[Checked], None] = _dropped
        self._on_loop: Callable[[Callable[[], None]], None] = _at_once
        self._uri: Callable[[str], str] | None = None
        """The URI of a root-relative path, for the related places of diagnostics (None: under the base's folder)."""
        self._cache: FileCache | None = None
        """The load cache: made by the checking thread, once it has imported the pipeline."""
        self._buffers: dict[str, Buffer] = {}
        self._generation = 0
        self._done = -1
        self._previewed = 0
        self._disk_from = 0
        """The first generation whose check read the files on disk (and the configuration) as they are now."""
        self._cached: Checked | None = None
        """The last check loaded through the load cache: the one whose stats it keeps."""
        self._stored_out = False  # whether the diagnostics the last check stored were handed out
        self._in_use: KnowledgeBase | None = None
        """The base the check of an edited buffer reads; released after it when it was retired meanwhile."""
        self._retired: list[KnowledgeBase] = []
        self._stopping = False
        self._underway = threading.Event()
        """Set once the first check is about to parse, or diagnostics are stored to read (`until_underway`)."""
        self._changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._run, name="flopkb-check", daemon=True),
            threading.Thread(target=self._run_first, name="flopkb-check-first", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def attach(
        self,
        encoding: str,
        on_checked: Callable[[Checked], None],
        on_loop: Callable[[Callable[[], None]], None] = _at_once,
        *,
        told_of_disk: bool = False,
        uri: Callable[[str], str] | None = None,
    ) -> None:
        """Convert checks to `encoding` (with their related places at `uri(path)`) and hand them to `on_checked`, from
        the first on."""
        with self._changed:
            self._told_of_disk, self._uri = told_of_disk, uri
            self.config = self._remembering(self.config)
            self._on_checked, self._on_loop, self.encoding = on_checked, on_loop, encoding
            self._changed.notify_all()

    def update(
        self,
        buffers: dict[str, Buffer],
        config: Config | None = None,
        *,
        disk: bool = False,
        changed: Iterable[str] | None = None,
    ) -> int:
        """The generation of the check of these buffers and configuration: a new one when they changed, or when files
        on disk did (`disk`: those at `changed`, root-relative, or any when None)."""
        with self._changed:
            if buffers == self._buffers and config is None and not disk:
                return self._generation
            self._buffers = dict(buffers)
            self._generation += 1
            if config is not None:
                self.config, self._cache = self._remembering(config), None
                disk = True
            if disk:
                self._disk_from = self._generation
                if isinstance(self.config.files, Remembered):
                    self.config.files.forget(changed)
            self._changed.notify_all()
            return self._generation

    def _remembering(self, config: Config) -> Config:
        return replace(config, files=Remembered(config.files)) if self._told_of_disk else config

    def wait(
        self, generation: int | None = None, timeout: float | None = None, rel: str | None = None
    ) -> Checked | None:
        """The finished check of `generation` (default: the newest requested) or a later one, once it is done; when
        only the file `rel`'s diagnostics are wanted, the check of the edited buffer first, if it told them."""
        with self._changed:
            wanted = self._generation if generation is None else generation

            def told() -> bool:
                first = self.preview
                return first is not None and first.generation >= wanted and rel in (first.files or ())

            self._changed.wait_for(lambda: self._done >= wanted or self._stopping or told(), timeout)
            return self.preview if self._done < wanted and told() else self.latest

    def until_underway(self, timeout: float) -> None:
        """Wait, at most `timeout` seconds, until the first check is about to parse (its files listed and stat-ed:
        `FileCache`'s `on_parse`) or diagnostics are stored to read: what `flopkb lsp` imports after this (pygls) does
        not contend with the pipeline's import and the reads before the parse, and is imported while workers parse."""
        self._underway.wait(timeout)

    def stop(self) -> None:
        """Stop checking at the next stage; the thread writes the load cache and the latest check's diagnostics
        (`flopkb.pipeline.verdict`) for the next run, and ends."""
        with self._changed:
            self._stopping = True
            self._generation += 1  # what runs is superseded
            self._changed.notify_all()

    def join(self, timeout: float) -> None:
        """Wait for the checking thread to end (after `stop`), at most `timeout` seconds."""
        self._threads[0].join(timeout)

    def _run(self) -> None:
        self._hand_out_stored()
        from flopkb.pipeline.cache import FileCache  # once what was stored is out: see the module

        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._generation > self._done or self._stopping)
                if self._stopping:
                    if self._cache is not None:
                        self._cache.save(then=self._storing(self._cache))
                    return
                if self._cache is None:
                    self._cache = FileCache(self.config, answer_first=True, on_parse=self._underway.set)
                generation, buffers, config, cache = self._generation, self._buffers, self.config, self._cache
            first = self.latest is None  # written by this thread alone
            self._check_and_hand_out(generation, config, cache, buffers)
            cache.settle()  # before unfreezing: it allocates, and the full collection would rescan the base
            if first:
                gc.unfreeze()  # after the first diagnostics: see `_check`

    def _check_and_hand_out(
        self, generation: int, config: Config, cache: FileCache, buffers: dict[str, Buffer]
    ) -> None:
        compiled = self._check(generation, config, cache, buffers)
        with self._changed:
            self._changed.wait_for(lambda: self.encoding is not None or self._stopping)
            if compiled is None or self._stopping:
                return  # superseded (and released), or the server stops
            first = self.latest is None
        if first:  # out before its related places (module docstring)
            partial = self._converted(*compiled, related=False)
            with self._changed:
                if self._current(compiled[0]):
                    partial.generation, partial.buffers = compiled[0].generation, compiled[0].buffers
                    self._on_checked(partial)
        checked = self._converted(*compiled)
        with self._changed:
            if not self._current(checked):
                if checked.kb is not None:
                    checked.kb.release()  # seen by no one
                return  # superseded: the newer buffers are checked next
            retired, self.latest = self.latest, checked
            self._on_checked(checked)  # before waiters are woken: what is pushed goes out before what they answer
            self._done = checked.generation
            self._changed.notify_all()
        if retired is not None and retired.kb is not None:
            self._on_loop(functools.partial(self._retire, retired.kb))

    def _hand_out_stored(self) -> None:
        """Hand out the diagnostics that the last check stored, when they hold for the files on disk (and neither the
        disk nor the settings were said to change since, and the buffers opened meanwhile are those files): before the
        first check, which then starts."""
        path = stored_path(self.config)
        if path is not None and path.exists():
            self._underway.set()  # they may hold: then the server is wanted first
        found = stored(self.config)
        if found is None:
            return
        with self._changed:
            self._changed.wait_for(lambda: self.encoding is not None or self._stopping)
            if self._stopping:
                return
            config = self.config
        handed = self._converted(Checked(config, 0, {}, None), found, related=False)
        with self._changed:
            buffers = dict(self._buffers)
            if (
                self.latest is None
                and not self._stopping
                and self._disk_from == 0
                and all(disk_text(config, rel) == buffer.text for rel, buffer in buffers.items())
            ):
                handed.buffers = buffers
                self._on_checked(handed)
                self._stored_out = True
            else:
                return
        out = threading.Event()
        self._on_loop(out.set)  # after them: the check would hold the interpreter while they are sent
        out.wait(OUT_SECONDS)

    def _storing(self, cache: FileCache) -> Callable[[], None] | None:
        """Storing the latest check's diagnostics (`flopkb.pipeline.verdict`), when the load cache keeps its stats;
        where they are not the disk's, `store` tells."""
        latest = self.latest
        if latest is None or latest.kb is None or latest is not self._cached:
            return None
        read = {rel: buffer.text.encode("utf-8", errors="surrogatepass") for rel, buffer in latest.buffers.items()}
        return functools.partial(store, latest.config, cache, latest.kb.diagnostics, latest.began, read)

    def _retire(self, kb: KnowledgeBase) -> None:
        with self._changed:
            if kb is self._in_use:
                self._retired.append(kb)  # released once the check of the edited buffer is done with it
                return
        kb.release()

    def _run_first(self) -> None:
        """Check each edited buffer first, against the latest full check, while the next full check runs."""
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._generation > self._previewed or self._stopping)
                if self._stopping:
                    return
                generation = self._previewed = self._generation
                base, buffers, config = self.latest, self._buffers, self.config
                if base is None or base.kb is None or base.generation < self._disk_from:
                    continue
                self._in_use = base.kb
            checked = self._check_first(generation, config, base, buffers)
            with self._changed:
                self._in_use = None
                retired, self._retired = self._retired, []
                if checked is not None and generation == self._generation and self._done < generation:
                    self.preview = checked
                    self._on_checked(checked)
                    self._changed.notify_all()
            for kb in retired:
                kb.release()

    def _check_first(
        self, generation: int, config: Config, base: Checked, buffers: dict[str, Buffer]
    ) -> Checked | None:
        """The check of the edited buffer, when it alone differs from the buffers of `base`; None otherwise, or when
        only a full check tells (`flopkb.editor.focus`; the full check reports whatever fails here)."""
        assert base.kb is not None
        edited = [
            rel
            for rel in buffers.keys() | base.buffers.keys()
            if rel not in buffers or rel not in base.buffers or buffers[rel].text != base.buffers[rel].text
        ]
        if len(edited) != 1 or edited[0] not in buffers:
            return None
        rel = edited[0]
        over = _overlaid(config, buffers)
        from flopkb.editor.focus import focused_check
        from flopkb.pipeline.stages import CHECK_STAGES

        kb: KnowledgeBase | None = None
        try:
            kb = focused_check(base.kb, over, rel, CHECK_STAGES)
            if kb is None:
                return None
            checked = Checked(over, generation, buffers, kb, files=frozenset([rel]))
            checked.diagnostics[rel] = []
            self._converted(checked, kb.diagnostics)
            checked.kb = None
            return checked
        except Exception:  # flopkb's bug: the full check that follows reports it
            return None
        finally:
            if kb is not None:
                kb.release()

    def _check(
        self, generation: int, config: Config, cache: FileCache, buffers: dict[str, Buffer]
    ) -> tuple[Checked, list[Diagnostic]] | None:
        """The check of `buffers` and its diagnostics, not yet converted; None when superseded."""
        from flopkb.pipeline.compile import compile_knowledge_base
        from flopkb.pipeline.stages import CHECK_STAGES

        try:
            over = _overlaid(config, buffers)
            checked = Checked(over, generation, buffers, None, began=time.time_ns())
            stages = self._until_superseded(CHECK_STAGES, checked, config)
            kb = checked.kb = compile_knowledge_base(over, stages, cache)
            self._cached = checked
            if self.latest is not None:
                # loading froze what it allocated; what the process held before is not kept frozen. The full
                # collection this sets off (0.7 to 1.5 s at 10,000 records) would delay the first diagnostics: the
                # first check unfreezes after it is out (`_run`)
                gc.unfreeze()
            with self._changed:
                current = self._current(checked)
            if not current:
                kb.release()
                return None
            cache.keep_derived()
            return checked, kb.diagnostics
        except Exception as error:  # flopkb's bug: reported on each open buffer, and the server keeps running
            return _failed(config, generation, buffers, error)
        finally:
            self._underway.set()  # a check that failed before its parse: the server is imported at once

    def _until_superseded(self, stages: Iterable[Stage], checked: Checked, config: Config) -> Iterator[Stage]:
        """The stages, until newer buffers or files supersede the check; before them, once the base is loaded, the
        first check tells its open buffers (`_open_first`)."""

        def loaded(kb: KnowledgeBase) -> list[Diagnostic]:  # a stage that reports nothing
            checked.kb = kb
            with contextlib.suppress(Exception):  # flopkb's bug: the check tells those files all the same
                self._open_first(checked, config)
            return []

        yield loaded
        for stage in stages:
            with self._changed:
                if not self._current(checked):
                    checked.stopped = True
                    return
            yield stage

    def _current(self, checked: Checked) -> bool:
        """Whether `checked` (a full check) is the check of the newest buffers; called with the lock held. Newer
        buffers that read as its files did (a document opened with its file's text), with neither the disk nor the
        settings said to change since it began, do not supersede it: it becomes their check (generation, buffers)."""
        if self._stopping or checked.stopped:
            return False
        if checked.generation == self._generation:
            return True
        if self._disk_from > checked.generation or checked.kb is None:
            return False
        from flopkb.editor.focus import differing

        if differing(checked.kb, checked.config.records, _texts(checked.buffers), _texts(self._buffers)) != set():
            return False
        checked.generation, checked.buffers = self._generation, self._buffers
        return True

    def _open_first(self, checked: Checked, config: Config) -> None:
        """Hand out the open buffers' diagnostics once the first check has loaded the base, before its stages: each
        checked against the base as loaded (`flopkb.editor.focus.told_first`), equal to what the check then hands out
        for them (without related places, as its first hand-out), so not pushed again. The buffers are the newest:
        those loaded, or newer ones that differ in one file, typed into meanwhile (then only it is told, and the check
        of the newest tells it again first). Not after stored diagnostics were handed out."""
        from flopkb.editor.convert import convert
        from flopkb.editor.focus import differing, told_first
        from flopkb.pipeline.stages import CHECK_STAGES

        if self.latest is not None or self._stored_out or checked.kb is None:
            return
        records = checked.config.records
        with self._changed:
            if self.encoding is None or self._stopping or self._disk_from > checked.generation:
                return
            self._current(checked)  # when the newest buffers read as these: the check is theirs
            buffers, encoding = self._buffers, self.encoding
            changed = differing(checked.kb, records, _texts(checked.buffers), _texts(buffers))
        if changed is None or len(changed) > 1 or not buffers:
            return
        over = _overlaid(config, buffers)
        told, found = told_first(checked.kb, over, sorted(changed or buffers)[:OPEN_FIRST], CHECK_STAGES)
        if not told:
            return
        early = Checked(over, 0, buffers, None, files=frozenset(told), related=False)
        early.diagnostics = {rel: [] for rel in told}
        convert(early, found, encoding, related=False)
        with self._changed:
            newest = self._buffers
            if self._stopping or self._disk_from > checked.generation:
                return
            if differing(checked.kb, records, _texts(checked.buffers), _texts(newest)) != changed or any(
                newest[rel].text != buffers[rel].text for rel in changed
            ):
                return  # a newer edit
            self._current(checked)
            early.generation, early.buffers = self._generation, newest
            self._on_checked(early)

    def _converted(self, checked: Checked, found: list[Diagnostic], *, related: bool = True) -> Checked:
        """`checked` with the diagnostics `found` in the client's positions; without their related places, a copy."""
        from flopkb.editor.convert import convert  # here: the first check starts before lsprotocol is imported

        assert self.encoding is not None
        into = checked if related else replace(checked, diagnostics={}, related=False)
        try:
            convert(into, found, self.encoding, related=related, uri=self._uri)
        except Exception as error:  # flopkb's bug: reported as a failed check is
            if checked.kb is not None and related:
                checked.kb.release()
            into, found = _failed(checked.config, checked.generation, checked.buffers, error)
            convert(into, found, self.encoding, uri=self._uri)
        return into


def _failed(
    config: Config, generation: int, buffers: dict[str, Buffer], error: Exception
) -> tuple[Checked, list[Diagnostic]]:
    """A check that failed: an `internal-error` on each open buffer."""
    from flopkb.pipeline.compile import stamp_severities

    failed = [internal_error(rel, error, "checking the open files") for rel in buffers]
    return Checked(config, generation, buffers, None), stamp_severities(failed, config)


def _dropped(checked: Checked) -> None:
    """Where checks go before `Checker.attach`: nowhere (none is handed out before it)."""


def _overlaid(config: Config, buffers: dict[str, Buffer]) -> Config:
    """The configuration whose files are the work tree's with the buffers laid over them."""
    encoded = {rel: buffer.text.encode("utf-8", errors="surrogatepass") for rel, buffer in buffers.items()}
    return replace(config, files=Overlay(config.files, encoded))


def _texts(buffers: dict[str, Buffer]) -> dict[str, str]:
    return {rel: buffer.text for rel, buffer in buffers.items()}

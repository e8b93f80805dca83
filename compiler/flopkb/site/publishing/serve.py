"""`flopkb serve`: build the site, serve it on 127.0.0.1, rebuild on every change, and reload the readers' pages.

- The site is built as `flopkb build` builds it (same checks, same refusal on
  errors, same pages into `build/site/`), then served from there by a
  small threaded HTTP server bound to 127.0.0.1 only, which answers only
  requests for a loopback name, and only with files of the site
  (`flopkb.site.publishing.serve_http`). The first build swaps
  its site in whole; a rebuild with the previous build's state changes the
  site in place (`build(..., update=lock)`): it builds the changed pages
  beside it and moves them in, holding a lock that every page read takes,
  so that a reader never gets a page of a half-moved rebuild, and no
  rebuild hard-links or deletes 10,000 unchanged files.
- A rebuild takes the previous build's state, and mkdocs' gathered files,
  from this process's memory (`flopkb.site.incremental.held`,
  `flopkb.site.incremental.kept`), not from disk: the state is written when
  a whole site is swapped in (the first build) and when the server stops,
  never after a save, and the one on disk is removed before a save changes
  the site, so that a server killed meanwhile leaves none to trust.
- `watchfiles` watches the base's `records/` and `schema/` folders and the
  presentation folder (`site/`: templates, assets, overrides). A batch of
  changes triggers one rebuild, in this process (warm imports and the load
  cache make a rebuild of a small base take about a second).
- Pages are reloaded by polling: every HTML page the server sends gets a tiny
  script that asks `/__flopkb__/version` a few times a second and reloads the
  page when the version changes, which it does as soon as the saved records'
  pages are in the site (`flopkb.site.publishing.first`), and again once all
  of a rebuild's pages are (the load cache is written after). While a text field
  of the page holds text (a search being typed), the reload waits until it is
  empty: the reader's query is never lost. The script is added to the response only;
  the built site never contains it. When a rebuild is refused (the base has
  errors), the old site stays up and the pages show the diagnostics in a
  banner until the next good build.
- Search is indexed when a reader searches: pagefind has no incremental mode
  and re-indexing the whole site took 25 s of CPU at 10,000 records, after
  every save. A rebuild does not run it: the new site takes the previous
  site's index (`build(..., search=False)`) and marks it out of date; the
  first request for the index's entry file (a reader's first search since
  the save) indexes the site in a subprocess, into a folder beside it, swaps
  the new `pagefind/` in and only then answers, so a search never reads an
  index older than the pages. A site with no index yet (the first build) is
  indexed at once, in the background. Once indexed, the site is the one
  `flopkb build` writes, byte for byte.
- Memory stays flat, and a save costs no full collection: the compiled base
  stays frozen out of the cyclic collector's reach (`gc.freeze`) while it is
  served, and the next build releases it (`KnowledgeBase.release`: its only
  cycles are through its graph and lazy results), so that reference counting
  frees it. Each rebuild then collects only what it left outside the frozen
  base (mkdocs' pages, the rendering), after its pages are served. Should the
  frozen objects still grow by a quarter since the last full collection (a
  base that failed half-built, a cycle nobody broke), a full one runs.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from flopkb.site.incremental.held import Held
from flopkb.site.publishing.publish import (
    BuildError,
    build,
    remove_folder,
    site_paths,
    site_root_of,
    state_path,
    swap_in,
)
from flopkb.site.publishing.search import BUNDLE, SearchIndexError, index_command
from flopkb.site.publishing.serve_http import INDEX_ENTRY, VERSION_PATH, Listener, handler

__all__ = ["VERSION_PATH", "BackgroundIndex", "ServeError", "Server", "run"]

if TYPE_CHECKING:
    from flopkb.config import Config
    from flopkb.kb.knowledge_base import KnowledgeBase
    from flopkb.links.graph import LinkGraph


def _discard_later(folder: Path) -> None:
    """Delete a swapped-out site in the background: the new one is served meanwhile."""
    threading.Thread(target=remove_folder, args=(folder,), name="flopkb-discard", daemon=True).start()


FROZEN_GROWTH = 1.25
"""A full collection runs when the frozen objects outnumber those after the last full one by this factor."""
STOP_WAIT = 60.0
"""Seconds `stop` waits for a rebuild under way to end, to write the build state (else the next build is full)."""
SEARCH_WAIT = 300.0
"""Seconds a reader's first search after a save waits for the index (pagefind takes about 25 s at 10,000 records)."""


class BackgroundIndex:
    """The served site's search index, written by pagefind in a subprocess when a reader asks for it.

    A rebuild marks the index out of date (`stale`); the first search after it
    (`ensure`, on the request for the index's entry file) indexes the site and
    waits for it. A site with no index at all (the first build) is indexed at
    once, in the background, so that the search box has its scripts.
    """

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self._lock = threading.Lock()
        self._control = threading.Lock()
        """Held to start or stop an indexing (rebuilds and readers' requests come from different threads)."""
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._cancelled = threading.Event()
        self.pending = False
        """The served site's pages are newer than its index."""

    def start(self, site_dir: Path) -> None:
        with self._control:
            self._start(site_dir)

    def _start(self, site_dir: Path) -> None:
        self._cancel()
        self._cancelled.clear()
        self.pending = True
        self._thread = threading.Thread(target=self._run, args=(site_dir,), name="flopkb-search", daemon=True)
        self._thread.start()

    def stale(self, site_dir: Path) -> None:
        """The site's pages changed: index it when a reader searches (at once if it has no index yet)."""
        with self._control:
            self._cancel()
            self.pending = True
            if not (site_dir / BUNDLE / INDEX_ENTRY).is_file():
                self._start(site_dir)

    def ensure(self, site_dir: Path, timeout: float) -> None:
        """Bring the index up to date if it is not, and wait (up to `timeout` seconds) for it to be."""
        deadline = time.monotonic() + timeout
        while self.pending and time.monotonic() < deadline:
            with self._control:
                if self.pending and (self._thread is None or not self._thread.is_alive()):
                    self.say("search: indexing the site for the first search since it changed")
                    self._start(site_dir)
                thread = self._thread
            if thread is not None:
                thread.join(max(0.0, deadline - time.monotonic()))

    def cancel(self) -> None:
        with self._control:
            self._cancel()

    def _cancel(self) -> None:
        with self._lock:
            self._cancelled.set()
            if self._process is not None:
                self._process.terminate()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the indexing under way, if any, to end."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self, site_dir: Path) -> None:
        start = time.perf_counter()
        work = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}-search-", dir=site_dir.parent))
        try:
            try:
                command = index_command(site_dir, work / BUNDLE)
            except SearchIndexError as error:
                self.say(f"search: {error}")
                return
            with self._lock:
                if self._cancelled.is_set():
                    return
                process = self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if hasattr(os, "setpriority"):
                with contextlib.suppress(OSError):  # the reader's next rebuild comes first
                    os.setpriority(os.PRIO_PROCESS, process.pid, 10)
            _out, errors = process.communicate()
            with self._lock:
                status, self._process = process.returncode, None
                if self._cancelled.is_set():
                    return
                if status != 0:
                    self.say(f"search: pagefind failed (exit status {status}): {errors.decode(errors='replace')}")
                    return
                old = swap_in(work / BUNDLE, site_dir / BUNDLE)
                self.pending = False
            if old is not None:
                remove_folder(old)
            self.say(f"search index updated in {time.perf_counter() - start:.1f} s")
        finally:
            remove_folder(work)


class ServeError(Exception):
    """The server cannot start (port in use, unusable site folder)."""


class _State:
    def __init__(self) -> None:
        self.version = 0
        self.state = "starting"
        self.message = ""
        self.lock = threading.Lock()

    def set(self, state: str, message: str = "", bump: bool = False) -> None:
        with self.lock:
            if bump:
                self.version += 1
            self.state = state
            self.message = message

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"version": self.version, "state": self.state, "message": self.message}


class Server:
    """A serving session: `start()` builds and listens, `stop()` ends it; `url` is the site's address."""

    def __init__(
        self,
        config: Config,
        port: int = 8000,
        *,
        use_cache: bool = True,
        out: TextIO | None = None,
        on_build: Callable[[int], None] | None = None,
    ) -> None:
        self.config = config
        self.port = port
        self.out = out if out is not None else io.StringIO()
        self.state = _State()
        self.on_build = on_build
        try:
            self.site_dir, self._docs_dir, _ = site_paths(config)
        except BuildError as error:
            raise ServeError(str(error)) from error
        self.cache = None
        if use_cache:
            from flopkb.pipeline.cache import FileCache

            self.cache = FileCache(config)
        self._stop = threading.Event()
        self._httpd: Listener | None = None
        self._threads: list[threading.Thread] = []
        self._build_lock = threading.Lock()
        self._pages = threading.Lock()
        """Held while a rebuild moves its pages into the site, and while a page is read to be sent."""
        self._watching = threading.Event()
        self.search = BackgroundIndex(self._say)
        self._graph: LinkGraph | None = None
        """The last good build's link graph, updated by the next build rather than built anew."""
        self._kb: KnowledgeBase | None = None
        """The last good build's base, released when the next good build replaces it."""
        self._frozen_limit = 0
        """Frozen objects above this many make the next collection a full one (`FROZEN_GROWTH`)."""
        self._held = Held()
        """The last build's state and mkdocs' gathered files, for the next build (written to disk on `stop`)."""

    # -- building ----------------------------------------------------------

    def watched(self) -> list[Path]:
        folders = [self.config.records_path, self.config.root / self.config.schema, site_root_of(self.config)]
        return [folder for folder in dict.fromkeys(f.resolve() for f in folders) if folder.is_dir()]

    def rebuild(self) -> bool:
        """Build once; True when a new site was swapped in."""
        with self._build_lock:
            try:
                return self._build()
            finally:
                self._collect()

    def _collect(self) -> None:
        """Collect what the build left outside the frozen base; everything, when the frozen objects grew (see the
        module). The served base stays frozen: a full collection would scan all of it, a second of CPU at 10,000
        records."""
        gc.collect()
        if gc.get_freeze_count() > self._frozen_limit:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._frozen_limit = int(gc.get_freeze_count() * FROZEN_GROWTH)

    def _build(self) -> bool:
        from flopkb.pipeline.compile import load_entries
        from flopkb.report.reporters import Summary, report

        start = time.perf_counter()
        self.search.cancel()
        try:
            outcome = build(
                self.config,
                load=self.cache or load_entries,
                discard=_discard_later,
                search=False,
                update=self._pages,
                graph=self._graph,
                formulas=self._kb.formulas if self._kb is not None else None,
                keep_frozen=True,
                announce=self._announce,
                held=self._held,
                cached_templates=self.cache is not None,
            )
        except Exception as error:
            message = f"the build failed: {type(error).__name__}: {error}"
            self.state.set("failed", message)
            self._say(message)
            return False
        finally:
            if self.cache is not None:
                self.cache.save()
        kb = outcome.kb
        text = io.StringIO()
        if kb.diagnostics:
            report(kb.diagnostics, Summary.of(kb.diagnostics, records=len(kb.entries)), "text", text, color=False)
        if outcome.refused:
            kb.release()
            message = (
                "flopkb serve: the knowledge base has errors; still serving the last good build\n\n" + text.getvalue()
            )
            self.state.set("refused", message)
            self._say(message)
            return False
        self._graph = kb.graph
        if self._kb is not None:
            self._kb.release()
        self._kb = kb
        self._say(f"{text.getvalue()}built {outcome.pages} pages in {time.perf_counter() - start:.1f} s")
        if self.on_build is not None:
            self.on_build(self.state.snapshot()["version"])
        return True

    def _announce(self) -> None:
        """New pages are in the site (the saved records', or all of the rebuild's): reload the readers' pages now,
        before the build writes its state and the load cache its shards (a second at 10,000 records after an
        accelerator's save)."""
        self.search.stale(self.site_dir)  # before the new version shows: a reader who sees it searches the new pages
        self.state.set("ok", "", bump=True)

    def _search_asked(self) -> None:
        """A reader starts a search: the index they get is the served site's (indexed now if a save changed it)."""
        self.search.ensure(self.site_dir, SEARCH_WAIT)

    def _say(self, text: str) -> None:
        if text:
            print(text.rstrip("\n"), file=self.out, flush=True)

    def _watch(self) -> None:
        from watchfiles import watch

        # The first yield (changes, or none after rust_timeout) means the watcher is set up.
        for changes in watch(
            *self.watched(), stop_event=self._stop, debounce=60, step=30, rust_timeout=250, yield_on_timeout=True
        ):
            self._watching.set()
            if self._stop.is_set():
                break
            if changes:
                self.rebuild()

    # -- serving -----------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/"

    def start(self) -> str:
        """Start watching, build, start listening (in threads); return the URL.

        The watcher is set up before the first build, so that no change made
        while that build runs is missed: it triggers the next one.
        """
        try:
            answer = handler(self.site_dir, self.state.snapshot, self._pages, self._search_asked)
            self._httpd = Listener(("127.0.0.1", self.port), answer)
        except OSError as error:
            raise ServeError(
                f"cannot listen on 127.0.0.1:{self.port}: {error.strerror}; pass another --port"
            ) from error
        self._spawn(self._watch, "flopkb-watch")
        if not self._watching.wait(timeout=30):
            self.stop()
            raise ServeError("could not watch " + ", ".join(str(p) for p in self.watched()))
        self.rebuild()
        self.site_dir.mkdir(parents=True, exist_ok=True)
        self._spawn(self._httpd.serve_forever, "flopkb-http")
        return self.url

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        self.search.cancel()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()
        if self._build_lock.acquire(timeout=STOP_WAIT):
            try:
                with contextlib.suppress(OSError):  # unwritten, the state costs the next build a full one, no more
                    self._held.flush(state_path(self.site_dir), self.site_dir, self._docs_dir)
            finally:
                self._build_lock.release()


def run(config: Config, port: int = 8000, *, use_cache: bool = True, out: TextIO = sys.stdout) -> None:
    """Serve until interrupted (Ctrl-C)."""
    server = Server(config, port, use_cache=use_cache, out=out)
    url = server.start()
    print(
        f"serving {server.site_dir} at {url} (watching {', '.join(str(p) for p in server.watched())}); Ctrl-C stops",
        file=out,
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", file=out)
    finally:
        server.stop()

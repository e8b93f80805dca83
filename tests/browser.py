"""Browser testing helpers: a local static server, Debian's Chromium driven by
Playwright, and a guard that records (and blocks) anything leaving the machine.

Playwright's Python package brings its own driver but no browser; we always
launch the system Chromium (`/usr/bin/chromium`, or $FLOPKB_CHROMIUM) through
`executable_path`. Nothing here downloads anything.

Plain functions and context managers, importable from any test (tests/ is on
sys.path under pytest); the pytest fixtures built on them are in
`browser_fixtures.py`.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from repo import REPO

SCREENSHOT_DIR = REPO / "build" / "screenshots"
CHROMIUM = os.environ.get("FLOPKB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
# Schemes that never leave the machine.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "chrome-extension", "devtools"}


def require_chromium() -> str:
    """The Chromium executable, or skip the test (fail instead when $CI is set)."""
    path = CHROMIUM
    if Path(path).is_file() and os.access(path, os.X_OK):
        return path
    reason = (
        f"Chromium not found at {path}: install Debian's `chromium` package "
        "(apt-get install chromium) or set FLOPKB_CHROMIUM"
    )
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)
    raise AssertionError("unreachable")


def require_playwright():  # -> module playwright.sync_api
    try:
        from playwright import sync_api
    except ImportError:  # pragma: no cover - depends on the machine
        reason = "the playwright Python package is not installed (pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return sync_api


# ---------------------------------------------------------------------------
# A static server


@dataclass
class Served:
    """What a server sent: the path and body size of every response, in order."""

    responses: list[tuple[str, int]] = field(default_factory=list)

    def total(self, *prefixes: str) -> int:
        """Bytes of the responses whose path starts with one of `prefixes` (every response without any)."""
        return sum(size for path, size in self.responses if not prefixes or path.startswith(prefixes))

    def clear(self) -> None:
        self.responses.clear()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    served: Served | None = None

    def log_message(self, format: str, *args: object) -> None:
        pass

    def copyfile(self, source, outputfile) -> None:  # type: ignore[no-untyped-def]
        data = source.read()
        outputfile.write(data)
        if self.served is not None:
            self.served.responses.append((urlsplit(self.path).path, len(data)))

    def end_headers(self) -> None:
        # Every test sees what is on disk now, not a cached copy.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextlib.contextmanager
def serve_directory(root: str | Path, host: str = "127.0.0.1", served: Served | None = None) -> Iterator[str]:
    """Serve `root` over http on a free port; yield the base URL ("http://127.0.0.1:PORT/").

    With `served`, every response's path and body size is appended to it.
    """
    root = Path(root).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"nothing to serve: {root} is not a folder")
    counting = type("_CountingHandler", (_QuietHandler,), {"served": served})
    handler = functools.partial(counting, directory=str(root))
    server = http.server.ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"http:{root.name}", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# ---------------------------------------------------------------------------
# Chromium


@contextlib.contextmanager
def launch_chromium(executable: str | None = None) -> Iterator[object]:
    """Start Playwright and the system Chromium; yield the Browser."""
    sync_api = require_playwright()
    executable = executable or require_chromium()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def file_url_page(browser: object, site: Path) -> Iterator[tuple[object, str, list[str]]]:
    """A desktop page that may open only the files of the built `site`, as a reader who opens it from the file
    system does: the page, the site's `file://` address (ending in /), and the page errors seen (to assert empty)."""
    base = site.resolve().as_uri() + "/"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield page, base, errors
    finally:
        context.close()


def open_at(page: object, url: str, width: int, height: int = 900) -> None:
    """Open `url` in the Playwright `page` on a screen `width` px wide (390: a phone)."""
    page.set_viewport_size({"width": width, "height": height})  # type: ignore[attr-defined]
    page.goto(url)  # type: ignore[attr-defined]


def is_local_url(url: str) -> bool:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in LOCAL_SCHEMES:
        return True
    if scheme in ("http", "https", "ws", "wss"):
        return (parts.hostname or "").lower() in LOCAL_HOSTS
    return False  # file:, ftp:, and anything else count as leaving the site


@dataclass
class PageLog:
    """What a page did that a test may want to forbid."""

    external_requests: list[str] = field(default_factory=list)  # distinct URLs, in order
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)

    def note_external(self, url: str) -> None:
        """Record an outside URL once (routing and the request event both see it)."""
        if url not in self.external_requests:
            self.external_requests.append(url)

    def problems(self) -> list[str]:
        return (
            [f"external request (blocked): {u}" for u in self.external_requests]
            + [f"console error: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed_requests]
        )

    def assert_clean(self) -> None:
        """Fail if anything external was requested or anything errored."""
        problems = self.problems()
        assert not problems, "the page was not clean:\n  " + "\n  ".join(problems)

    def clear(self) -> None:
        for lst in (self.external_requests, self.console_errors, self.page_errors, self.failed_requests):
            lst.clear()


def guard_context(context: object, log: PageLog) -> None:
    """Block and record every non-local request of a BrowserContext (pages and workers)."""

    def route(route: object) -> None:
        url = route.request.url
        if is_local_url(url):
            route.continue_()
        else:
            log.note_external(url)
            route.abort("blockedbyclient")

    context.route("**/*", route)

    def on_request(request: object) -> None:
        # Catches what routing cannot see (e.g. requests a service worker makes).
        url = request.url
        if not is_local_url(url):
            log.note_external(url)

    context.on("request", on_request)


def guard_page(page: object, log: PageLog) -> None:
    """Record console errors, uncaught exceptions and failed local requests of a page."""

    def on_console(msg: object) -> None:
        if msg.type == "error":
            loc = msg.location or {}
            where = f" ({loc.get('url', '')}:{loc.get('lineNumber', '')})" if loc.get("url") else ""
            log.console_errors.append(f"{msg.text}{where}")

    def on_pageerror(err: object) -> None:
        log.page_errors.append(str(err))

    def on_requestfailed(request: object) -> None:
        url = request.url
        failure = request.failure
        # External requests are ours to block (recorded already); ERR_ABORTED is the browser
        # cancelling loads of a page it navigates away from, which no reader sees as an error.
        if is_local_url(url) and "ERR_ABORTED" not in str(failure):
            log.failed_requests.append(f"{url}: {failure}")

    def on_websocket(ws: object) -> None:
        if not is_local_url(ws.url):
            log.note_external(ws.url)

    page.on("console", on_console)
    page.on("pageerror", on_pageerror)
    page.on("requestfailed", on_requestfailed)
    page.on("websocket", on_websocket)


def screenshot(page: object, name: str, *, full_page: bool = True, directory: str | Path = SCREENSHOT_DIR) -> Path:
    """Save a PNG of the page as `<directory>/<name>.png` and return its path."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "page"
    path = Path(directory) / f"{safe}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=full_page)
    return path


def arrive(page: object, url: str) -> None:
    """Wait for a followed link's page (`url`, a glob as for `wait_for_url`) to be in place and set up by flopkb's
    script: with instant navigation the address changes before the page is swapped in."""
    page.wait_for_url(url)
    page.wait_for_function("() => document.documentElement.getAttribute('data-flopkb-page') === location.pathname")


def search(page: object, query: str) -> object:
    """Type `query` into the site's search box (pagefind's); return the results' locator once one is shown."""
    box = page.locator(".pagefind-ui__search-input")
    box.fill("")
    box.press_sequentially(query, delay=20)
    results = page.locator(".pagefind-ui__result")
    results.first.wait_for()
    return results

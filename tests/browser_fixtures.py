"""Pytest fixtures for browser tests (helpers in `browser.py`).

Register them once, in tests/conftest.py:

    pytest_plugins = ["browser_fixtures"]

(or, in a single test module, the same line at module level).

Fixtures:
- `chromium_executable` (session): path of the system Chromium; skips the
  test when it is missing, fails instead when $CI is set.
- `browser` (session): a Playwright Browser on that Chromium.
- `page_log` (function): a `browser.PageLog` for the test's page.
- `page` (function): a fresh Page in its own context (1280x900), whose every
  request to a host other than 127.0.0.1/localhost is blocked and recorded,
  and whose console errors, uncaught exceptions and failed local requests are
  recorded in `page_log`. Check with `page_log.assert_clean()`.
- `serve_dir` (function): `serve_dir(path) -> "http://127.0.0.1:PORT/"`,
  a threaded static server stopped after the test.
- `shot` (function): `shot(page, name) -> Path`, a full-page PNG in
  build/screenshots/.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import browser as _b


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    return _b.require_chromium()


@pytest.fixture(scope="session")
def browser(chromium_executable: str) -> Iterator[object]:
    with _b.launch_chromium(chromium_executable) as br:
        yield br


@pytest.fixture
def page_log() -> _b.PageLog:
    return _b.PageLog()


@pytest.fixture
def page(browser: object, page_log: _b.PageLog) -> Iterator[object]:
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},  # type: ignore[attr-defined]
        service_workers="block",
    )
    _b.guard_context(context, page_log)
    pg = context.new_page()
    _b.guard_page(pg, page_log)
    pg.set_default_timeout(15_000)
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture
def serve_dir() -> Iterator[Callable[[str | Path], str]]:
    with contextlib.ExitStack() as stack:
        yield lambda root: stack.enter_context(_b.serve_directory(root))


@pytest.fixture
def shot() -> Callable[..., Path]:
    return _b.screenshot

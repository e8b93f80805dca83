"""Shared pytest setup: the browser fixtures (`page`, `page_log`, `serve_dir`, `shot`, ...) and the
session-wide built sites (`project_site`, `hostile_site`) for every test module."""

import os
from collections.abc import Iterator

import pytest

pytest_plugins = ["browser_fixtures", "site_fixtures"]


@pytest.fixture(autouse=True, scope="session")
def _user_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests' own user cache folder (the load cache and its key, `flopkb.sealed`), never the real one; and no CI
    variable, which turns the cache off (tests that need it set it)."""
    saved = {name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "CI")}
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    os.environ.pop("CI", None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

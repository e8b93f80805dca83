"""`flopkb serve` reloads its readers' pages as soon as a save's pages are in the site (issue 22).

What a rebuild does after moving its pages in (writing its state for the next build, the load cache's shards) is
bookkeeping that no page waits for: a second of CPU at 10,000 records after an accelerator's save.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_serve_memory import ACCELERATOR, FILES, accelerator

from flopkb.config import load_config
from flopkb.pipeline.cache import FileCache
from flopkb.site.incremental.state import BuildState
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb

PAGE = "records/hw/a1.html"


def test_the_version_changes_once_the_pages_are_in_before_the_state_and_the_cache_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_kb(tmp_path / "kb", FILES)
    server = Server(load_config(root), port=0)
    seen: dict[str, tuple[int, bool]] = {}

    def watching(what: str, save: object) -> object:
        def saved(self: object, *given: object) -> None:
            page = server.site_dir / PAGE
            seen[what] = (server.state.snapshot()["version"], page.is_file() and "4 TB/s" in page.read_text())
            save(self, *given)  # type: ignore[operator]

        return saved

    monkeypatch.setattr(BuildState, "save", watching("state", BuildState.save))
    monkeypatch.setattr(FileCache, "save", watching("cache", FileCache.save))
    try:
        assert server.rebuild()
        version = server.state.snapshot()["version"]
        (root / ACCELERATOR).write_text(accelerator("4"))
        assert server.rebuild()
        assert seen == {"state": (version + 1, True), "cache": (version + 1, True)}
        assert server.state.snapshot() == {"version": version + 1, "state": "ok", "message": ""}
    finally:
        server.stop()

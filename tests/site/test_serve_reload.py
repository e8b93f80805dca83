"""`flopkb serve` reloads its readers' pages as soon as a save's pages are in the site (issue 22).

What a rebuild does after moving its pages in (the load cache's shards) is bookkeeping that no page waits for: a
second of CPU at 10,000 records after an accelerator's save. The build state is not written after a save at all:
the server holds it for its next build, and writes it when it stops (`flopkb.site.incremental.held`). The version
changes twice a save: once the saved record's page is in (`flopkb.site.publishing.first`), and once all of them are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_serve_memory import ACCELERATOR, FILES, accelerator

from flopkb.config import load_config
from flopkb.pipeline.cache import FileCache
from flopkb.site.incremental.state import BuildState, folders_of
from flopkb.site.publishing.publish import state_path
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb

PAGE = "records/hw/a1.html"


def test_the_version_changes_once_the_pages_are_in_before_the_cache_is_written_and_the_state_is_held(
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
        state = state_path(server.site_dir)
        assert "state" in seen and state.is_file()  # the first build swaps a whole site in: its state is written
        seen.clear()
        version = server.state.snapshot()["version"]
        (root / ACCELERATOR).write_text(accelerator("4"))
        assert server.rebuild()
        assert seen == {"cache": (version + 2, True)}
        assert server.state.snapshot() == {"version": version + 2, "state": "ok", "message": ""}
        assert not state.exists()  # removed before the site changed in place; held, not written
    finally:
        server.stop()
    assert "state" in seen  # written on stopping, for the folders as they are
    docs = server.site_dir.with_name(server.site_dir.name + "-docs")
    assert BuildState.load(state, folders_of(server.site_dir, docs)) is not None

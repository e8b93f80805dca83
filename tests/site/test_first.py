"""`flopkb serve` moves a save's own page into the site before the rest of the rebuild, and it is the page of the
final site, byte for byte (`flopkb.site.publishing.first`, issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_incremental_site import EDITS, EPOCH, START, records
from test_serve_memory import FILES, FLOP, assert_the_full_build, save

import flopkb.site.render
from flopkb.config import load_config
from flopkb.site.incremental.partial import output_of
from flopkb.site.publishing.first import FirstPages
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb

PAGE = "records/flops/f.html"


def watched(monkeypatch: pytest.MonkeyPatch, events: list[tuple[str, dict[str, bytes]]]) -> None:
    """Record in `events` each time the first pages are moved in (with the bytes of what was moved, and the
    server's version then) and each time the listing pages are rendered."""
    first_pages, index_pages = FirstPages.__call__, flopkb.site.render.render_index_pages

    def first(self: FirstPages, files: list[str]) -> None:
        first_pages(self, files)
        moved = [output_of(rel) for rel in files if (self.site / output_of(rel)).is_file()]
        events.append(("first", {rel: (self.site / rel).read_bytes() for rel in moved}))

    def index(*given: object, **named: object) -> object:
        events.append(("index", {}))
        return index_pages(*given, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(FirstPages, "__call__", first)
    monkeypatch.setattr(flopkb.site.render, "render_index_pages", index)


def test_a_saves_page_is_in_the_site_and_announced_before_the_listing_pages_are_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    root = write_kb(tmp_path / "kb", FILES)
    server = Server(load_config(root), port=0)
    events: list[tuple[str, dict[str, bytes]]] = []
    announced: list[bool] = []
    announce = server._announce

    def seen() -> None:
        announced.append(b"Still rests" in (server.site_dir / PAGE).read_bytes())
        announce()

    monkeypatch.setattr(server, "_announce", seen)
    try:
        assert server.rebuild()
        watched(monkeypatch, events)
        version = server.state.snapshot()["version"]
        (root / FLOP).write_text(FILES[FLOP].replace("Rests", "Still rests"))
        assert server.rebuild()
        assert [what for what, _ in events] == ["first", "index"]
        assert PAGE in events[0][1] and b"Still rests" in events[0][1][PAGE]
        assert announced[-2:] == [True, True]  # announced with the page in, then with the rest
        assert server.state.snapshot()["version"] == version + 2
        events.clear()
        (root / FLOP).write_text(FILES[FLOP] + "category: twice\n")  # refused: a repeated key is no record
        assert not server.rebuild()
        assert events == []
        assert server.state.snapshot()["state"] == "refused"
        assert server.state.snapshot()["version"] == version + 2  # the error shows over the last good page
        assert b"Still rests" in (server.site_dir / PAGE).read_bytes()
    finally:
        server.stop()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(EDITS, min_size=1, max_size=4))
@example([("prose", "flops/f", "alpha"), ("bandwidth", "hw/a1", "4.5"), ("title", "hw/a2", "Renamed")])
@example([("add", "facts/n1", "[[flops/f]]"), ("prose", "facts/n1", "beta"), ("remove", "facts/n1", "")])
def test_the_first_pages_are_the_final_sites_pages(tmp_path_factory: pytest.TempPathFactory, edits: list) -> None:
    """After any save, what was moved in first is what the finished rebuild leaves there, and the site is then the
    full build's."""
    tmp = tmp_path_factory.mktemp("first")
    model = {record_id: dict(fields) for record_id, fields in START.items()}
    root = write_kb(tmp / "kb", records(model))
    events: list[tuple[str, dict[str, bytes]]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
        server = Server(load_config(root), port=0)
        try:
            assert server.rebuild()
            watched(patch, events)
            for edit in edits:
                before = save(root, model, edit)
                events.clear()
                assert server.rebuild()
                firsts = [moved for what, moved in events if what == "first"]
                saved = f"records/{edit[1]}.yaml"
                if edit[0] != "remove" and before.get(saved) != records(model)[saved]:
                    assert len(firsts) == 1 and f"records/{edit[1]}.html" in firsts[0]
                for rel, page in (firsts[0] if firsts else {}).items():
                    assert (server.site_dir / rel).read_bytes() == page, rel
        finally:
            server.stop()
    assert_the_full_build(server.site_dir, model, tmp / "fresh")

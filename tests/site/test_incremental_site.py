"""An incremental build is byte-identical to a full one, whatever the edits before it (a property test); so is
`flopkb serve`'s site once its search index, written in the background, has caught up."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flopkb.config import load_config
from flopkb.pipeline.cache import FileCache
from flopkb.site.pages import listings
from flopkb.site.publishing.publish import BuildOutcome, build
from flopkb.site.publishing.search import BUNDLE
from flopkb.site.publishing.serve import Server
from flopkb.site.publishing.serve_http import INDEX_ENTRY
from kbfixture import write_kb

EPOCH = 1_700_000_000


def records(model: dict[str, dict[str, str]]) -> dict[str, str]:
    """The record files of the model: two accelerators, a fact computing on both, a flop, facts added by edits."""
    files = {}
    for record_id, fields in model.items():
        kind = fields["kind"]
        title = f"title: {fields['title']}\n" if fields.get("title") else ""
        if kind == "accelerator":
            text = (
                f"id: {record_id}\nkind: accelerator\n{title}vendor: V\ndescription: {fields['prose']}\nspecs:\n"
                f"  memory_bandwidth: {{value: {fields['bandwidth']} TB/s, basis: {fields['basis']}}}\n"
                "  peak_bf16_dense: {value: 500 TFLOP/s, basis: derived}\n"
                f"  memory_capacity: {{value: {fields['capacity']} GB, basis: derived}}\n"
            )
        elif kind == "flop":
            text = f"id: {record_id}\nkind: flop\n{title}category: memory-bandwidth\ndescription: {fields['prose']}\n"
        else:
            formula = (
                "formulas:\n  - id: ridge\n    expr: hw.peak_bf16_dense / hw.memory_bandwidth\n"
                "    unit: FLOP/byte\n    hardware: [hw/a1, hw/a2]\n"
                if record_id == "facts/ridge"
                else ""
            )
            text = f"id: {record_id}\nkind: fact\n{title}statement: {fields['prose']}\n{formula}"
        files[f"records/{record_id}.yaml"] = text
    return files


START: dict[str, dict[str, str]] = {
    "hw/a1": {"kind": "accelerator", "prose": "The first.", "bandwidth": "2", "basis": "derived", "capacity": "80"},
    "hw/a2": {
        "kind": "accelerator",
        "prose": "The second, beside [[hw/a1]].",
        "bandwidth": "3",
        "basis": "derived",
        "capacity": "80",
    },
    "facts/ridge": {"kind": "fact", "prose": "The ridge of [[hw/a1]]."},
    "flops/f": {"kind": "flop", "prose": "Rests on [[facts/ridge]].", "title": "A flop"},
}

WORDS = st.sampled_from(["alpha", "beta", "[[hw/a2]]", "[[flops/f]]", "[[facts/ridge]]"])
EDITS = st.one_of(
    st.tuples(st.just("prose"), st.sampled_from(sorted(START)), WORDS),
    st.tuples(st.just("title"), st.sampled_from(sorted(START)), st.sampled_from(["", "Renamed", "Other"])),
    st.tuples(st.just("bandwidth"), st.sampled_from(["hw/a1", "hw/a2"]), st.sampled_from(["1", "2", "4.5"])),
    st.tuples(st.just("basis"), st.sampled_from(["hw/a1", "hw/a2"]), st.sampled_from(["derived", "unverified"])),
    # a spec the ridge formula does not read: its page keeps its results, and is not rendered again
    st.tuples(st.just("capacity"), st.sampled_from(["hw/a1", "hw/a2"]), st.sampled_from(["80", "96"])),
    st.tuples(st.just("add"), st.sampled_from(["facts/n1", "facts/n2"]), WORDS),
    st.tuples(st.just("remove"), st.sampled_from(["facts/n1", "facts/n2"]), st.just("")),
)


def apply(model: dict[str, dict[str, str]], edit: tuple[str, str, str]) -> None:
    what, record_id, value = edit
    if what == "add":
        model[record_id] = {"kind": "fact", "prose": f"New, after {value}."}
    elif what == "remove":
        model.pop(record_id, None)
    elif what == "prose":
        model[record_id]["prose"] += f" {value}"
    else:
        model[record_id][what] = value


def save(root: Path, model: dict[str, dict[str, str]], edit: tuple[str, str, str]) -> None:
    """Apply `edit` to the model, and to the base's files: those that changed written, those that went removed."""
    before = records(model)
    apply(model, edit)
    for rel in before.keys() - records(model).keys():
        (root / rel).unlink()
    for rel, text in records(model).items():
        if before.get(rel) != text:
            (root / rel).write_text(text)


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def build_with_cache(root: Path) -> BuildOutcome:
    config = load_config(root)
    cache = FileCache(config)
    outcome = build(config, load=cache, epoch=EPOCH)
    cache.save()
    assert not outcome.refused, [d.to_dict() for d in outcome.kb.diagnostics]
    return outcome


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(EDITS, min_size=1, max_size=3))
@example([("title", "hw/a1", "Renamed")])  # a neighbour's title, shown on the pages that link to it
@example([("basis", "hw/a2", "unverified"), ("bandwidth", "hw/a1", "4.5")])  # evidence and formula results
@example([("capacity", "hw/a1", "96"), ("bandwidth", "hw/a1", "4.5")])  # a spec no formula reads, then one it reads
@example([("add", "facts/n1", "[[flops/f]]"), ("remove", "facts/n1", "")])  # a backlink comes and goes
def test_an_incremental_build_is_the_full_build(tmp_path: Path, edits: list[tuple[str, str, str]]) -> None:
    work = tmp_path / "run"
    shutil.rmtree(work, ignore_errors=True)
    model = {record_id: dict(fields) for record_id, fields in START.items()}
    root = write_kb(work / "kb", records(model))
    build_with_cache(root)
    for edit in edits:
        save(root, model, edit)
        build_with_cache(root)
    fresh = write_kb(work / "fresh", records(model))
    full = build_with_cache(fresh)
    assert full.rendered == len(model)
    assert tree(root / "build" / "site") == tree(fresh / "build" / "site")
    assert tree(root / "build" / "site-docs") == tree(fresh / "build" / "site-docs")


def test_paged_listings_built_incrementally_are_the_full_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One row a page: records added, renamed and removed shift rows between pages, add pages and take them away."""
    monkeypatch.setattr(listings, "LISTING_ROWS", 1)
    model = {record_id: dict(fields) for record_id, fields in START.items()}
    root = write_kb(tmp_path / "kb", records(model))
    build_with_cache(root)
    assert (root / "build/site/kinds/accelerator/2.html").is_file()
    edits = [
        ("add", "facts/n1", "alpha"),
        ("add", "facts/n2", "beta"),
        ("title", "hw/a2", "0 Another"),  # sorted before hw/a1 now: the two swap pages
        ("remove", "facts/n1", ""),
        ("remove", "facts/n2", ""),
    ]
    for edit in edits:
        save(root, model, edit)
        build_with_cache(root)
        fresh = write_kb(tmp_path / f"fresh-{len(model)}-{edit[0]}", records(model))
        build_with_cache(fresh)
        assert tree(root / "build" / "site") == tree(fresh / "build" / "site"), edit
        assert tree(root / "build" / "site-docs") == tree(fresh / "build" / "site-docs"), edit
    assert not (root / "build/site/kinds/fact/2.html").exists(), "one fact left: one page"


def test_an_unchanged_base_renders_and_converts_nothing(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", records(START))
    first = build_with_cache(root)
    assert first.rendered == len(START) and first.built == first.pages
    again = build_with_cache(root)
    assert (again.rendered, again.built) == (0, 0)
    listing = root / "build/site-docs/kinds/flop.md"
    kept = listing.stat().st_ino
    (root / "records/flops/f.yaml").write_text(records(START)["records/flops/f.yaml"].replace("Rests", "Still rests"))
    edited = build_with_cache(root)
    assert listing.stat().st_ino == kept  # prose is not listed: the kind page was kept (linked), not rendered
    assert edited.rendered < len(START)
    assert 1 <= edited.built < edited.pages
    assert "Still rests" in (root / "build/site/records/flops/f.html").read_text()
    (root / "records/flops/f.yaml").write_text(records(START)["records/flops/f.yaml"].replace("A flop", "Renamed"))
    build_with_cache(root)
    assert listing.stat().st_ino != kept and "Renamed" in listing.read_text()


def test_serve_indexes_for_search_only_when_asked_and_then_is_the_full_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Serve's rebuilds change the site in place and leave its index alone until a search asks for it
    (no pagefind run per save); then the site is what a full build writes. One row a listing page: the saves add
    listing pages and take them away."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    monkeypatch.setattr(listings, "LISTING_ROWS", 1)
    model = {record_id: dict(fields) for record_id, fields in START.items()}
    root = write_kb(tmp_path / "kb", records(model))
    server = Server(load_config(root), port=0)
    site = server.site_dir
    try:
        assert server.rebuild()
        server.search.wait(120)  # a site without an index is indexed at once, for the search box's scripts
        assert not server.search.pending and (site / BUNDLE / INDEX_ENTRY).is_file()
        folder = site.stat().st_ino
        for edit in [("prose", "flops/f", "beta"), ("title", "hw/a1", "Renamed"), ("add", "facts/n1", "[[flops/f]]")]:
            index = tree(site / BUNDLE)
            before = records(model)
            apply(model, edit)
            for rel, text in records(model).items():
                if before.get(rel) != text:
                    (root / rel).write_text(text)
            assert server.rebuild()
            server.search.wait(60)  # (no indexing to wait for: a save starts none)
            # The new pages are there at once, and the previous index (whole) is kept.
            assert server.search.pending and tree(site / BUNDLE) == index
            server.search.ensure(site, 120)  # a reader's first search
            assert not server.search.pending and tree(site / BUNDLE) != index
        assert "beta" in (site / "records/flops/f.html").read_text()
        assert site.stat().st_ino == folder  # changed in place, not swapped
        (root / "records/facts/n1.yaml").unlink()
        apply(model, ("remove", "facts/n1", ""))
        assert server.rebuild()
        server.search.ensure(site, 120)
    finally:
        server.stop()
    fresh = write_kb(tmp_path / "fresh", records(model))
    build_with_cache(fresh)
    assert tree(site) == tree(fresh / "build" / "site")
    assert tree(root / "build" / "site-docs") == tree(fresh / "build" / "site-docs")

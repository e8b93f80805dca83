"""`flopkb serve` keeps one base in memory without a full collection per save; its site is the full build's (issue 22).

The served base stays frozen out of the cyclic collector's reach; the next build releases it
(`KnowledgeBase.release`) so that reference counting frees it. Held here by counting, after each rebuild and
before any collection, the bases of this server's root that are still allocated (frozen ones included): a base
left in a cycle would still be there.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_incremental_site import EDITS, EPOCH, START, apply, build_with_cache, records, tree

from flopkb.config import load_config
from flopkb.formulas.results import FormulaResults, LaterResults
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.site.publishing.search import BUNDLE
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb

ACCELERATOR = "records/hw/a1.yaml"
FACT = "records/facts/ridge.yaml"
FLOP = "records/flops/f.yaml"


def accelerator(bandwidth: str, record_id: str = "hw/a1") -> str:
    return (
        f"id: {record_id}\nkind: accelerator\nvendor: V\ndescription: The first.\nspecs:\n"
        f"  memory_bandwidth: {{value: {bandwidth} TB/s, basis: derived}}\n"
        "  peak_bf16_dense: {value: 500 TFLOP/s, basis: derived}\n"
    )


FILES = {
    ACCELERATOR: accelerator("2"),
    FACT: "id: facts/ridge\nkind: fact\nstatement: The ridge of [[hw/a1]].\nformulas:\n  - id: ridge\n"
    "    expr: hw.peak_bf16_dense / hw.memory_bandwidth\n    unit: FLOP/byte\n    hardware: [hw/a1]\n",
    FLOP: "id: flops/f\nkind: flop\ncategory: memory-bandwidth\ndescription: Rests on [[facts/ridge]].\n",
}
OTHER = {
    "records/hw/a2.yaml": accelerator("5", "hw/a2"),
    "records/facts/other.yaml": FILES[FACT].replace("facts/ridge", "facts/other").replace("hw/a1", "hw/a2"),
}


def bases_of(root: Path) -> int:
    """The knowledge bases of `root` still allocated, garbage or not, frozen or not (the freeze is kept)."""
    gc.unfreeze()  # gc.get_objects() lists the collector's generations, not the frozen objects
    try:
        return sum(isinstance(thing, KnowledgeBase) and thing.config.root == root for thing in gc.get_objects())
    finally:
        gc.freeze()


def test_each_save_frees_the_previous_base_without_a_full_collection(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", FILES)
    server = Server(load_config(root), port=0)
    try:
        assert server.rebuild()
        limit = server._frozen_limit
        edits = [
            (FLOP, FILES[FLOP].replace("Rests", "Still rests"), True),
            (ACCELERATOR, accelerator("3"), True),
            (FLOP, FILES[FLOP] + "category: twice\n", False),  # refused: a repeated key is no record
            (FLOP, FILES[FLOP], True),
            (ACCELERATOR, accelerator("4"), True),
        ]
        for rel, text, good in edits:
            (root / rel).write_text(text)
            assert server.rebuild() == good
            assert bases_of(root) == 1  # the one served, held frozen; the previous and any refused one freed
        assert server._frozen_limit == limit  # no full collection was needed after the first build
        assert "4 TB/s" in (server.site_dir / "records/hw/a1.html").read_text()
    finally:
        server.stop()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(EDITS, min_size=2, max_size=4))
@example([("prose", "flops/f", "alpha"), ("prose", "flops/f", "beta"), ("bandwidth", "hw/a1", "4.5")])
@example([("bandwidth", "hw/a2", "1"), ("prose", "flops/f", "alpha"), ("title", "hw/a1", "Renamed")])
def test_serves_rebuilds_are_the_full_build(tmp_path_factory: pytest.TempPathFactory, edits: list) -> None:
    """Formula results taken over from the previous base (`LaterResults.take_from`) and the released bases leave
    the served site what a full build writes, after any edits."""
    tmp = tmp_path_factory.mktemp("serve")
    model = {record_id: dict(fields) for record_id, fields in START.items()}
    root = write_kb(tmp / "kb", records(model))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
        server = Server(load_config(root), port=0)
        try:
            assert server.rebuild()
            for edit in edits:
                save(root, model, edit)
                assert server.rebuild()
        finally:
            server.stop()
    assert_the_full_build(server.site_dir, model, tmp / "fresh")


def save(root: Path, model: dict[str, dict[str, str]], edit: tuple[str, str, str]) -> dict[str, str]:
    """Apply `edit` to `model` and write the files it changes under `root`; the files before it."""
    before = records(model)
    apply(model, edit)
    for rel, text in records(model).items():
        if before.get(rel) != text:
            (root / rel).write_text(text)
    for rel in before.keys() - records(model).keys():
        (root / rel).unlink()
    return before


def assert_the_full_build(site: Path, model: dict[str, dict[str, str]], fresh: Path) -> None:
    """`site` is what a full build of `model`'s files (written to `fresh`) gives, search index aside."""
    build_with_cache(write_kb(fresh, records(model)))
    served, full = tree(site), tree(fresh / "build" / "site")
    assert {k: v for k, v in served.items() if not k.startswith(BUNDLE)} == {
        k: v for k, v in full.items() if not k.startswith(BUNDLE)
    }


def test_unchanged_formula_results_are_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prose save takes the evaluated results over; an accelerator's save not those that compute with it."""
    taken: list[int] = []
    take_from = LaterResults.take_from

    def counted(self: LaterResults, previous: FormulaResults) -> int:
        taken.append(take_from(self, previous))
        return taken[-1]

    monkeypatch.setattr(LaterResults, "take_from", counted)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    root = write_kb(tmp_path / "kb", FILES | OTHER)
    server = Server(load_config(root), port=0)
    try:
        assert server.rebuild()
        for n in range(3):
            (root / FLOP).write_text(FILES[FLOP].replace("Rests", "Still" * (n + 1) + " rests"))
            assert server.rebuild()
        assert taken[-2:] == [2, 2]  # both facts' results, evaluated for their pages and the home page's counts
        del taken[:]
        (root / ACCELERATOR).write_text(accelerator("3"))
        assert server.rebuild()
        assert taken == [1]  # the other fact's: the ridge computes with the accelerator that changed
    finally:
        server.stop()
    fresh = write_kb(
        tmp_path / "fresh", {**FILES, **OTHER, FLOP: (root / FLOP).read_text(), ACCELERATOR: accelerator("3")}
    )
    build_with_cache(fresh)
    for page in ("records/facts/ridge.html", "records/facts/other.html", "index.html"):
        assert (server.site_dir / page).read_bytes() == (fresh / "build/site" / page).read_bytes(), page

"""Record page keys computed only where they can have changed equal every key computed again
(`flopkb.site.incremental.keys.page_keys`), through random edits of a small base (`random_kb`)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from flopkb.site.incremental.keys import base_key, page_keys
from flopkb.site.incremental.state import BuildState, PageKeys
from flopkb.site.pages.common import Site, environment, template_dirs
from flopkb.site.publishing.mkdocs import SITE_ROOT
from flopkb.site.render import render_docs
from kbfixture import compile_warm, write_kb
from random_kb import edit, initial


def keys_of(root: Path, docs: Path, previous: BuildState | None) -> tuple[PageKeys, PageKeys, str]:
    """(every key computed, the keys computed from `previous`, the base key) of the base at `root`, as it is now."""
    kb = compile_warm(root)
    dirs = template_dirs(root, SITE_ROOT)
    site = Site(kb, docs, environment(dirs))
    try:
        base = base_key(site, dirs)
        return page_keys(site, base), page_keys(site, base, previous), base
    finally:
        site.close()


def state_of(keys: PageKeys, base: str) -> BuildState:
    return BuildState(
        base,
        "",
        {rid: (key, []) for rid, key in keys.keys.items()},
        prints=keys.prints,
        reads=keys.reads,
        faces=keys.faces,
        beyond=keys.beyond,
    )


@pytest.mark.parametrize("seed", [*range(9), 39])  # 8 and 39: a key not known (None) that became known
def test_keys_computed_where_they_can_have_changed_are_every_key_computed(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = write_kb(tmp_path / "kb", initial(rng))
    previous: BuildState | None = None
    computed = total = 0
    for step in range(30):
        full, incremental, base = keys_of(root, tmp_path / "docs", previous)
        assert incremental.keys == full.keys, f"seed {seed}, step {step}"
        assert incremental.reads == full.reads and incremental.prints == full.prints
        assert incremental.beyond == full.beyond
        if previous is not None and previous.render_base == base:
            computed += incremental.computed
            total += len(full.keys)
        previous = state_of(full, base)
        edit(rng, root)
    assert computed < total  # the test compared keys that were not computed again


@pytest.mark.parametrize(
    ("old", "new", "computed"),
    [
        ("About", "Now about", {"facts/b"}),  # prose: its face is the same, its neighbours show nothing new
        ("statement:", "title: Bee\nstatement:", {"facts/a", "facts/b", "facts/c"}),  # its title: shown by both
        ("[[facts/c]]", "[[facts/d]]", {"facts/a", "facts/b", "facts/c", "facts/d"}),  # its links: c's and d's pages
    ],
)
def test_an_edit_computes_the_keys_of_its_record_and_of_the_neighbours_that_show_what_changed(
    tmp_path: Path, old: str, new: str, computed: set[str]
) -> None:
    files = {
        "records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Links [[facts/b]].\n",
        "records/facts/b.yaml": "id: facts/b\nkind: fact\nstatement: About [[facts/c]].\n",
        "records/facts/c.yaml": "id: facts/c\nkind: fact\nstatement: Alone.\n",
        "records/facts/d.yaml": "id: facts/d\nkind: fact\nstatement: Far away.\n",
    }
    root = write_kb(tmp_path / "kb", files)
    full, _, base = keys_of(root, tmp_path / "docs", None)
    (root / "records/facts/b.yaml").write_text(files["records/facts/b.yaml"].replace(old, new))
    again, incremental, _ = keys_of(root, tmp_path / "docs", state_of(full, base))
    assert incremental.keys == again.keys
    assert incremental.computed == len(computed)
    assert {rid for rid, key in again.keys.items() if key != full.keys[rid]} <= computed


def test_a_formula_borrowed_by_ref_reaches_the_accelerator_it_is_evaluated_on(tmp_path: Path) -> None:
    spec = "{value: 3 TB/s, basis: unverified}"
    files = {
        "records/hw/a.yaml": f"id: hw/a\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth: {spec}\n",
        "records/facts/y.yaml": (
            "id: facts/y\nkind: fact\nstatement: S.\nformulas:\n"
            "  - {id: f, expr: hw.memory_bandwidth * 2 s, unit: TB, hardware: [hw/a]}\n"
        ),
        "records/facts/x.yaml": "id: facts/x\nkind: fact\nstatement: Borrows nothing yet.\n",
    }
    root = write_kb(tmp_path / "kb", files)
    full, _, base = keys_of(root, tmp_path / "docs", None)
    (root / "records/facts/x.yaml").write_text(
        files["records/facts/x.yaml"] + "formulas:\n  - {id: g, ref: facts/y#f}\n"
    )
    again, incremental, _ = keys_of(root, tmp_path / "docs", state_of(full, base))
    # hw/a lists facts/x among the formulas evaluated on it, and among the records resting on its unverified spec,
    # though facts/x links only to facts/y
    assert again.keys["hw/a"] != full.keys["hw/a"]
    assert incremental.keys == again.keys


def pages_of(root: Path, docs: Path) -> dict[str, tuple[str | None, bytes]]:
    """Every keyed page of the base at `root`, rendered whole into `docs`: each record's page (by id) and each keyed
    listing or graph file (by path), with its key and the bytes of its files."""
    shutil.rmtree(docs, ignore_errors=True)
    result = render_docs(compile_warm(root), docs, parallel=False)
    pages = {
        record_id: (key, b"\0".join((docs / rel).read_bytes() for rel in files))
        for record_id, (key, files) in result.records.items()
    }
    pages.update({rel: (key, (docs / rel).read_bytes()) for rel, key in result.pages.items()})
    return pages


@pytest.mark.parametrize("seed", range(6))
def test_a_page_whose_key_is_unchanged_is_unchanged(tmp_path: Path, seed: int) -> None:
    """What a key leaves out, the page does not show: through random edits, every record page, listing page and
    graph file whose key is the one it had before the edit is byte for byte what it was."""
    rng = random.Random(seed)
    root = write_kb(tmp_path / "kb", initial(rng))
    before = pages_of(root, tmp_path / "docs")
    kept = 0
    for step in range(20):
        edit(rng, root)
        after = pages_of(root, tmp_path / "docs")
        for record_id, (key, page) in after.items():
            if key is not None and before.get(record_id, (None,))[0] == key:
                kept += 1
                assert page == before[record_id][1], f"seed {seed}, step {step}: {record_id}"
        before = after
    assert kept > 0


SHOWN = {
    "records/flops/p.yaml": (
        "id: flops/p\nkind: flop\ncategory: memory-bandwidth\ndescription: Near [[facts/other]].\n"
        "formulas:\n  - {id: own, title: Cost, expr: B * 2, unit: '1', inputs: {B: 3}}\n"
    ),
    "records/src/s.yaml": (
        "id: src/s\nkind: source\ntitle: S\nauthors: [A. Author]\n"
        "measurements:\n  - {id: m, quantity: q, value: 2, basis: measured, where: p. 1}\n"
    ),
    "records/facts/other.yaml": "id: facts/other\nkind: fact\nstatement: Alone.\n",
    "records/facts/reader.yaml": (
        "id: facts/reader\nkind: fact\nstatement: As [[flops/p#own]] and [[src/s#m]] say, not [[facts/other]].\n"
        "sources: [src/s]\n"
    ),
}


@pytest.mark.parametrize(
    ("rel", "old", "new"),
    [
        ("records/flops/p.yaml", "title: Cost", "title: Price"),  # the label of a link to its formula
        ("records/src/s.yaml", "where: p. 1", "where: Table 2"),  # the label of a link to its measurement
        ("records/src/s.yaml", "A. Author", "B. Writer"),  # the citation
        ("records/flops/p.yaml", "Near [[facts/other]]", "Near nothing"),  # an edge between two of its neighbours
    ],
)
def test_a_page_is_rendered_again_when_what_it_shows_of_a_neighbour_changes(
    tmp_path: Path, rel: str, old: str, new: str
) -> None:
    root = write_kb(tmp_path / "kb", SHOWN)
    before = pages_of(root, tmp_path / "docs")
    full, _, base = keys_of(root, tmp_path / "docs", None)
    (root / rel).write_text(SHOWN[rel].replace(old, new))
    after = pages_of(root, tmp_path / "docs")
    assert after["facts/reader"][1] != before["facts/reader"][1]
    assert after["facts/reader"][0] != before["facts/reader"][0]
    again, incremental, _ = keys_of(root, tmp_path / "docs", state_of(full, base))
    assert incremental.keys == again.keys


def test_an_accelerator_page_is_rendered_again_when_a_formula_evaluated_on_it_changes(tmp_path: Path) -> None:
    files = {
        "records/hw/a.yaml": (
            "id: hw/a\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth: {value: 3 TB/s, basis: derived}\n"
        ),
        "records/facts/x.yaml": (
            "id: facts/x\nkind: fact\nstatement: S.\nformulas:\n"
            "  - {id: f, expr: hw.memory_bandwidth * B, unit: TB, inputs: {B: 2 s}, hardware: [hw/a]}\n"
        ),
        "records/facts/y.yaml": "id: facts/y\nkind: fact\nstatement: T.\nformulas:\n  - {id: g, ref: facts/x#f}\n",
    }
    root = write_kb(tmp_path / "kb", files)
    before = pages_of(root, tmp_path / "docs")
    full, _, base = keys_of(root, tmp_path / "docs", None)
    (root / "records/facts/x.yaml").write_text(files["records/facts/x.yaml"].replace("B: 2 s", "B: 5 s"))
    after = pages_of(root, tmp_path / "docs")
    assert after["hw/a"][1] != before["hw/a"][1]  # the values of facts/x's and facts/y's formulas on it
    assert after["hw/a"][0] != before["hw/a"][0]
    again, incremental, _ = keys_of(root, tmp_path / "docs", state_of(full, base))
    assert incremental.keys == again.keys


def test_a_record_computing_with_an_accelerator_keeps_its_page_while_its_results_are_the_same(tmp_path: Path) -> None:
    """Its page, and the page of another accelerator it computes on, show its results, not the accelerator's specs: a
    spec its formula does not read changes neither."""
    spec = "specs:\n  memory_bandwidth: {value: 3 TB/s, basis: derived}\n"
    files = {
        "records/hw/a.yaml": (
            f"id: hw/a\nkind: accelerator\nvendor: V\n{spec}  memory_capacity: {{value: 80 GB, basis: derived}}\n"
        ),
        "records/hw/b.yaml": f"id: hw/b\nkind: accelerator\nvendor: V\n{spec}",
        "records/facts/x.yaml": (
            "id: facts/x\nkind: fact\nstatement: S.\nformulas:\n"
            "  - {id: f, expr: hw.memory_bandwidth * B, unit: TB, inputs: {B: 2 s}, hardware: [hw/a, hw/b]}\n"
        ),
    }
    root = write_kb(tmp_path / "kb", files)
    before = pages_of(root, tmp_path / "docs")
    full, _, base = keys_of(root, tmp_path / "docs", None)
    (root / "records/hw/a.yaml").write_text(files["records/hw/a.yaml"].replace("80 GB", "96 GB"))
    kept = pages_of(root, tmp_path / "docs")
    assert kept["facts/x"] == before["facts/x"]  # the same key, the same page
    assert kept["hw/b"] == before["hw/b"]
    assert kept["hw/a"][0] != before["hw/a"][0]
    again, incremental, _ = keys_of(root, tmp_path / "docs", state_of(full, base))
    assert incremental.keys == again.keys
    (root / "records/hw/a.yaml").write_text(files["records/hw/a.yaml"].replace("3 TB/s", "4 TB/s"))
    changed = pages_of(root, tmp_path / "docs")
    assert changed["facts/x"][0] != kept["facts/x"][0] and changed["facts/x"][1] != kept["facts/x"][1]

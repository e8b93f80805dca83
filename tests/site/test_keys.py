"""Record page keys computed only where they can have changed equal every key computed again
(`flopkb.site.keys.page_keys`), through random edits of a small base (`random_kb`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from flopkb.config import load_config
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.site.keys import base_key, page_keys
from flopkb.site.mkdocs import SITE_ROOT
from flopkb.site.pages import Site, environment, template_dirs
from flopkb.site.state import BuildState, PageKeys
from kbfixture import write_kb
from random_kb import edit, initial


def keys_of(root: Path, docs: Path, previous: BuildState | None) -> tuple[PageKeys, PageKeys, str]:
    """(every key computed, the keys computed from `previous`, the base key) of the base at `root`, as it is now."""
    config = load_config(root)
    cache = FileCache(config)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    cache.save()
    dirs = template_dirs(root, SITE_ROOT)
    site = Site(kb, docs, environment(dirs))
    try:
        base = base_key(site, dirs)
        return page_keys(site, base), page_keys(site, base, previous), base
    finally:
        site.close()


def state_of(keys: PageKeys, base: str) -> BuildState:
    return BuildState(
        base, "", {rid: (key, []) for rid, key in keys.keys.items()}, prints=keys.prints, reads=keys.reads
    )


@pytest.mark.parametrize("seed", range(8))
def test_keys_computed_where_they_can_have_changed_are_every_key_computed(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = write_kb(tmp_path / "kb", initial(rng))
    previous: BuildState | None = None
    computed = total = 0
    for step in range(30):
        full, incremental, base = keys_of(root, tmp_path / "docs", previous)
        assert incremental.keys == full.keys, f"seed {seed}, step {step}"
        assert incremental.reads == full.reads and incremental.prints == full.prints
        if previous is not None and previous.render_base == base:
            computed += incremental.computed
            total += len(full.keys)
        previous = state_of(full, base)
        edit(rng, root)
    assert computed < total  # the test compared keys that were not computed again


def test_a_prose_edit_computes_the_keys_of_its_record_and_its_neighbours_only(tmp_path: Path) -> None:
    files = {
        "records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Links [[facts/b]].\n",
        "records/facts/b.yaml": "id: facts/b\nkind: fact\nstatement: About [[facts/c]].\n",
        "records/facts/c.yaml": "id: facts/c\nkind: fact\nstatement: Alone.\n",
        "records/facts/d.yaml": "id: facts/d\nkind: fact\nstatement: Far away, [[facts/c]].\n",
    }
    root = write_kb(tmp_path / "kb", files)
    full, _, base = keys_of(root, tmp_path / "docs", None)
    (root / "records/facts/b.yaml").write_text(files["records/facts/b.yaml"].replace("About", "Now about"))
    again, incremental, _ = keys_of(root, tmp_path / "docs", state_of(full, base))
    assert incremental.keys == again.keys
    assert incremental.computed == 3  # facts/b, and facts/a and facts/c that show it; not facts/d
    assert again.keys["facts/b"] != full.keys["facts/b"] and again.keys["facts/d"] == full.keys["facts/d"]


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

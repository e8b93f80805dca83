"""The incremental check: only changed files are loaded again, and the answer is always the cold one."""

from __future__ import annotations

import json
import pickle
import random
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import flopkb
import flopkb.pipeline.cache
from cache_loads import recording_loads
from flopkb.cli import main
from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.sources import Prefetched, WorkTree
from flopkb.pipeline.cache import FileCache, shard_of
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.shards import model_pickler
from flopkb.pipeline.stages import CHECK_STAGES
from kbfixture import VOCABULARY, accelerator, write_kb
from random_kb import initial
from repo import REPO

FLOP = """\
id: flops/{name}
kind: flop
category: arithmetic-intensity
description: Links to [[flops/{target}]].
"""
ACCELERATOR = accelerator("hw/x", basis="unverified", memory_bandwidth="3 TB/s")


@pytest.fixture
def kb_root(tmp_path: Path) -> Path:
    return write_kb(
        tmp_path,
        {
            "records/flops/a.yaml": FLOP.format(name="a", target="b"),
            "records/flops/b.yaml": FLOP.format(name="b", target="missing"),
            "records/flops/c.yaml": "id: flops/c\nkind: flop\ndescription: [unclosed\n",
            "records/hw/x.yaml": ACCELERATOR,
        },
    )


def compile_cached(root: Path) -> KnowledgeBase:
    """One `flopkb check` run: a new cache object reads the stored results, and saves them after."""
    config = load_config(root)
    cache = FileCache(config)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    cache.save()
    return kb


def compile_cold(root: Path) -> KnowledgeBase:
    return compile_knowledge_base(load_config(root), CHECK_STAGES)


def report(kb: KnowledgeBase) -> list[dict[str, object]]:
    return [diagnostic.to_dict() for diagnostic in kb.diagnostics]


def test_second_run_loads_nothing_and_reports_the_same(kb_root: Path, loaded: list[list[str]]) -> None:
    first = compile_cached(kb_root)
    second = compile_cached(kb_root)
    assert loaded == [["records/flops/a.yaml", "records/flops/b.yaml", "records/flops/c.yaml", "records/hw/x.yaml"], []]
    assert report(second) == report(first) == report(compile_cold(kb_root))
    assert {"dangling-link", "yaml-syntax", "unverified-basis"} <= {d.code for d in second.diagnostics}


def test_cached_entries_equal_fresh_ones(kb_root: Path) -> None:
    compile_cached(kb_root)
    warm, cold = compile_cached(kb_root), compile_cold(kb_root)
    assert warm.entries.keys() == cold.entries.keys()
    for record_id, entry in warm.entries.items():
        fresh = cold.entries[record_id]
        assert (entry.id, entry.path, entry.record) == (fresh.id, fresh.path, fresh.record)
        assert (entry.source is None) == (fresh.source is None)
        if entry.source is not None and fresh.source is not None:
            assert (entry.source.text, entry.source.data) == (fresh.source.text, fresh.source.data)
            assert entry.source.position(("description",)) == fresh.source.position(("description",))


def test_an_edited_file_alone_is_loaded_again(kb_root: Path, loaded: list[list[str]]) -> None:
    compile_cached(kb_root)
    (kb_root / "records/flops/b.yaml").write_text(FLOP.format(name="b", target="a"), encoding="utf-8")
    kb = compile_cached(kb_root)
    assert loaded[1] == ["records/flops/b.yaml"]
    assert "dangling-link" not in {d.code for d in kb.diagnostics}
    assert report(kb) == report(compile_cold(kb_root))


def test_added_and_removed_files(kb_root: Path, loaded: list[list[str]]) -> None:
    compile_cached(kb_root)
    (kb_root / "records/flops/c.yaml").unlink()
    (kb_root / "records/flops/missing.yaml").write_text(FLOP.format(name="missing", target="a"), encoding="utf-8")
    kb = compile_cached(kb_root)
    assert loaded[1] == ["records/flops/missing.yaml"]
    assert report(kb) == report(compile_cold(kb_root))
    compile_cached(kb_root)
    assert loaded[2] == []


def test_a_changed_vocabulary_reloads_everything(kb_root: Path, loaded: list[list[str]]) -> None:
    compile_cached(kb_root)
    vocabulary = VOCABULARY.replace("  arithmetic-intensity:", "  compute-bound:")
    (kb_root / "schema/vocabulary.yaml").write_text(vocabulary, encoding="utf-8")
    kb = compile_cached(kb_root)
    assert len(loaded[1]) == 4
    assert "unknown-term" in {d.code for d in kb.diagnostics}


def test_a_changed_flopkb_reloads_everything(
    kb_root: Path, loaded: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_cached(kb_root)
    monkeypatch.setattr(flopkb, "__version__", "99.0")
    compile_cached(kb_root)
    assert len(loaded[1]) == 4


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: b"not a pickle at all",
        lambda data: data[:40] + bytes(64) + data[104:],
        lambda data: data[:8] + pickle.dumps(["not", "entries"]),
    ],
    ids=["empty", "truncated", "garbage", "overwritten", "wrong-content"],
)
def test_a_damaged_cache_is_rebuilt(kb_root: Path, loaded: list[list[str]], damage) -> None:  # type: ignore[no-untyped-def]
    first = compile_cached(kb_root)
    for path in shards(kb_root):
        path.write_bytes(damage(path.read_bytes()))
    assert report(compile_cached(kb_root)) == report(first)
    assert len(loaded[1]) == 4
    compile_cached(kb_root)
    assert loaded[2] == []


def cache_folder(root: Path) -> Path:
    folder = FileCache(load_config(root)).folder
    assert folder is not None
    return folder


def shards(root: Path) -> list[Path]:
    return sorted(cache_folder(root).glob("*.pickle"))


def test_a_damaged_shard_costs_only_its_files(kb_root: Path, loaded: list[list[str]]) -> None:
    compile_cached(kb_root)
    shard = cache_folder(kb_root) / f"{shard_of('records/flops/b.yaml'):02d}.pickle"
    shard.write_bytes(b"garbage")
    compile_cached(kb_root)
    assert loaded[1] == sorted(rel for rel in loaded[0] if shard_of(rel) == shard_of("records/flops/b.yaml"))


def test_the_cache_is_written_atomically_and_only_where_changed(kb_root: Path) -> None:
    compile_cached(kb_root)
    assert {path.name for path in shards(kb_root)} == {
        f"{shard_of(rel):02d}.pickle"
        for rel in ("records/flops/a.yaml", "records/flops/b.yaml", "records/flops/c.yaml", "records/hw/x.yaml")
    }
    written = {path.name: path.stat().st_mtime_ns for path in shards(kb_root)}
    compile_cached(kb_root)
    assert {path.name: path.stat().st_mtime_ns for path in shards(kb_root)} == written
    (kb_root / "records/flops/a.yaml").write_text(FLOP.format(name="a", target="a"), encoding="utf-8")
    compile_cached(kb_root)
    rewritten = {path.name for path in shards(kb_root) if path.stat().st_mtime_ns != written[path.name]}
    assert rewritten == {f"{shard_of('records/flops/a.yaml'):02d}.pickle"}


def test_an_unwritable_cache_folder_is_no_error(kb_root: Path) -> None:
    cache_folder(kb_root).parent.parent.mkdir(parents=True, exist_ok=True)
    cache_folder(kb_root).parent.write_text("a file where the cache folder would be", encoding="utf-8")
    assert report(compile_cached(kb_root)) == report(compile_cold(kb_root))


def test_check_uses_the_cache_and_no_cache_skips_it(kb_root: Path) -> None:
    runner = CliRunner()
    cache = cache_folder(kb_root)
    cold = runner.invoke(main, ["check", "--root", str(kb_root), "--format", "json", "--no-cache"])
    assert not cache.exists()
    first = runner.invoke(main, ["check", "--root", str(kb_root), "--format", "json"])
    assert shards(kb_root)
    for path in shards(kb_root):
        path.write_bytes(b"\x80\x05corrupt")
    again = runner.invoke(main, ["check", "--root", str(kb_root), "--format", "json"])
    assert cold.exit_code == first.exit_code == again.exit_code == 1
    assert cold.stdout == first.stdout == again.stdout
    assert "Traceback" not in again.output
    assert "failed their check" in again.stderr


def counting_stage(computed: list[str]):  # type: ignore[no-untyped-def]
    """A stage that keeps per-file work in `entry.derived`, and records when it had to do it."""

    def stage(kb: KnowledgeBase) -> list[object]:
        for entry in kb.entries.values():
            if "words" not in entry.derived and entry.source is not None:
                computed.append(entry.id)
                entry.derived["words"] = len(entry.source.text.split())
        return []

    return stage


def compile_with(root: Path, stage) -> KnowledgeBase:  # type: ignore[no-untyped-def]
    config = load_config(root)
    cache = FileCache(config)
    kb = compile_knowledge_base(config, (*CHECK_STAGES, stage), cache)
    cache.save()
    return kb


def test_what_stages_derive_from_a_file_is_kept_with_it(kb_root: Path) -> None:
    computed: list[str] = []
    compile_cached(kb_root)  # the cache exists before the stage derives anything
    first = compile_with(kb_root, counting_stage(computed))
    assert sorted(computed) == ["flops/a", "flops/b", "hw/x"]
    second = compile_with(kb_root, counting_stage(computed))
    assert len(computed) == 3
    assert second.entries["flops/a"].derived["words"] == first.entries["flops/a"].derived["words"] == 10
    assert second.entries["flops/a"].digest is not None
    (kb_root / "records/flops/a.yaml").write_text(FLOP.format(name="a", target="c"), encoding="utf-8")
    compile_with(kb_root, counting_stage(computed))
    assert computed[3:] == ["flops/a"]


def test_derived_data_that_cannot_be_stored_is_skipped(kb_root: Path) -> None:
    def unpicklable(kb: KnowledgeBase) -> list[object]:
        kb.entries["flops/a"].derived["lambda"] = lambda: None
        return []

    compile_with(kb_root, unpicklable)
    assert shard_of("records/flops/a.yaml") not in {int(path.stem) for path in shards(kb_root)}
    assert report(compile_cached(kb_root)) == report(compile_cold(kb_root))


def test_a_cold_run_reads_each_file_once_and_loads_what_it_hashed(
    kb_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache hashes a file it has no result for, then loads it: from the bytes it hashed, not a second read."""
    reads: list[str] = []
    original = WorkTree.read

    def counted(self: WorkTree, rel: str) -> bytes:
        reads.append(rel)
        return original(self, rel)

    monkeypatch.setattr(WorkTree, "read", counted)
    kb = compile_cached(kb_root)
    records = sorted(rel for rel in reads if rel.startswith("records/"))
    assert records == sorted(entry.path for entry in kb.entries.values())  # each once
    assert kb.diagnostics == compile_knowledge_base(load_config(kb_root), CHECK_STAGES).diagnostics


def test_a_parse_worker_gets_no_prefetched_bytes(kb_root: Path) -> None:
    """A parallel parse sends its file source to each worker: without the bytes, which the worker reads itself."""
    source = Prefetched(WorkTree(kb_root), {"records/flops/a.yaml": b"id: flops/a\n"})
    sent = pickle.loads(pickle.dumps(source))
    assert sent.raws == {} and sent.read("records/flops/a.yaml") == (kb_root / "records/flops/a.yaml").read_bytes()
    assert source.read("records/flops/a.yaml") == b"id: flops/a\n"  # handed out once
    assert source.read("records/flops/a.yaml") == (kb_root / "records/flops/a.yaml").read_bytes()


def same_model(one: object, other: object) -> bool:
    """Equal values of the same classes all the way down, with the same fields set (what pydantic's `==` leaves)."""
    if type(one) is not type(other):
        return False
    if isinstance(one, BaseModel) and isinstance(other, BaseModel):
        return one.model_fields_set == other.model_fields_set and same_model(one.__dict__, other.__dict__)
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(same_model(value, other[key]) for key, value in one.items())
    if isinstance(one, list | tuple) and isinstance(other, list | tuple):
        return len(one) == len(other) and all(map(same_model, one, other))
    return one == other


def test_a_model_pickled_for_the_cache_unpickles_as_it_was(tmp_path: Path) -> None:
    """The cache pickles each file's data and record model with one pickler for all, which names no model class
    (`flopkb.pipeline.shards.model_pickler`): they unpickle as they were, for the project's records and random ones."""
    bases = [REPO, *(write_kb(tmp_path / str(seed), initial(random.Random(seed))) for seed in range(8))]
    pickled = model_pickler()
    models = []
    for root in bases:
        kb = compile_knowledge_base(load_config(root))
        models.extend((entry.source.data, entry.record) for entry in kb.entries.values() if entry.source is not None)
    assert sum(record is not None for _, record in models) > 50
    blobs = [pickled(model) for model in models]
    for model, blob in zip(models, blobs, strict=True):
        assert same_model(pickle.loads(blob), model)
        assert blob == pickled(model)  # nothing of one file's pickle is in the next one's


FLOP_WITH = """\
id: flops/w
kind: flop
category: arithmetic-intensity
description: See [[src/s#m]] and [[flops/a]].
formulas:
  - id: f
    expr: 2 * t
    unit: {unit}
    inputs:
      t: 3 ms
    expect:
      - value: 6 ms
        rel_tol: {rel_tol}
      - measured: src/s#m
        where: {where}
  - id: g
    expr: 2 * 3
    {ref}
"""
LINES = {"unit": 8, "rel_tol": 13, "where": 15, "ref": 16}
"""The line each mistake of `WRONG` is told at."""
MEASUREMENT = "  - {{id: {name}, quantity: q, value: 6 ms, basis: {basis}, where: T1}}\n"
WRONG = {
    "unit": ("ms", "[ms]"),
    "rel_tol": ("0.01", "lots"),
    "where": ("{t: 3 ms}", "[1]"),
    "ref": ("title: G", "ref: flops/a#f"),  # a formula with both `expr` and `ref`: left out whole
}


@settings(max_examples=10, deadline=None)
@given(wrong=st.sets(st.sampled_from(sorted(WRONG))), bases=st.lists(st.booleans(), min_size=1, max_size=3))
def test_a_file_validation_left_parts_out_of_is_kept_and_told_the_same(wrong: set[str], bases: list[bool]) -> None:
    """A file with fields the schema told wrong, or list items left out, is kept by the cache (not loaded again), and
    every run through it prints what `--no-cache` prints, byte for byte."""
    fields = {name: WRONG[name][name in wrong] for name in WRONG}
    measurements = "".join(
        MEASUREMENT.format(name="mno"[index], basis="measured" if whole else "bogus")
        for index, whole in enumerate(bases)
    )
    files = {
        "records/flops/w.yaml": FLOP_WITH.format(**fields),
        "records/src/s.yaml": f"id: src/s\nkind: source\ntitle: S\nmeasurements:\n{measurements}",
    }
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch, recording_loads(patch) as runs:
        root = write_kb(Path(folder), files)
        check = ["check", "--root", str(root), "--format", "json"]
        printed = [runner.invoke(main, [*check, "--no-cache"]).stdout]
        printed += [
            runner.invoke(main, check).stdout for _ in range(3)
        ]  # stored, then read, then with what was derived
    assert printed[1:] == printed[:1] * 3
    told = {(item["path"], item["line"]) for item in json.loads(printed[0])["diagnostics"]}
    assert {("records/flops/w.yaml", LINES[name]) for name in wrong} <= told  # each wrong field told, once kept
    assert runs == [sorted(files), [], []]  # the first run through the cache loads every file, the next ones none

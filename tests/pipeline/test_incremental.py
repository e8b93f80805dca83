"""The incremental check answers exactly as a cold one: random edit sequences, compared run by run.

The load cache (`flopkb.pipeline.cache`) keeps, per file, what loading it produced and what
stages derived from it; evidence and formulas keep results keyed by what they read of
other files (`flopkb.links.memo`). Whatever is edited, added, removed, renamed, broken or
fixed, a warm run must report the same diagnostics, and leave the same links,
evidence and formula results on the knowledge base, as a cold run.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import flopkb.pipeline.cache
import flopkb.pipeline.stats
from flopkb.config import Config, load_config
from flopkb.formulas.results import LaterResults
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.sources import WorkTree
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from kbfixture import compile_warm as warm
from kbfixture import write_kb
from random_kb import edit, initial


def view(kb: KnowledgeBase) -> dict[str, Any]:
    """Everything a warm run must agree with a cold one on."""
    assert kb.evidence is not None and kb.graph is not None
    return {
        "diagnostics": [diagnostic.to_dict() for diagnostic in kb.diagnostics],
        # before the links are built: a warm run takes the graph's edges from the cache, not from the links
        "graph": _sorted_graph(kb),
        "links": {
            record: [
                (
                    link.origin,
                    link.target,
                    link.anchor,
                    link.label,
                    link.field,
                    link.offset,
                    link.kinds,
                    link.value,
                    link.resolved,
                    link.position,
                )
                for link in links
            ]
            for record, links in kb.links.items()
        },
        "orphans": kb.graph.orphans(),
        "evidence": (kb.evidence.records, kb.evidence.debt, kb.evidence.dependents),
        "formulas": {
            record: [
                (
                    result.id,
                    str(result.expr),
                    result.unit,
                    result.inputs,
                    result.hardware,
                    result.hardware_from,
                    result.chain,
                    result.complete,
                    [
                        (e.hardware, e.point and tuple((name, str(value)) for name, value in e.point), e.value)
                        for e in result.evaluations
                    ],
                    [
                        (c.index, c.hardware, c.stated, c.computed, c.status, c.reason, c.measurement)
                        for c in result.claims
                    ],
                    result.problems,
                    result.figures,
                )
                for result in results
            ]
            for record, results in kb.formulas.items()
        },
        "records": {
            record_id: (entry.path, entry.record, entry.source and (entry.source.text, entry.source.data))
            for record_id, entry in kb.entries.items()
        },
    }


def _sorted_graph(kb: KnowledgeBase) -> tuple[list[Any], list[Any]]:
    """The link graph's nodes and edges with their data, in id order (an updated graph adds what is new last)."""
    assert kb.graph is not None
    return sorted(kb.graph.graph.nodes(data=True)), sorted(kb.graph.graph.edges(data=True))


def cold(root: Path) -> KnowledgeBase:
    return compile_knowledge_base(load_config(root), CHECK_STAGES)


@pytest.mark.parametrize("seed", range(6))
def test_warm_runs_answer_as_cold_ones_through_random_edits(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = write_kb(tmp_path / "kb", initial(rng))
    watching = FileCache(load_config(root))  # one cache object across runs, as `check --watch` keeps it
    previous = warm(root).graph
    for step in range(25):
        edit(rng, root)
        expected = view(cold(root))
        assert view(warm(root)) == expected, f"seed {seed}, step {step}: a new cache object"
        kept = warm(root, watching)
        assert kept.graph is not None and previous is not None
        kept.graph.take_from(previous)  # as `flopkb serve` builds the graph: the previous one, updated
        for record_id in reversed(list(kept.formulas)):  # evaluated one by one, in another order than a cold run's
            kept.formulas[record_id]
        assert view(kept) == expected, f"seed {seed}, step {step}: a cache object kept, and the graph updated"
        previous = kept.graph
        if step % 5 == 4:  # and again, with everything taken from the cache
            assert view(warm(root)) == expected


def test_a_warm_run_with_no_change_loads_no_model_and_no_text(tmp_path: Path) -> None:
    rng = random.Random(1)
    root = write_kb(tmp_path / "kb", initial(rng))
    warm(root)
    warm(root)  # every stage has kept its results by now
    config = load_config(root)
    cache = FileCache(config)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    assert all(entry._later is not None for entry in kb.entries.values()), "a model was loaded"
    loaded = {
        record_id
        for record_id, entry in kb.entries.items()
        if entry.source is not None and entry.source._data is not None
    }
    expected = cold(root)
    kinds = expected.resolver.kinds  # type: ignore[union-attr]
    suspects = {
        record_id
        for record_id, links in expected.links.items()
        if any(
            link.resolved is None
            or link.anchor is not None
            or (link.kinds and kinds.get(link.resolved, link.kinds[0]) not in link.kinds)
            for link in links
        )
    }
    assert loaded <= suspects, (
        "data was loaded for files without a link to report or check"
    )  # their prose links' values
    assert view(kb) == view(expected)


def test_formula_results_are_computed_when_first_asked_for(tmp_path: Path) -> None:
    rng = random.Random(2)
    root = write_kb(tmp_path / "kb", initial(rng))
    warm(root)
    warm(root)
    kb = warm(root)
    results = kb.formulas
    assert isinstance(results, LaterResults) and len(results) > 1
    assert results.evaluated == 0  # check took the problems from the cache, and evaluated nothing
    last = list(results)[-1]
    results[last]
    assert results.evaluated == 1  # a page that shows one record's formulas evaluates that record's alone
    assert view(kb)["formulas"] == view(cold(root))["formulas"]


def test_a_cycle_of_formula_refs_is_evaluated_whole_and_reported_as_cold(tmp_path: Path) -> None:
    files = {
        "records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: S.\nformulas:\n  - id: x\n    ref: facts/b#y\n",
        "records/facts/b.yaml": "id: facts/b\nkind: fact\nstatement: S.\nformulas:\n  - id: y\n    ref: facts/a#x\n",
        "records/facts/c.yaml": "id: facts/c\nkind: fact\nstatement: S.\nformulas:\n  - id: z\n    ref: facts/b#y\n",
    }
    root = write_kb(tmp_path / "kb", files)
    warm(root)
    warm(root)
    (root / "records/facts/c.yaml").write_text(
        files["records/facts/c.yaml"].replace("ref: facts/b#y", "ref: facts/a#x"), encoding="utf-8"
    )
    assert view(warm(root)) == view(cold(root))
    os.remove(root / "records/facts/a.yaml")
    assert view(warm(root)) == view(cold(root))


# ---------------------------------------------------------------------------
# Reading: stat first, content digest as the key of truth


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stats count as old enough to trust (the files of a test are seconds old: too recent, see
    flopkb.pipeline.cache)."""
    monkeypatch.setattr(flopkb.pipeline.stats, "RACY_SECONDS", -3600)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    original = flopkb.pipeline.cache._read_bytes

    def recording(config: Config, rel: str) -> bytes | None:
        read.append(rel.removeprefix("records/"))
        return original(config, rel)

    monkeypatch.setattr(flopkb.pipeline.cache, "_read_bytes", recording)
    return read


def load(root: Path) -> KnowledgeBase:
    """Loading alone (no stages, so no position is asked for): what it reads is what the cache reads."""
    config = load_config(root)
    cache = FileCache(config)
    kb = compile_knowledge_base(config, (), cache)
    cache.save()
    return kb


def test_an_unchanged_stat_is_not_read_again(tmp_path: Path, trusting: None, reads: list[str]) -> None:
    root = write_kb(tmp_path / "kb", initial(random.Random(3)))
    warm(root)
    reads.clear()
    kb = load(root)
    assert {f"records/{rel}" for rel in reads} <= {
        diagnostic.path for diagnostic in kb.diagnostics
    }  # for a position, not to hash
    assert view(warm(root)) == view(cold(root))


def test_a_touched_file_is_hashed_not_loaded_and_an_edited_one_is_loaded(
    tmp_path: Path, trusting: None, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_kb(tmp_path / "kb", initial(random.Random(4)))
    warm(root)
    loaded: list[list[str]] = []
    original = flopkb.pipeline.cache.load_entries

    def recording(config, files, vocabulary, **options):  # type: ignore[no-untyped-def]
        loaded.append(list(files))
        return original(config, files, vocabulary, **options)

    monkeypatch.setattr(flopkb.pipeline.cache, "load_entries", recording)
    flop = root / "records/flops/p1.yaml"
    os.utime(flop, ns=(1_000_000_000, 1_000_000_000))  # as a checkout or `touch` does: a new stat, the same content
    reads.clear()
    positions = {diagnostic.path for diagnostic in load(root).diagnostics}
    assert [rel for rel in reads if f"records/{rel}" not in positions] == ["flops/p1.yaml"] and loaded[-1] == []
    reads.clear()
    load(root)
    assert "flops/p1.yaml" not in reads  # its new stat is kept
    text = flop.read_text(encoding="utf-8")
    flop.write_text(text.replace("It moves.", "It grows."), encoding="utf-8")  # same size, new content
    os.utime(flop, ns=(1_000_000_000, 1_000_000_000))  # and even the old modification time: the change time differs
    load(root)
    assert loaded[-1] == ["records/flops/p1.yaml"]
    assert view(warm(root)) == view(cold(root))


def test_a_recent_file_is_hashed_on_every_run(tmp_path: Path, reads: list[str]) -> None:
    root = write_kb(tmp_path / "kb", initial(random.Random(5)))
    warm(root)
    reads.clear()
    load(root)
    assert set(reads) == {
        path.relative_to(root / "records").as_posix() for path in (root / "records").rglob("*.yaml")
    }  # all are that recent


def test_a_file_changed_during_the_run_has_no_stale_text(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", initial(random.Random(6)))
    warm(root)
    config = load_config(root)
    kb = compile_knowledge_base(config, (), FileCache(config))
    entry = kb.entries["facts/f1"]
    assert entry.source is not None
    (root / entry.path).write_text("id: facts/f1\nkind: fact\nstatement: Changed.\n", encoding="utf-8")
    assert entry.source.text == ""  # not the new text for the old data
    assert entry.source.position(("statement",)) == (1, 1)
    assert config.cache_path is not None
    shutil.rmtree(config.cache_path)


def parse_in_workers(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """Make the next checks parse in worker processes started by `method`, whatever this machine's load."""
    import multiprocessing

    import flopkb.pipeline.compile

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} here")
    monkeypatch.setattr(flopkb.pipeline.compile, "start_method", lambda: method)
    monkeypatch.setattr(flopkb.pipeline.compile, "PARALLEL_FROM_FILES", 1)
    monkeypatch.setattr(flopkb.pipeline.compile.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(flopkb.pipeline.compile, "idle_cores", lambda: 2.0)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_the_parallel_parse_equals_the_serial_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    root = write_kb(tmp_path / "kb", initial(random.Random(7)))
    serial = view(cold(root))
    parse_in_workers(monkeypatch, method)
    assert view(cold(root)) == serial
    assert view(warm(root)) == serial  # a first cached run loads every file, in parallel
    assert view(warm(root)) == serial


class _CountedTree(WorkTree):
    """The work tree, counting the times it is pickled in this process."""

    pickled = 0

    def __getstate__(self) -> dict[str, Any]:
        _CountedTree.pickled += 1
        return dict(self.__dict__)


def test_a_parse_worker_gets_the_source_once_not_with_every_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source can be large to pickle (a `GitTree` lists every blob of its commit): each worker gets it once."""
    import dataclasses

    import flopkb.pipeline.compile

    root = write_kb(tmp_path / "kb", initial(random.Random(9)))
    serial = view(cold(root))
    parse_in_workers(monkeypatch, "fork")
    monkeypatch.setattr(flopkb.pipeline.compile, "CHUNK", 1)
    config = dataclasses.replace(load_config(root), files=_CountedTree(root))
    assert view(compile_knowledge_base(config, CHECK_STAGES)) == serial
    assert _CountedTree.pickled == 1


def test_a_language_server_s_remembered_files_go_to_parse_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files of a server whose editor watches files (`flopkb.editor.disk.Remembered`, behind its buffers): its
    first check, without a cache, parsed in workers once failed to pickle them, and pushed nothing."""
    import dataclasses

    from flopkb.editor.disk import Remembered
    from flopkb.load.sources import Overlay

    root = write_kb(tmp_path / "kb", initial(random.Random(10)))
    serial = view(cold(root))
    parse_in_workers(monkeypatch, "fork")
    config = dataclasses.replace(load_config(root), files=Overlay(Remembered(WorkTree(root)), {}))
    assert view(compile_knowledge_base(config, CHECK_STAGES)) == serial


def test_the_parse_is_serial_when_no_core_is_idle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    import flopkb.pipeline.compile

    root = write_kb(tmp_path / "kb", initial(random.Random(8)))
    monkeypatch.setattr(flopkb.pipeline.compile, "PARALLEL_FROM_FILES", 1)
    monkeypatch.setattr(flopkb.pipeline.compile.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(flopkb.pipeline.compile, "idle_cores", lambda: 0.1)
    monkeypatch.setattr(multiprocessing, "get_context", lambda *_: pytest.fail("a pool was started"))
    assert view(cold(root)) == view(warm(root))


def test_workers_start_as_the_platform_starts_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    import flopkb.pipeline.compile

    assert flopkb.pipeline.compile.start_method() == multiprocessing.get_context().get_start_method()
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "spawn")
    assert flopkb.pipeline.compile.start_method() == "spawn"


def test_idle_cores_is_unknown_over_a_short_window_and_measured_over_a_longer_one() -> None:
    import math
    import time

    from flopkb.load import cores

    cores.idle_cores()
    assert cores.idle_cores() == math.inf  # asked again at once: too short a window to say
    time.sleep(0.15)
    idle = cores.idle_cores()
    assert idle == math.inf or 0 <= idle <= (os.cpu_count() or 1) + 0.5  # inf where there is no /proc/stat

"""Parts of a base built on first use, asked for by several threads at once (an editor's message loop, its requests'
lane and the thread that checks an edited buffer first): each is built once, and every thread sees what one thread
alone would (`flopkb.kb.building`). Each builder is slowed down, so that the threads all ask while it builds."""

from __future__ import annotations

import pickle
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import pytest

import flopkb.formulas.context
import flopkb.formulas.stage
import flopkb.links.cached
import flopkb.pipeline.cache
from flopkb.editor.hover import hover_markdown
from flopkb.formulas.context import Evaluator
from flopkb.formulas.results import LaterResults
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.cached import LazyPickle
from flopkb.pipeline.cache import FileCache
from kbfixture import accelerator, compile_warm, write_kb

THREADS = 8
PAUSE = 0.05
"""How long a slowed builder takes: every thread asks meanwhile."""
T = TypeVar("T")

ALPHA = accelerator("hw/alpha", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s")
BETA = accelerator("hw/beta", peak_bf16_dense="500 TFLOP/s", memory_bandwidth="2.5 TB/s")
FACT = """\
id: facts/f
kind: fact
statement: The ridge point.
formulas:
  - id: ridge
    expr: hw.peak_bf16_dense / hw.memory_bandwidth * batch / (batch + 4)
    unit: FLOP/byte
    inputs:
      batch: [1, 32]
    hardware: [hw/alpha, hw/beta]
"""
FORMULA_LINE = 6
FILES = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}


def at_once(ask: Callable[[], T]) -> list[T]:
    """What `ask()` gives in each of `THREADS` threads started together."""
    start = threading.Barrier(THREADS)
    found: list[T] = []

    def run() -> None:
        start.wait()
        found.append(ask())

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == THREADS, "a thread failed"
    return found


def slowed(function: Callable[..., T], calls: list[object]) -> Callable[..., T]:
    def slow(*arguments: Any) -> T:
        calls.append(arguments)
        time.sleep(PAUSE)
        return function(*arguments)

    return slow


def warm_base(root: Path) -> KnowledgeBase:
    """The base as the editor's checks after the first hold it: its formula results evaluated on first use."""
    for _ in range(3):
        kb = compile_warm(root)
        if isinstance(kb.formulas, LaterResults):
            return kb
    raise AssertionError("the formula results were never left to first use")


def test_a_record_s_formula_results_asked_for_by_threads_at_once_are_evaluated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hover (requests' lane) and the inlay hints (message loop) of one record: evaluated twice, its values were
    counted twice against the record's limit, and a thread showed the formula refused."""
    root = write_kb(tmp_path, FILES)
    alone = warm_base(root)
    evaluator = Evaluator(alone)
    flopkb.formulas.stage.evaluate_entry(evaluator, alone.entries["facts/f"])
    monkeypatch.setattr(flopkb.formulas.context, "RECORD_VALUE_LIMIT", evaluator.values["facts/f"])  # one evaluation's
    expected = hover_markdown(alone, "records/facts/f.yaml", FORMULA_LINE, 5)
    assert expected is not None and "FLOP/byte" in expected and "limit" not in expected

    kb = warm_base(root)
    calls: list[object] = []
    monkeypatch.setattr(flopkb.formulas.stage, "evaluate_entry", slowed(flopkb.formulas.stage.evaluate_entry, calls))
    hovers = at_once(lambda: hover_markdown(kb, "records/facts/f.yaml", FORMULA_LINE, 5))
    assert hovers == [expected] * THREADS
    assert len(calls) == 1


def test_a_deferred_file_s_model_and_text_asked_for_by_threads_at_once_are_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hover (requests' lane) on a link to an accelerator, and the check of an edited buffer that computes with it:
    each thread unpickled the model the load cache defers and read its file again, and kept its own copy."""
    root = write_kb(tmp_path, FILES)
    entry = warm_base(root).entries["hw/alpha"]
    unpickled: list[object] = []
    read: list[object] = []
    monkeypatch.setattr(FileCache, "_unpickled", slowed(FileCache._unpickled, unpickled))
    monkeypatch.setattr(flopkb.pipeline.cache._Later, "text", slowed(flopkb.pipeline.cache._Later.text, read))
    assert entry.source is not None
    source = entry.source
    found = at_once(lambda: (entry.record, source.data, source.text))
    assert all(model is found[0][0] and data is found[0][1] and text is found[0][2] for model, data, text in found)
    assert found[0][0] is not None and found[0][0].id == "hw/alpha" and found[0][2] == ALPHA
    assert (len(unpickled), len(read)) == (1, 1)


def test_a_file_s_links_as_written_asked_for_by_threads_at_once_are_made_or_unpickled_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[object] = []
    fresh = LazyPickle(slowed(lambda: [("wikilink", "hw/alpha")], made))
    found = at_once(lambda: fresh.value)
    assert all(value is found[0] for value in found) and len(made) == 1

    unpickled: list[object] = []
    stored = LazyPickle(None, pickle.dumps([("wikilink", "hw/alpha")]))
    monkeypatch.setattr(flopkb.links.cached, "pickle", SimpleNamespace(loads=slowed(pickle.loads, unpickled)))
    found = at_once(lambda: stored.value)
    assert all(value is found[0] for value in found) and found[0] == [("wikilink", "hw/alpha")]
    assert len(unpickled) == 1


def test_a_record_s_formula_results_do_not_wait_for_a_build_of_the_whole_base(tmp_path: Path) -> None:
    """A record's inlay hints (message loop) while the requests' lane builds every record's links under the base's
    lock (0.24 s at 3,000 records): the record's results are built under a lock of their own."""
    kb = warm_base(write_kb(tmp_path, FILES))
    held, release = threading.Event(), threading.Event()

    def building() -> None:
        with kb.building:
            held.set()
            release.wait(60)

    builder = threading.Thread(target=building)
    builder.start()
    try:
        assert held.wait(10)
        found: list[object] = []
        asking = threading.Thread(target=lambda: found.append(kb.formulas["facts/f"]))
        asking.start()
        asking.join(10)
        assert found and found[0], "the results waited for the base's lock"
    finally:
        release.set()
        builder.join()

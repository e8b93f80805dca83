"""A server's first check (issue 17) tells its open buffers once the base is loaded, before its stages run over the
whole base (`flopkb.editor.checker`, `flopkb.editor.focus`): what it hands out first equals what the check then hands
out for those files, whatever the base and whether the buffer is the file on disk or was typed into; and a buffer
opened with its file's text does not make the first check load the base again."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import flopkb.pipeline.compile
from flopkb.config import load_config
from flopkb.editor.checked import Buffer, Checked
from flopkb.editor.checker import Checker
from flopkb.kb.knowledge_base import KnowledgeBase
from kbfixture import write_kb
from lsp_session import UTF16, Pushes, lsp_session, open_file, record_files, settled
from random_kb import edited, initial
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

INSERTS = ["x", " ", "\n", "[[", "]]", "[[hw/a1]]", "[[a2#x]]", "[[nowhere]] ", "hw/a2", ": ", "- ", "é", '"']


class Held:
    """`compile_knowledge_base` held until `release`, counting the loads (each check loads once)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.loads = 0
        self._compile = flopkb.pipeline.compile.compile_knowledge_base

    def __call__(self, *args: Any, **kwargs: Any) -> KnowledgeBase:
        self.release.wait(60)
        self.loads += 1
        return self._compile(*args, **kwargs)


def first_hand_outs(root: Path, rel: str, text: str) -> tuple[list[Checked], Checked, int]:
    """What a new checker of the base at `root` hands out when `rel` is opened with `text` while its first check
    loads; the check of that buffer; and how many times the base was loaded."""
    config = load_config(root)
    held = Held()
    original = flopkb.pipeline.compile.compile_knowledge_base
    flopkb.pipeline.compile.compile_knowledge_base = held
    handed: list[Checked] = []
    checker = Checker(config)
    try:
        checker.attach(UTF16, handed.append)
        generation = checker.update({rel: Buffer(text, 1)})
        held.release.set()
        done = checker.wait(generation, timeout=120)
        assert done is not None and done.generation == generation
        return handed, done, held.loads
    finally:
        checker.stop()
        checker.join(10)
        flopkb.pipeline.compile.compile_knowledge_base = original


edit = st.one_of(
    st.tuples(st.just("type"), st.floats(0, 1), st.integers(0, 30), st.sampled_from(INSERTS)),
    st.tuples(st.just("rewrite"), st.integers(0, 2**16)),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), which=st.integers(0, 100), edits=st.lists(edit, max_size=2))
def test_the_open_buffer_told_before_the_first_check_s_stages_equals_that_check_s(
    tmp_path_factory: pytest.TempPathFactory, seed: int, which: int, edits: list[tuple]
) -> None:
    root = write_kb(tmp_path_factory.mktemp("first"), initial(random.Random(seed)))
    files = sorted(path.relative_to(root).as_posix() for path in (root / "records").rglob("*.yaml"))
    rel = files[which % len(files)]
    disk = text = (root / rel).read_text(encoding="utf-8")
    for step in edits:
        text = edited(text, step, rel)
    note(f"{rel}:\n{text}")
    handed, done, loads = first_hand_outs(root, rel, text)
    early = [checked for checked in handed if checked.files is not None]
    event("told first" if early else "left to the check")
    assert all(not checked.related and checked.files == {rel} for checked in early)
    assert all(checked.generation == done.generation for checked in early)
    partial = next(checked for checked in handed if checked.files is None and checked.generation == done.generation)
    assert not partial.related  # the first check's first hand-out: what was told first must equal it
    for checked in early:
        assert checked.diagnostics[rel] == partial.diagnostics.get(rel, [])
    if text == disk:
        assert loads == 1  # the buffer reads as the file loaded: the check is its check
        assert handed.index(partial) == len(early)  # told first, then the check, with nothing between


def test_a_file_with_problems_opened_as_the_first_check_loads_is_told_first(tmp_path: Path) -> None:
    """The common case is covered (told, not left to the check), and what is told is not trivially empty."""
    root = write_kb(tmp_path, initial(random.Random(3)))
    rel = "records/flops/p1.yaml"
    text = (root / rel).read_text(encoding="utf-8").replace("description: ", "description: See [[hw/nowhere]]. ", 1)
    (root / rel).write_text(text, encoding="utf-8")
    handed, done, loads = first_hand_outs(root, rel, text)
    assert loads == 1
    first = handed[0]
    assert first.files == {rel} and not first.related
    assert "dangling-link" in {item.code for item in first.diagnostics[rel]}
    assert first.diagnostics[rel] == handed[1].diagnostics[rel]
    assert done.related and done.kb is not None


@pytest.mark.asyncio
async def test_a_document_opened_at_start_is_pushed_once_with_its_check_s_diagnostics(tmp_path: Path) -> None:
    """Over the protocol, on a base large enough that the first check is still loading when the document is opened
    (it may not be, on a fast machine: then the check alone tells): a record with a problem, opened as the server
    starts, gets its diagnostics pushed once, those of the check."""
    root = generate(tmp_path / "kb", 3000)
    rel = next(rel for rel in record_files(root) if rel.startswith("records/kb/"))
    text = (root / rel).read_text(encoding="utf-8").replace("[[", "[[kb/nowhere]] [[", 1)
    (root / rel).write_text(text, encoding="utf-8")
    async with lsp_session(root, watch=True) as lsp:
        uri = open_file(lsp, root, rel)
        final = await settled(lsp, uri)
        assert isinstance(lsp.diagnostics, Pushes)
        pushes = [items for pushed, items in lsp.diagnostics.log if pushed == uri]
    assert "dangling-link" in {item.code for item in final}
    assert pushes == [final]

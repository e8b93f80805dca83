"""The edited buffer checked first (`flopkb.editor.focus`) tells its file's diagnostics exactly as a full check of the
same texts does: whatever the base and whatever is typed into one of its files."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from flopkb.config import Config, load_config
from flopkb.editor.focus import focused_check
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.sources import Overlay
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base, load_knowledge_base, run_stages
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.diagnostics import Diagnostic
from kbfixture import write_kb
from random_kb import edited, initial, render

INSERTS = ["", "x", " ", "\n", "[[", "]]", "[[hw/a1]]", "[[a2#x]]", "hw/a2", "#", ": ", "- ", "é", "value: 3 GB", '"']


def overlaid(config: Config, rel: str, text: str) -> Config:
    return replace(config, files=Overlay(config.files, {rel: text.encode("utf-8", errors="surrogatepass")}))


def base_of(config: Config, warm: bool) -> KnowledgeBase:
    """The base a server holds: its first check (every file loaded), or a later one (files taken from the cache)."""
    cache = FileCache(config)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    if warm:
        cache.keep_derived()
        kb.release()
        kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    return kb


def loaded_of(config: Config, how: str, rng: random.Random) -> KnowledgeBase:
    """A base loaded, its stages not run, as a server's first check holds it when it checks its open buffers first:
    with nothing in the load cache ("cold": loaded as `check --no-cache` does), or through a load cache that a check
    filled before one file changed on disk ("cached": what the link stage kept of the others may hold, or may resolve
    under another signature)."""
    if how == "cold":
        return load_knowledge_base(config, FileCache(config, answer_first=True))
    cache = FileCache(config)
    compile_knowledge_base(config, CHECK_STAGES, cache).release()
    cache.keep_derived()
    files = sorted(path.relative_to(config.root).as_posix() for path in (config.root / "records").rglob("*.yaml"))
    changed = rng.choice(files)
    (config.root / changed).write_text(render(rng, changed), encoding="utf-8")
    return load_knowledge_base(config, cache)


def full(config: Config, rel: str) -> list[Diagnostic]:
    diagnostics = compile_knowledge_base(config, CHECK_STAGES).diagnostics
    return [diagnostic for diagnostic in diagnostics if diagnostic.path == rel]


edit = st.one_of(
    st.tuples(st.just("type"), st.floats(0, 1), st.integers(0, 30), st.sampled_from(INSERTS)),
    st.tuples(st.just("rewrite"), st.integers(0, 2**16)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), which=st.integers(0, 100), warm=st.booleans(), edits=st.lists(edit, max_size=6))
def test_the_edited_buffer_s_diagnostics_equal_a_full_check_s(
    tmp_path_factory: pytest.TempPathFactory, seed: int, which: int, warm: bool, edits: list[tuple]
) -> None:
    root = write_kb(tmp_path_factory.mktemp("focus"), initial(random.Random(seed)))
    config = load_config(root)
    base = base_of(config, warm)
    files = sorted(entry.path for entry in base.entries.values())
    rel = files[which % len(files)]
    text = (root / rel).read_text(encoding="utf-8")
    for step in edits:
        text = edited(text, step, rel)
        note(f"{rel}:\n{text}")
        over = overlaid(config, rel, text)
        focused = focused_check(base, over, rel, CHECK_STAGES)
        event("left to the full check" if focused is None else "checked first")
        if focused is not None:
            assert focused.diagnostics == full(over, rel)
            focused.release()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**16),
    which=st.lists(st.integers(0, 100), min_size=1, max_size=3),
    how=st.sampled_from(["cold", "cached"]),
    edits=st.lists(edit, max_size=4),
)
def test_a_file_checked_first_against_a_base_only_loaded_equals_the_full_check_s(
    tmp_path_factory: pytest.TempPathFactory, seed: int, which: list[int], how: str, edits: list[tuple]
) -> None:
    """A server's first check tells its open buffers before its stages run over the whole base
    (`flopkb.editor.checker`): checked first against the base as loaded, they equal a full check's, and the stages then
    run over that base as if nothing had been checked first."""
    rng = random.Random(seed)
    root = write_kb(tmp_path_factory.mktemp("first"), initial(rng))
    config = load_config(root)
    base = loaded_of(config, how, rng)
    files = sorted(entry.path for entry in base.entries.values())
    resolutions: dict = {}
    for index in which:  # the open buffers, as on disk, then one typed into
        rel = files[index % len(files)]
        focused = focused_check(base, config, rel, CHECK_STAGES, resolutions)
        event("left to the full check" if focused is None else "checked first")
        if focused is not None:
            assert focused.diagnostics == full(config, rel)
            focused.release()
    text = (root / rel).read_text(encoding="utf-8")
    for step in edits:
        text = edited(text, step, rel)
        note(f"{rel}:\n{text}")
        over = overlaid(config, rel, text)
        focused = focused_check(base, over, rel, CHECK_STAGES, resolutions)
        if focused is not None:
            assert focused.diagnostics == full(over, rel)
            focused.release()
    assert run_stages(base, CHECK_STAGES).diagnostics == compile_knowledge_base(config, CHECK_STAGES).diagnostics


def test_typing_into_a_description_is_checked_first_with_its_problems(tmp_path: Path) -> None:
    """The common case is covered (not left to the full check), and what it tells is not trivially empty."""
    root = write_kb(tmp_path, initial(random.Random(3)))
    config = load_config(root)
    base = base_of(config, warm=True)
    rel = "records/flops/p1.yaml"
    text = (root / rel).read_text(encoding="utf-8").replace("description: ", "description: See [[hw/nowhere]]. ", 1)
    over = overlaid(config, rel, text)
    focused = focused_check(base, over, rel, CHECK_STAGES)
    assert focused is not None
    assert "dangling-link" in {diagnostic.code for diagnostic in focused.diagnostics}
    assert focused.diagnostics == full(over, rel)
    assert len(focused.entries) < len(base.entries)


def test_a_base_checked_without_the_load_cache_leaves_a_linked_file_to_the_full_check_without_its_edges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the load cache the link stage keeps no file's resolution (`RESOLVED`): what a record that links to the
    edited file computes with is not known, so a file others link to is left to the full check, and the base's whole
    edges (up to 0.3 s at 10,000 records) are not built to find that record."""
    root = write_kb(tmp_path, initial(random.Random(3)))
    config = load_config(root)
    base = compile_knowledge_base(config, CHECK_STAGES)
    edges = KnowledgeBase.edges.fget
    asked: list[int] = []

    def asked_for(kb: KnowledgeBase) -> dict:
        asked.append(id(kb))
        return edges(kb)

    monkeypatch.setattr(KnowledgeBase, "edges", property(asked_for))
    assert base.referenced
    linked = sorted(entry.path for entry in base.entries.values() if entry.id in base.referenced)
    for rel in linked:
        over = overlaid(config, rel, (root / rel).read_text(encoding="utf-8") + "# typed\n")
        assert focused_check(base, over, rel, CHECK_STAGES) is None
    assert id(base) not in asked

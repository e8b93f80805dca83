"""A warm start (issue 17): the server pushes the diagnostics the last check stored (`flopkb.pipeline.verdict`) before
it has checked, when they still hold, and stores its own latest check's when it exits."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from lsprotocol import types

import flopkb.pipeline.cache
import flopkb.pipeline.compile
import flopkb.pipeline.stats
from flopkb.cli import main
from flopkb.config import Config, load_config
from flopkb.editor.checked import Checked
from flopkb.editor.checker import Checker
from flopkb.pipeline.verdict import VERDICT_NAME, stored
from kbfixture import accelerator, write_kb
from lsp_session import (
    UTF16,
    Pushes,
    Seen,
    as_seen,
    checked,
    environment,
    lsp_session,
    open_file,
    record_files,
    seen,
    settled,
)
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

RIDGE = """\
id: facts/ridge
kind: fact
statement: The ridge point of [[hw/alpha]], and [[hw/nowhere]].
formulas:
  - id: ridge
    expr: hw.peak_bf16_dense / hw.memory_bandwidth
    unit: FLOP/byte
    hardware: [hw/alpha]
"""
FILES = {
    "records/hw/alpha.yaml": accelerator(
        "hw/alpha", basis="unverified", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s"
    ),
    "records/facts/ridge.yaml": RIDGE,
}


def first_checks(config: Config) -> list[Checked]:
    """What a new checker of `config`'s base hands out until its first full check is done."""
    handed: list[Checked] = []
    checker = Checker(config)
    checker.attach(UTF16, handed.append)
    try:
        checker.wait(checker.update({}))
    finally:
        checker.stop()
    return handed


@pytest.fixture
def stored_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A base checked twice by `flopkb check`, which stored its diagnostics; every stat old enough to trust."""
    monkeypatch.setattr(flopkb.pipeline.stats, "RACY_SECONDS", -3600)
    root = write_kb(tmp_path / "kb", FILES)
    for _ in range(2):
        assert CliRunner().invoke(main, ["check", "--root", str(root)]).exit_code == 1
    config = load_config(root)
    assert stored(config) is not None
    return config


def test_the_stored_diagnostics_are_handed_out_first_and_equal_the_first_check_s(stored_base: Config) -> None:
    first, *then = first_checks(stored_base)
    assert first.kb is None and not first.related  # from what was stored: nothing loaded, no related places
    assert first.diagnostics == then[0].diagnostics != {}  # the first check's own first hand-out, before related places
    full = then[-1]
    assert full.related and full.kb is not None
    without_related = {
        rel: [attrs.evolve(item, related_information=None) for item in items] for rel, items in full.diagnostics.items()
    }
    assert first.diagnostics == without_related
    assert any(item.related_information for items in full.diagnostics.values() for item in items)


def test_a_file_edited_on_disk_since_they_were_stored_means_a_check_first(stored_base: Config) -> None:
    (stored_base.root / "records/facts/ridge.yaml").write_text(RIDGE.replace("[[hw/nowhere]]", "nothing"))
    handed = first_checks(stored_base)
    assert handed[0].kb is not None
    assert not any("hw/nowhere" in item.message for c in handed for items in c.diagnostics.values() for item in items)


def test_damaged_stored_diagnostics_mean_a_check_first(stored_base: Config) -> None:
    assert stored_base.cache_path is not None
    path = stored_base.cache_path / "check" / VERDICT_NAME
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x55
    path.write_bytes(bytes(raw))
    assert first_checks(stored_base)[0].kb is not None


@pytest.mark.parametrize("present", [True, False])
def test_the_server_is_imported_once_the_first_check_parses_or_diagnostics_are_stored(
    stored_base: Config, monkeypatch: pytest.MonkeyPatch, present: bool
) -> None:
    """`flopkb lsp` imports pygls after `until_underway`: not beside the pipeline's import nor beside the reads and
    stats that come before the parse (each of them waits for the interpreter while pygls is imported), and never after
    the whole first check."""
    if not present:
        assert stored_base.cache_path is not None
        (stored_base.cache_path / "check" / VERDICT_NAME).unlink()
    listed, parsing, release = threading.Event(), threading.Event(), threading.Event()
    record_files, load_entries = flopkb.pipeline.compile.record_files, flopkb.pipeline.cache.load_entries

    def listing(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)  # a slow disk
        listed.set()
        return record_files(*args, **kwargs)

    def held(*args: Any, **kwargs: Any) -> Any:
        parsing.set()
        release.wait(60)
        return load_entries(*args, **kwargs)

    monkeypatch.setattr(flopkb.pipeline.compile, "record_files", listing)
    monkeypatch.setattr(flopkb.pipeline.cache, "load_entries", held)
    checker = Checker(stored_base)
    try:
        began = time.monotonic()
        checker.until_underway(60)
        assert time.monotonic() - began < 30  # not kept for the check, whose parse is held
        if present:
            assert not listed.wait(0.5)  # stored diagnostics that hold go out first: nothing is loaded before them
        else:
            assert listed.is_set()  # the files were listed (and stat-ed) before
            assert parsing.wait(10)
    finally:
        release.set()
        checker.stop()


def test_a_first_check_that_fails_before_its_parse_lets_the_server_be_imported_at_once(
    stored_base: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flopkb's bug before the parse (here, listing the files): the check fails, reported on the open buffers once the
    editor is attached, which needs the server imported; so the import does not wait for the parse that never comes."""
    assert stored_base.cache_path is not None
    (stored_base.cache_path / "check" / VERDICT_NAME).unlink()

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(flopkb.pipeline.compile, "record_files", failing)
    checker = Checker(stored_base)
    try:
        began = time.monotonic()
        checker.until_underway(30)
        assert time.monotonic() - began < 10  # not the whole wait (30 s here, 2 s in `flopkb lsp`)
    finally:
        checker.stop()


def flopkb_check(root: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "flopkb", "check", "--root", str(root)], env=environment(), capture_output=True
    )
    assert run.returncode in (0, 1), run.stderr


def first_pushes(pushes: Pushes, root: Path) -> list[Seen]:
    """The first diagnostics pushed for each file, as the user reads them."""
    first: dict[str, list[types.Diagnostic]] = {}
    for uri, items in pushes.log:
        first.setdefault(uri, items)
    return as_seen(first, root)


@pytest.mark.asyncio
async def test_the_server_stores_its_latest_check_at_exit_and_starts_from_it(tmp_path: Path) -> None:
    root = generate(tmp_path / "kb", 120)
    time.sleep(2.1)  # the stats of files this recent are not trusted (`flopkb.pipeline.stats.RACY_SECONDS`)
    config = load_config(root)
    expected = checked(root, UTF16)
    assert config.cache_path is not None
    (config.cache_path / "check" / VERDICT_NAME).unlink(missing_ok=True)
    async with lsp_session(root) as lsp:
        open_file(lsp, root, record_files(root)[0])
        await settled(lsp, (root / record_files(root)[0]).as_uri())
    found = stored(config)
    assert found is not None and seen(root, [d.to_dict() for d in found], UTF16) == expected
    async with lsp_session(root) as lsp:
        await settled(lsp, (root / record_files(root)[0]).as_uri())
        assert isinstance(lsp.diagnostics, Pushes)
        assert first_pushes(lsp.diagnostics, root) == expected != []


@pytest.mark.asyncio
async def test_a_pulling_client_is_answered_from_the_check_not_from_what_was_stored(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", FILES)
    time.sleep(2.1)
    flopkb_check(root)
    flopkb_check(root)
    assert stored(load_config(root)) is not None
    async with lsp_session(root, client="neovim@v0.11.0") as lsp:
        report = await lsp.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert lsp.diagnostics == {}  # nothing pushed, not even what was stored
    unverified = [d for item in report.items for d in item.items if d.code == "unverified-basis"]
    assert unverified and all(d.related_information for d in unverified)  # the check's, with their related places


def test_the_server_and_its_checker_import_nothing_of_the_pipeline() -> None:
    """Stored diagnostics that hold are pushed before the pipeline (pydantic's models, the YAML parser, the stages:
    0.5 s) is imported: the checking thread imports it after them."""
    modules = "flopkb.cli, flopkb.editor.start, flopkb.editor.server"
    probe = f"import json, sys, {modules}; print(json.dumps(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, env=environment())
    loaded = set(json.loads(run.stdout))
    assert "flopkb.pipeline.verdict" in loaded
    pipeline = {"flopkb.kb.knowledge_base", "flopkb.load.models", "flopkb.load.source", "flopkb.pipeline.cache"}
    assert loaded.isdisjoint({*pipeline, "pydantic.main", "yaml"})

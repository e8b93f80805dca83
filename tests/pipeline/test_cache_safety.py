"""A cache that runs no one's code and cannot lie: committed, damaged and hostile shards never change the verdict.

Each attack here is one that flopkb's cache once fell to (issue 21): a shard
committed to the repository unpickled by the CI check of a fresh clone, one
flipped byte making `check` pass where `--no-cache` fails, a shard that is a
FIFO or a link to `/dev/zero`.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.cli import main
from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.pipeline.cache import SHARDS, FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.pipeline.verdict import stored
from kbfixture import H100, write_kb
from site_fixtures import copy_project_base

BROKEN = {
    "records/flops/dangling.yaml": "id: flops/dangling\nkind: flop\ncategory: arithmetic-intensity\n"
    "description: Links to [[flops/nowhere]].\n",
    "records/flops/unclosed.yaml": "id: flops/unclosed\nkind: flop\ndescription: [unclosed\n",
}


class Payload:
    """A pickle that, once loaded, creates the file `path`: what a hostile shard would do with a shell command."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


def hostile_shards(path: Path, ran: Path) -> list[bytes]:
    """Shard files an attacker can commit: a bare pickle (the old format), and one laid out as flopkb lays out a shard
    (a head length, a 32-byte seal, the head), with a seal made without the user's key."""
    bare = pickle.dumps(Payload(ran))
    head = bytes(32) + pickle.dumps(b"key") + bare
    return [bare, len(head).to_bytes(8, "little") + head + bare]


def check_output(root: Path, *options: str, cache_home: Path) -> subprocess.CompletedProcess[str]:
    """`flopkb check` as CI runs it on a fresh clone: a new process, a user cache folder of its own."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    env.pop("CI", None)
    return subprocess.run(
        [sys.executable, "-m", "flopkb", "check", "--root", str(root), "--format", "json", *options],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("layout", [0, 1], ids=["bare-pickle", "shard-layout"])
@pytest.mark.parametrize("cache_dir", [None, "build/cache"], ids=["default", "cache_dir-in-the-repo"])
def test_a_committed_cache_never_runs_on_a_fresh_clone(tmp_path: Path, cache_dir: str | None, layout: int) -> None:
    files = dict(BROKEN)
    if cache_dir is not None:
        files["pyproject.toml"] = f'[tool.flopkb]\ncache_dir = "{cache_dir}"\n'
    root = write_kb(tmp_path / "clone", files)
    ran = tmp_path / "the-payload-ran"
    committed = root / (cache_dir or "build/cache") / "check"
    committed.mkdir(parents=True)
    for shard in range(SHARDS):
        (committed / f"{shard:02d}.pickle").write_bytes(hostile_shards(committed, ran)[layout])
    cold = check_output(root, "--no-cache", cache_home=tmp_path / "home-a")
    first = check_output(root, cache_home=tmp_path / "home-b")
    assert not ran.exists(), "a committed shard was unpickled"
    assert first.returncode == cold.returncode == 1
    assert first.stdout == cold.stdout
    assert "Traceback" not in first.stderr
    if cache_dir is not None:  # read, refused, and said so
        assert "failed their check" in first.stderr


def test_a_shard_sealed_by_another_user_is_not_used(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {**BROKEN, "pyproject.toml": '[tool.flopkb]\ncache_dir = "build/cache"\n'})
    check_output(root, cache_home=tmp_path / "home-a")  # writes the shards, sealed with home-a's key
    again = check_output(root, cache_home=tmp_path / "home-b")
    assert "failed their check" in again.stderr
    assert again.stdout == check_output(root, "--no-cache", cache_home=tmp_path / "home-a").stdout


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]], dict[str, bytes]]:
    """A base with errors and evaluated claims, its `--no-cache` verdict, and the shards of a warm cache."""
    root = copy_project_base(tmp_path_factory.mktemp("flips") / "kb")
    write_kb(root, BROKEN, vocabulary=None)
    config = load_config(root)
    cold = report(compile_knowledge_base(config, CHECK_STAGES))
    for _ in range(2):  # the second run stores what the stages derived
        compile_cached(root)
    folder = shard_folder(root)
    return root, cold, {path.name: path.read_bytes() for path in sorted(folder.glob("*.pickle"))}


def shard_folder(root: Path) -> Path:
    folder = FileCache(load_config(root)).folder
    assert folder is not None
    return folder


def compile_cached(root: Path) -> tuple[KnowledgeBase, list[str]]:
    config = load_config(root)
    cache = FileCache(config)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    for entry in kb.entries.values():  # every stored model asked for, as a build does
        if entry.source is not None:
            entry.source.data  # noqa: B018
        entry.record  # noqa: B018
    cache.save()
    return kb, cache.notes


def report(kb: KnowledgeBase) -> list[dict[str, object]]:
    return [diagnostic.to_dict() for diagnostic in kb.diagnostics]


def restore(root: Path, shards: dict[str, bytes]) -> Path:
    folder = shard_folder(root)
    shutil.rmtree(folder)
    folder.mkdir()
    for name, raw in shards.items():
        (folder / name).write_bytes(raw)
    return folder


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_flipped_bytes_anywhere_never_change_the_verdict(
    pristine: tuple[Path, list[dict[str, object]], dict[str, bytes]], data: st.DataObject
) -> None:
    root, cold, shards = pristine
    folder = restore(root, shards)
    name = data.draw(st.sampled_from(sorted(shards)), label="shard")
    raw = bytearray(shards[name])
    for offset in data.draw(st.sets(st.integers(0, len(raw) - 1), min_size=1, max_size=3), label="offsets"):
        raw[offset] ^= data.draw(st.integers(1, 255), label="mask")
    (folder / name).write_bytes(bytes(raw))
    kb, notes = compile_cached(root)
    assert report(kb) == cold
    assert notes, "a damaged shard is dropped with a note"
    kb, notes = compile_cached(root)
    assert report(kb) == cold and notes == []  # the rewritten cache answers the same, and is whole again


def no_file(path: Path, kind: str) -> None:
    """Put at `path` what an attacker can make a cache file: a link to /dev/zero, a FIFO, a folder, a dangling link."""
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(path.parent / "nowhere")


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder", "dangling"])
def test_a_shard_that_is_no_file_is_dropped_without_a_hang(
    pristine: tuple[Path, list[dict[str, object]], dict[str, bytes]], kind: str
) -> None:
    root, cold, shards = pristine
    folder = restore(root, shards)
    for name in shards:
        (folder / name).unlink()
        no_file(folder / name, kind)
    kb, notes = compile_cached(root)
    assert report(kb) == cold
    assert notes or kind == "dangling"  # a dangling link is a missing shard: nothing to say


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder", "dangling"])
def test_a_lock_that_is_no_file_is_passed_by_without_a_hang(
    pristine: tuple[Path, list[dict[str, object]], dict[str, bytes]], kind: str
) -> None:
    """The cache's lock file (`flopkb.pipeline.cache_lock`) may be committed, where a setting points the cache into
    the repository: it is never followed nor read, and one that is no lock costs the lock, never the answer."""
    root, cold, shards = pristine
    folder = restore(root, shards)
    (folder / ".lock").unlink(missing_ok=True)
    no_file(folder / ".lock", kind)
    kb, notes = compile_cached(root)
    assert report(kb) == cold and notes == []


def test_a_key_others_can_read_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "flopkb").mkdir(parents=True)
    (home / "flopkb" / "key").write_bytes(bytes(32))
    (home / "flopkb" / "key").chmod(0o644)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    root = write_kb(tmp_path / "kb", BROKEN)
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json"])
    assert result.exit_code == 1
    assert "the cache is off" in result.stderr and "0600" in result.stderr
    assert not (home / "flopkb" / "bases").exists()


def test_the_key_is_private_and_outside_the_base(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", BROKEN)
    check_output(root, cache_home=tmp_path / "home")
    key = tmp_path / "home" / "flopkb" / "key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == 32
    assert not (root / "build").exists()  # nothing of the cache in the base
    assert list((tmp_path / "home" / "flopkb" / "bases").glob("kb-*/check/*.pickle"))


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_no_cache_is_written_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    root = write_kb(tmp_path / "kb", BROKEN)
    monkeypatch.setenv("CI", ci)
    folder = shard_folder(root)
    runner = CliRunner()
    assert runner.invoke(main, ["check", "--root", str(root)]).exit_code == 1
    assert not folder.exists()
    assert runner.invoke(main, ["check", "--root", str(root), "--cache"]).exit_code == 1
    assert list(folder.glob("*.pickle"))


def planted_outside(tmp_path: Path) -> dict[str, bytes]:
    """A folder outside the base holding what the cache would write over or remove there: a shard, a dead run's
    temporary file (`flopkb.atomic.sweep_temporaries`), a lock file; its files and their bytes."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("keep.txt", "00.pickle", ".00.pickle.999999-abcd1234.tmp", ".lock"):
        (outside / name).write_bytes(f"{name}: not flopkb's".encode())
    return snapshot(outside)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("target", ["outside", "outside/gone"], ids=["folder", "dangling"])
def test_a_cache_folder_committed_as_a_symlink_turns_the_cache_off_and_nothing_goes_through_it(
    tmp_path: Path, target: str
) -> None:
    root = write_kb(tmp_path / "kb", {**BROKEN, "pyproject.toml": '[tool.flopkb]\ncache_dir = "cachedir"\n'})
    before = planted_outside(tmp_path)
    (root / "cachedir").mkdir()
    (root / "cachedir/check").symlink_to(tmp_path / target)  # committed by a pull request
    note = f"flopkb: note: the cache is off: {root}/cachedir/check is a symlink or a file, not a folder; nothing is"
    cold = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json", "--no-cache"])
    for _ in range(2):  # the second run would read what the first stored
        result = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json"])
        assert (result.exit_code, result.stdout) == (1, cold.stdout)
        assert f"{note} cached there\n" in result.stderr
    assert stored(load_config(root)) is None  # what the language server reads first
    assert snapshot(tmp_path / "outside") == before


def test_a_template_cache_folder_committed_as_a_symlink_is_not_written_through(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path / "kb", {"records/hw/h100.yaml": H100, "pyproject.toml": '[tool.flopkb]\ncache_dir = "c"\n'}
    )
    before = planted_outside(tmp_path)
    (root / "c").mkdir()
    (root / "c/templates").symlink_to(tmp_path / "outside")  # committed by a pull request
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 0, result.output
    assert snapshot(tmp_path / "outside") == before
    assert list((root / "c/check").glob("*.pickle"))  # the load cache, in a folder of its own, is on

"""The first check of a fresh clone answers as `--no-cache` does, and stores its cache after it has answered, in a
detached process that the next command waits for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flopkb.pipeline.cache
import flopkb.pipeline.stats
from cache_loads import recording_loads
from flopkb.config import Config, load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.cache_lock import hold
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from kbfixture import accelerator, write_kb
from repo import REPO

FILES = {
    "records/flops/a.yaml": "id: flops/a\nkind: flop\ncategory: arithmetic-intensity\ndescription: See [[flops/b]].\n",
    "records/flops/b.yaml": "id: flops/b\nkind: flop\ncategory: arithmetic-intensity\ndescription: See [[flops/z]].\n",
    "records/flops/c.yaml": "id: flops/c\nkind: flop\ndescription: [unclosed\n",
    "records/hw/x.yaml": accelerator("hw/x", basis="unverified", memory_bandwidth="3 TB/s"),
}


def report(kb: KnowledgeBase) -> list[dict[str, object]]:
    return [diagnostic.to_dict() for diagnostic in kb.diagnostics]


def cold(root: Path) -> list[dict[str, object]]:
    return report(compile_knowledge_base(load_config(root), CHECK_STAGES))


def test_the_first_run_answers_as_no_cache_and_the_next_loads_nothing(tmp_path: Path, loaded: list[list[str]]) -> None:
    root = write_kb(tmp_path / "kb", FILES)
    config = load_config(root)
    cache = FileCache(config, answer_first=True)
    first = compile_knowledge_base(config, CHECK_STAGES, cache)
    assert all(entry.digest is None for entry in first.entries.values())  # no stage keeps anything: --no-cache's work
    assert report(first) == cold(root)
    cache.save()
    again = FileCache(config, answer_first=True)
    second = compile_knowledge_base(config, CHECK_STAGES, again)
    assert loaded == [sorted(FILES), ["records/flops/c.yaml"]]  # a file that did not parse is not stored: cheap
    assert report(second) == cold(root)
    assert all(entry.digest is not None for path, entry in second.entries.items() if path != "flops/c")


def test_a_settled_run_is_kept_as_a_run_through_the_cache_is(tmp_path: Path, loaded: list[list[str]]) -> None:
    """`flopkb lsp`'s first check answers first too, then keeps what it loaded in memory (`settle`): the next run loads
    nothing again, takes back what the stages derived from each file, and answers as a cold check; `save` stores it."""
    root = write_kb(tmp_path / "kb", FILES)
    config = load_config(root)
    cache = FileCache(config, answer_first=True)
    first = compile_knowledge_base(config, CHECK_STAGES, cache)
    derived = {path: dict(entry.derived) for path, entry in first.entries.items()}
    cache.settle()
    assert all(entry.digest is not None for path, entry in first.entries.items() if path != "flops/c")
    second = compile_knowledge_base(config, CHECK_STAGES, cache)
    assert loaded == [sorted(FILES), ["records/flops/c.yaml"]]
    assert report(second) == cold(root)
    for path, entry in second.entries.items():
        assert all(entry.derived[name] is value for name, value in derived[path].items()), path
    cache.save()
    compile_knowledge_base(config, CHECK_STAGES, FileCache(config))
    assert loaded[2:] == [[]]  # the file that did not parse was stored by the second run


@contextmanager
def stats_trusted(trusted: bool) -> Iterator[None]:
    """With `trusted`, every stat counts as old enough to be trusted (a file changed two seconds before it was read
    may have changed again without a new stat: `flopkb.pipeline.stats`); else the files of a test, seconds old, are too
    recent."""
    with pytest.MonkeyPatch.context() as patch:
        if trusted:
            patch.setattr(flopkb.pipeline.stats, "RACY_SECONDS", -3600)
        yield


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    changes=st.dictionaries(
        st.sampled_from(sorted(FILES)), st.sampled_from(["edited", "touched", "removed"]), max_size=len(FILES)
    )
)
@pytest.mark.parametrize("kept", ["stored", "settled"])
@pytest.mark.parametrize("read", ["trusted", "too recent"])
def test_files_changed_between_the_answer_and_the_store_are_loaded_again(
    tmp_path_factory: pytest.TempPathFactory, changes: dict[str, str], kept: str, read: str
) -> None:
    """Whatever happens to the files after the answer, before the cache is stored (or kept in memory: `settle`), the
    next run answers as a cold one, and loads again exactly the files whose content changed: whether the stats the
    check read the files under are trusted (then stored without reading the files again) or not (then the files are
    read again, and stored where they still hold what was checked)."""
    with stats_trusted(read == "trusted"):
        changed_after_the_answer(tmp_path_factory.mktemp("kb"), changes, kept)


def changed_after_the_answer(folder: Path, changes: dict[str, str], kept: str) -> None:
    root = write_kb(folder, FILES)
    config = load_config(root)
    cache = FileCache(config, answer_first=True)
    compile_knowledge_base(config, CHECK_STAGES, cache)
    for rel, change in changes.items():
        path = root / rel
        if change == "edited":
            path.write_text(path.read_text() + "# saved after the answer\n")
        elif change == "touched":
            os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
        else:
            path.unlink()
    if kept == "stored":
        cache.save()
        cache = FileCache(config)
    else:
        cache.settle()
    with pytest.MonkeyPatch.context() as patch, recording_loads(patch) as runs:
        kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    assert report(kb) == cold(root)
    unparsed = {"records/flops/c.yaml"} - {rel for rel, change in changes.items() if change == "removed"}
    assert set(runs[0]) == {rel for rel, change in changes.items() if change == "edited"} | unparsed


PARSED = sorted(rel for rel in FILES if rel != "records/flops/c.yaml")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recent=st.sets(st.sampled_from(PARSED)))
@pytest.mark.parametrize("kept", ["stored", "settled"])
def test_only_a_file_changed_too_recently_when_read_is_read_again_to_be_stored(
    tmp_path_factory: pytest.TempPathFactory, recent: set[str], kept: str
) -> None:
    """The check keeps the stat each file's bytes were read under (`Source.witness`): the cache is stored under it,
    without reading the file again, unless the file had changed too recently when it was read (its stat then proves
    nothing of the bytes): that file alone is read again, and stored under a stat only when that stat is old enough."""
    root = write_kb(tmp_path_factory.mktemp("kb"), FILES)
    ahead = time.time_ns() + 7200 * 10**9  # later than "now" for a clock two hours ahead (RACY_SECONDS = -3600)
    for rel in recent:
        os.utime(root / rel, ns=(ahead, ahead))
    config = load_config(root)
    read_under = {rel: stat_now(config, rel) for rel in FILES}
    with stats_trusted(True), pytest.MonkeyPatch.context() as patch:
        cache = FileCache(config, answer_first=True)
        compile_knowledge_base(config, CHECK_STAGES, cache)
        reads: list[str] = []
        reading = flopkb.pipeline.cache._read_bytes
        patch.setattr(
            flopkb.pipeline.cache, "_read_bytes", lambda config, rel: reads.append(rel) or reading(config, rel)
        )
        if kept == "stored":
            cache.save()
        else:
            cache.settle()
        assert sorted(reads) == sorted(recent)
        stored = cache.stats()
        assert stored == {rel: None if rel in recent or rel not in PARSED else read_under[rel] for rel in FILES}
        if kept == "stored":
            cache = FileCache(config)
        with recording_loads(patch) as runs:
            kb = compile_knowledge_base(config, CHECK_STAGES, cache)
        assert report(kb) == cold(root)
        assert runs == [["records/flops/c.yaml"]]


def test_a_stat_too_recent_when_read_is_not_trusted_once_old_enough(tmp_path: Path) -> None:
    """Whether a stat proves the bytes read under it is told at the time they were read, not when the cache is stored:
    a file written just before the check is read again by the writer, even when the writer runs minutes later, and
    stored under its stat then (old enough by then) where it still holds what was checked."""
    root = write_kb(tmp_path / "kb", FILES)
    config = load_config(root)
    cache = FileCache(config, answer_first=True)
    compile_knowledge_base(config, CHECK_STAGES, cache)
    (root / "records/flops/b.yaml").write_text(FILES["records/flops/b.yaml"] + "# saved after the answer\n")
    later = time.time_ns() + 600 * 10**9
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flopkb.pipeline.stats, "time", types.SimpleNamespace(time_ns=lambda: later))
        reads: list[str] = []
        reading = flopkb.pipeline.cache._read_bytes
        patch.setattr(
            flopkb.pipeline.cache, "_read_bytes", lambda config, rel: reads.append(rel) or reading(config, rel)
        )
        cache.save()
        assert sorted(reads) == PARSED
        assert cache.stats() == {
            rel: stat_now(config, rel) if rel in PARSED and rel != "records/flops/b.yaml" else None for rel in FILES
        }


def stat_now(config: Config, rel: str) -> tuple[int, int, int, int]:
    status = os.stat(config.root / rel)
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def wait_for_the_writer(folder: Path) -> None:
    """Return once no flopkb writes the cache in `folder` (as the next command would wait)."""
    lock = hold(folder, exclusive=False)
    if lock is not None:
        os.close(lock)


def test_the_check_command_stores_its_cache_after_it_has_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_kb(tmp_path / "kb", FILES)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    env = dict(os.environ)
    command = [sys.executable, "-m", "flopkb", "check", "--root", str(root), "--format", "json"]
    first = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    no_cache = subprocess.run([*command, "--no-cache"], capture_output=True, text=True, env=env, check=False)
    assert (first.returncode, first.stdout, first.stderr) == (no_cache.returncode, no_cache.stdout, no_cache.stderr)
    folder = FileCache(load_config(root)).folder
    assert folder is not None
    wait_for_the_writer(folder)
    assert sorted(folder.glob("*.pickle")), "the cache was stored"
    second = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)


DETACHED = """
import os, sys, time
from pathlib import Path
from flopkb.pipeline.background import after_exit

folder = Path(sys.argv[1])

def work():
    deadline = time.monotonic() + 60
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    (folder / "done.tmp").write_text(f"{os.getpid()} {os.getsid(0)}")
    (folder / "done.tmp").rename(folder / "done")

print("handed off" if after_exit(work) else "not handed off", flush=True)
print(f"{os.getpid()} {os.getsid(0)}")
"""


def test_detached_work_outlives_the_command_and_holds_none_of_its_output(tmp_path: Path) -> None:
    """The command ends, its output pipe closed, while its detached work still waits; the work then runs, in a
    session of its own (a terminal's Ctrl-C does not reach it)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DETACHED), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    assert not (tmp_path / "done").exists(), "the command waited for its detached work"
    said, command = run.stdout.splitlines()
    assert said == "handed off"
    (tmp_path / "go").touch()
    deadline = time.monotonic() + 60
    while not (tmp_path / "done").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    pid, session = (tmp_path / "done").read_text().split()
    assert pid != command.split()[0] and session != command.split()[1]


def test_a_killed_writer_leaves_no_temporary_file_for_long(tmp_path: Path) -> None:
    """A detached writer can be killed mid-shard (a CI job's end kills what it left running): the next writer
    sweeps what it left."""
    root = write_kb(tmp_path / "kb", FILES)
    config = load_config(root)
    cache = FileCache(config)
    compile_knowledge_base(config, CHECK_STAGES, cache)
    assert cache.folder is not None
    cache.folder.mkdir(parents=True, exist_ok=True)
    left = cache.folder / ".07.pickle.999999999-abcd1234.tmp"  # no process has such a pid
    left.write_bytes(b"half a shard")
    cache.save()
    assert not left.exists()
    assert sorted(cache.folder.glob("*.pickle"))

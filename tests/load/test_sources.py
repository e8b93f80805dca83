"""The three file sources give the pipeline the same base: the work tree, buffers over it, a git tree."""

from __future__ import annotations

import dataclasses
import itertools
import os
import pickle
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load import sources as sources_module
from flopkb.load.files import MAX_FILE_BYTES, Unreadable, decode
from flopkb.load.sources import (
    ON_DEMAND,
    GitError,
    GitTree,
    Overlay,
    Prefetched,
    WorkTree,
    content_digest,
    witness,
)
from flopkb.pipeline import cache as cache_module
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from kbfixture import H100, write_kb
from repo import REPO

FACT = """\
id: facts/a
kind: fact
title: A
category: memory-bandwidth
statement: Decode streams the weights, see [[hw/h100]] and [[facts/b]].
"""


def _compile(root: Path, files: object = None) -> KnowledgeBase:
    config = load_config(root)
    if files is not None:
        config = dataclasses.replace(config, files=files)
    return compile_knowledge_base(config, CHECK_STAGES)


def _report(kb: KnowledgeBase) -> list[tuple[str, str, int, int, str]]:
    return [(d.code, d.path, d.line, d.column, d.message) for d in kb.diagnostics]


def _git(root: Path, *arguments: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00"}
    done = subprocess.run(["git", *arguments], cwd=root, check=True, capture_output=True, text=True, env=env)
    return done.stdout.strip()


def _commit_all(root: Path) -> str:
    if not (root / ".git").exists():
        _git(root, "init", "-q", "-b", "main")
        _git(root, "config", "user.email", "a@example.org")
        _git(root, "config", "user.name", "A")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", "records")
    return _git(root, "rev-parse", "HEAD")


def test_a_buffer_over_the_disk_is_checked_as_if_it_were_saved(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/hw/h100.yaml": H100, "records/facts/a.yaml": FACT})
    unsaved = FACT.replace("[[facts/b]]", "[[facts/c]]").encode()
    over = _compile(tmp_path, Overlay(WorkTree(tmp_path), {"records/facts/a.yaml": unsaved}))
    (tmp_path / "records/facts/a.yaml").write_bytes(unsaved)
    assert _report(over) == _report(_compile(tmp_path))
    assert any("facts/c" in d.message for d in over.diagnostics)


def test_a_new_unsaved_record_joins_the_base(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/hw/h100.yaml": H100, "records/facts/a.yaml": FACT})
    new = FACT.replace("facts/a", "facts/b").replace("[[facts/b]]", "[[facts/a]]").encode()
    over = _compile(tmp_path, Overlay(WorkTree(tmp_path), {"records/facts/b.yaml": new}))
    assert "facts/b" in over.entries
    assert not any(d.code == "dangling-link" for d in over.diagnostics)


def test_the_load_cache_reads_a_buffer_not_the_disk(tmp_path: Path) -> None:
    """A buffer has no stat: the cache must hash its bytes, never take the disk file's stored result."""
    write_kb(tmp_path, {"records/hw/h100.yaml": H100, "records/facts/a.yaml": FACT})
    config = load_config(tmp_path)
    cache = FileCache(config)
    compile_knowledge_base(config, CHECK_STAGES, cache)
    unsaved = FACT.replace("[[facts/b]]", "[[facts/c]]").encode()
    over = dataclasses.replace(config, files=Overlay(config.files, {"records/facts/a.yaml": unsaved}))
    warm = compile_knowledge_base(over, CHECK_STAGES, cache)
    assert _report(warm) == _report(_compile(tmp_path, over.files))
    assert warm.entries["facts/a"].source is not None
    assert "facts/c" in warm.entries["facts/a"].source.text


def test_an_oversized_buffer_is_refused_like_an_oversized_file(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/a.yaml": FACT})
    overlay = Overlay(WorkTree(tmp_path), {"records/facts/a.yaml": b"#" * (MAX_FILE_BYTES + 1)})
    with pytest.raises(Unreadable, match="more than"):
        overlay.read("records/facts/a.yaml")


def test_the_project_base_from_git_objects_equals_the_work_tree(tmp_path: Path) -> None:
    shutil.copytree(REPO / "records", tmp_path / "records")
    shutil.copytree(REPO / "schema", tmp_path / "schema")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    commit = _commit_all(tmp_path)
    tree = GitTree(tmp_path, commit)
    try:
        assert _report(_compile(tmp_path, tree)) == _report(_compile(tmp_path))
    finally:
        tree.close()


records = st.dictionaries(
    st.sampled_from(["records/facts/a.yaml", "records/facts/b.yaml", "records/hw/h100.yaml", "records/x/c.yml"]),
    st.sampled_from([FACT, FACT.replace("facts/a", "facts/b"), H100, "id: [unclosed\n", "kind: fact\n", ""]),
    min_size=1,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=records, second=records)
def test_a_commit_read_from_git_equals_its_checkout(tmp_path_factory: pytest.TempPathFactory, first, second) -> None:
    """Any two commits, read from git objects while the work tree holds a third state, equal their checkouts."""
    root = tmp_path_factory.mktemp("repo")
    commits = []
    for files in (first, second):
        shutil.rmtree(root / "records", ignore_errors=True)
        write_kb(root, files)
        commits.append((_commit_all(root), _report(_compile(root))))
    write_kb(root, {"records/facts/a.yaml": "id: 1\n"})  # the work tree differs from both
    for commit, checked in commits:
        tree = GitTree(root, commit)
        try:
            assert _report(_compile(root, tree)) == checked
        finally:
            tree.close()


_PATHS = ["kb/records/facts/a.yaml", "kb/records/facts/b c\tç.yaml", "kb/records/x/c.yml", "kb/notes.txt", "other.yaml"]
states = st.lists(
    st.dictionaries(st.sampled_from(_PATHS), st.sampled_from(["one", "two", "executable", "link"])),
    min_size=2,
    max_size=4,
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(states=states)
def test_a_tree_listed_as_its_changes_from_another_equals_its_full_listing(
    tmp_path_factory: pytest.TempPathFactory, states: list[dict[str, str]]
) -> None:
    """A diff's second side lists its commit as its changes from the first (`after`): the same blobs, modes and paths
    as listing it in full, whatever was added, removed, edited, made executable or replaced by a link, under the
    base's prefix or outside it."""
    root = tmp_path_factory.mktemp("repo")
    commits = []
    for state in states:
        shutil.rmtree(root / "kb", ignore_errors=True)
        (root / "other.yaml").unlink(missing_ok=True)
        for rel, what in state.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if what == "link":
                path.symlink_to("elsewhere.yaml")
            else:
                path.write_text(FACT if what == "one" else H100, encoding="utf-8")
                path.chmod(0o755 if what == "executable" else 0o644)
        commits.append(_commit_all(root))
    for before, commit in itertools.pairwise(commits):
        previous, full = GitTree(root, before, "kb"), GitTree(root, commit, "kb")
        listed = GitTree(root, commit, "kb", after=previous)
        try:
            assert listed._blobs == full._blobs
        finally:
            for tree in (previous, full, listed):
                tree.close()


def test_a_git_tree_lists_records_under_the_base_prefix_and_refuses_links(tmp_path: Path) -> None:
    base = tmp_path / "kb"
    odd = "records/facts/a b\tç.yaml"  # listed as git writes it with -z: unquoted
    write_kb(base, {"records/facts/a.yaml": FACT, "records/notes.txt": "not a record", odd: FACT})
    (base / "records/facts/link.yaml").symlink_to("a.yaml")
    commit = _commit_all(tmp_path)
    tree = GitTree(tmp_path, commit, "kb")
    try:
        files, unreadable = tree.walk("records")
        assert (files, unreadable) == (
            ["records/facts/a b\tç.yaml", "records/facts/a.yaml", "records/facts/link.yaml"],
            [],
        )
        assert tree.read(odd) == FACT.encode()
        assert tree.read("records/facts/a.yaml") == FACT.encode()
        with pytest.raises(Unreadable, match="symbolic link"):
            tree.read("records/facts/link.yaml")
        assert tree.exists("schema/vocabulary.yaml") and not tree.exists("records/facts/b.yaml")
    finally:
        tree.close()


def test_a_blob_over_the_limit_is_refused_and_the_next_blob_still_reads(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/big.yaml": "#" * (MAX_FILE_BYTES + 10) + "\n", "records/facts/a.yaml": FACT})
    tree = GitTree(tmp_path, _commit_all(tmp_path))
    try:
        with pytest.raises(Unreadable, match="more than"):
            tree.read("records/facts/big.yaml")
        assert tree.read("records/facts/a.yaml") == FACT.encode()
    finally:
        tree.close()


def test_an_unknown_revision_is_a_git_error_in_gits_words(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/a.yaml": FACT})
    _commit_all(tmp_path)
    with pytest.raises(GitError, match=r"no-such-revision|Not a valid object name"):
        GitTree(tmp_path, "no-such-revision")


def test_a_blobs_stat_is_its_object_id_so_an_unchanged_file_keeps_its_stat_across_commits(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/a.yaml": FACT, "records/hw/h100.yaml": H100})
    first = GitTree(tmp_path, _commit_all(tmp_path))
    write_kb(tmp_path, {"records/facts/a.yaml": FACT.replace("Decode", "Decoding")})
    second = GitTree(tmp_path, _commit_all(tmp_path))
    try:
        assert first.stat("records/hw/h100.yaml") == second.stat("records/hw/h100.yaml")
        assert first.stat("records/facts/a.yaml") != second.stat("records/facts/a.yaml")
        with pytest.raises(FileNotFoundError):
            first.stat("records/facts/b.yaml")
    finally:
        first.close()
        second.close()


def test_a_blobs_digest_is_its_object_id_so_the_load_cache_hashes_no_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load cache keys a file by its git blob id (`content_digest`, as `git hash-object` gives it): a commit's
    blob is keyed by its object id, never hashed nor asked its stat, and the work tree's file of the same bytes has
    the same digest."""
    write_kb(tmp_path, {"records/facts/a.yaml": FACT, "records/hw/h100.yaml": H100})
    tree = GitTree(tmp_path, _commit_all(tmp_path))
    rel = "records/facts/a.yaml"
    try:
        blob_id = _git(tmp_path, "hash-object", rel)
        assert tree.digest(rel) == content_digest((tmp_path / rel).read_bytes()) == bytes.fromhex(blob_id)
        assert WorkTree(tmp_path).digest(rel) is None
        assert Overlay(tree, {rel: b"id: facts/a"}).digest(rel) is None
        assert Overlay(tree, {}).digest(rel) == tree.digest(rel)
        hashed: list[bytes] = []
        monkeypatch.setattr(cache_module, "content_digest", lambda raw: hashed.append(raw) or b"")
        asked: list[str] = []
        monkeypatch.setattr(tree, "stat", lambda rel: asked.append(rel) or GitTree.stat(tree, rel))
        config = dataclasses.replace(load_config(tmp_path), files=tree)
        kb = compile_knowledge_base(config, CHECK_STAGES, FileCache(config))
        assert hashed == [] and asked == []
        assert kb.entries["facts/a"].digest == bytes.fromhex(blob_id)
    finally:
        tree.close()


def test_known_blobs_and_a_pickled_tree_are_read_on_demand_with_the_same_bytes(tmp_path: Path) -> None:
    """A tree skips, in its one pass, the blobs its reader knows, and a worker process's copy reads blob by blob:
    both still give every file's bytes."""
    write_kb(tmp_path, {"records/facts/a.yaml": FACT, "records/hw/h100.yaml": H100})
    commit = _commit_all(tmp_path)
    everything = GitTree(tmp_path, commit)
    known = GitTree(tmp_path, commit, known=frozenset(everything.oids))
    copied = pickle.loads(pickle.dumps(everything))
    try:
        for rel in everything.walk("records")[0]:
            assert known.read(rel) == copied.read(rel) == everything.read(rel) == (tmp_path / rel).read_bytes()
    finally:
        for tree in (everything, known, copied):
            tree.close()


def test_a_blob_is_read_from_the_work_tree_only_where_the_file_there_is_that_blob(tmp_path: Path) -> None:
    """A file of the work tree is taken for a blob only when it hashes to the blob's object id: an edited file, a
    symbolic link in its place, a folder, or a missing file all give the commit's bytes; so they do to a worker
    process's copy of the tree, which reads blob by blob."""
    files = {f"records/facts/{name}.yaml": FACT.replace("facts/a", f"facts/{name}") for name in "abcde"}
    write_kb(tmp_path, files)
    commit = _commit_all(tmp_path)
    (tmp_path / "records/facts/a.yaml").write_text(FACT.replace("Decode", "Prefill"), encoding="utf-8")
    (tmp_path / "records/facts/b.yaml").unlink()
    (tmp_path / "records/facts/b.yaml").symlink_to("a.yaml")
    (tmp_path / "records/facts/c.yaml").unlink()
    (tmp_path / "records/facts/c.yaml").mkdir()
    (tmp_path / "records/facts/d.yaml").unlink()
    tree = GitTree(tmp_path, commit)
    copied = pickle.loads(pickle.dumps(tree))
    try:
        for rel, text in files.items():
            assert tree.read(rel) == copied.read(rel) == text.encode()
    finally:
        tree.close()
        copied.close()


@settings(max_examples=200, deadline=None)
@given(text=st.text(), bom=st.booleans())
def test_a_witness_gives_the_digest_of_the_bytes_from_the_text_decoded_from_them(text: str, bom: bool) -> None:
    """The load cache's writer takes a file's digest from its text, not from its bytes read again
    (`flopkb.pipeline.cache`): it is the digest of the bytes, byte order mark and all."""
    raw = ("\ufeff" if bom else "").encode() + text.encode("utf-8", errors="surrogatepass")
    decoded = decode(raw, "records/a.yaml")
    if not isinstance(decoded, str):
        return  # a lone surrogate is not UTF-8: no text to store
    assert witness(raw, None).digest(decoded) == content_digest(raw)


def test_each_source_reads_a_files_bytes_with_the_stat_they_were_read_under(tmp_path: Path) -> None:
    """`read_stat`: the disk's stat of the file the bytes were read from, as `stat` gives it; none for a buffer's
    bytes, a blob's or bytes read before (a `Prefetched` file's)."""
    write_kb(tmp_path, {"records/facts/a.yaml": FACT, "records/hw/h100.yaml": H100})
    rel, other = "records/facts/a.yaml", "records/hw/h100.yaml"
    disk = WorkTree(tmp_path)
    raw, status = disk.read_stat(rel)
    assert raw == disk.read(rel) and status is not None
    assert [getattr(status, name) for name in ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_dev")] == [
        getattr(os.stat(tmp_path / rel), name) for name in ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_dev")
    ]
    assert Overlay(disk, {rel: b"id: facts/a\n"}).read_stat(rel) == (b"id: facts/a\n", None)
    assert Overlay(disk, {rel: b""}).read_stat(other)[0] == disk.read(other)
    prefetched = Prefetched(disk, {rel: b"read before"})
    assert prefetched.read_stat(rel) == (b"read before", None)
    assert prefetched.read_stat(rel)[0] == raw  # handed out once
    tree = GitTree(tmp_path, _commit_all(tmp_path))
    try:
        assert tree.read_stat(rel) == (raw, None)
    finally:
        tree.close()
    with pytest.raises(Unreadable):
        disk.read_stat("records/facts/missing.yaml")


def test_a_trees_first_reads_take_one_blob_each_and_the_next_reads_every_other_blob_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a base's vocabulary, or the few files a diff compares first, does not read every file (a base parsed
    in worker processes is read there); from the `ON_DEMAND + 1`th read on, the rest comes in one pass, and no blob
    is read twice."""
    files = {f"records/facts/f{n}.yaml": FACT.replace("facts/a", f"facts/f{n}") for n in range(ON_DEMAND + 8)}
    write_kb(tmp_path, files)
    tree = GitTree(tmp_path, _commit_all(tmp_path))
    hashed: list[str] = []
    monkeypatch.setattr(sources_module, "_object_id", lambda raw, like: hashed.append(like) or like)
    try:
        paths = sorted(files)
        for rel in paths[:ON_DEMAND]:
            assert tree.read(rel) == files[rel].encode()
        assert len(hashed) == ON_DEMAND, "one blob a read"
        assert tree.read("schema/vocabulary.yaml") == (tmp_path / "schema/vocabulary.yaml").read_bytes()
        assert len(hashed) == len(files) + 1 == len(set(hashed)), "every other blob at once, none twice"
        for rel in paths:
            assert tree.read(rel) == files[rel].encode()
        assert len(hashed) == len(files) + 1
    finally:
        tree.close()

"""The two sides of a diff, compiled by the pipeline through one load cache.

A commit is read from git objects (`flopkb.load.sources.GitTree`: no checkout, the work tree untouched); the work
tree is compiled where it is, with its own load cache read from disk (and never written: a diff leaves the cache as
`check` left it). Both sides go through the same `FileCache`, so a file whose bytes are the same on both sides is
parsed once, and what the stages derived from it (links, evidence, formula problems, kept with dependency keys) is
reused. Both sides are read with the work tree's `[tool.flopkb]` settings.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from flopkb.config import Config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.files import MAX_FILE_BYTES, Unreadable
from flopkb.load.sources import GitTree
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.review.git import Comparison, Git, Revision


@dataclass(frozen=True, slots=True)
class Side:
    revision: Revision
    kb: KnowledgeBase


class CommitTree(GitTree):
    """A commit's files, read in one pass, whose stat is their blob's object id.

    The load cache reads a file once to hash it and the pipeline again to parse it; one `git cat-file --batch`
    round trip per read costs most of a diff's time on a large base. So every blob under the records folder is
    read at once (`prefetch`: object ids written by a thread while their contents stream back), and kept until
    the tree is closed. A blob's object id is its stat: the load cache takes a blob already seen in the other
    side's commit back without reading it (`FileCache` trusts an unchanged stat, as git's own index does).
    """

    def __init__(self, repository: Path, commit: str, prefix: str, folder: str, seen: frozenset[str]) -> None:
        super().__init__(repository, commit, prefix)
        self._folder = f"{folder.rstrip('/')}/"
        self._seen = seen
        """Object ids of the other side's commit: the load cache does not read them (their stat is known)."""
        self._read: dict[str, bytes | Unreadable] | None = None

    @property
    def oids(self) -> set[str]:
        return {oid for _, oid in self._blobs.values()}

    def stat(self, rel: str) -> os.stat_result | None:
        blob = self._blobs.get(rel)
        if blob is None:
            raise FileNotFoundError(rel)
        # (mode, inode, device, links, uid, gid, size, atime, mtime, ctime): the 160-bit object id as the inode,
        # which no file on disk has; times of 0 are old enough to be trusted.
        fields = (0o100644, int(blob[1], 16), 0, 1, 0, 0, 0, 0, 0, 0)
        return os.stat_result(fields, {"st_mtime_ns": 0, "st_ctime_ns": 0})

    def read(self, rel: str) -> bytes:
        if self._read is None:
            self._read = self._prefetch()
        found = self._read.get(rel)
        if found is None:
            return super().read(rel)
        if isinstance(found, Unreadable):
            raise found
        return found

    def _prefetch(self) -> dict[str, bytes | Unreadable]:
        wanted = {
            rel: oid
            for rel, (mode, oid) in self._blobs.items()
            if rel.startswith(self._folder) and mode in ("100644", "100755") and oid not in self._seen
        }
        oids = list(dict.fromkeys(wanted.values()))
        process = subprocess.Popen(
            ["git", "cat-file", "--batch"], cwd=self.repository, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        def write() -> None:
            with stdin:
                stdin.write("".join(f"{oid}\n" for oid in oids).encode())

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        contents: dict[str, bytes | Unreadable] = {}
        try:
            for oid in oids:
                header = stdout.readline().split()
                if len(header) != 3:
                    break  # the rest is read one by one, as GitTree does
                size = int(header[2])
                if size > MAX_FILE_BYTES:
                    _skip(stdout, size + 1)
                    contents[oid] = Unreadable(
                        f"the file has more than {MAX_FILE_BYTES:,} bytes; records are limited to {MAX_FILE_BYTES:,}"
                    )
                    continue
                contents[oid] = stdout.read(size)
                stdout.read(1)
        finally:
            stdout.close()
            writer.join()
            process.wait()
        return {rel: contents[oid] for rel, oid in wanted.items() if oid in contents}


def _skip(stream: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = stream.read(min(size, 1 << 16))
        if not chunk:
            return
        size -= len(chunk)


class SideCompiler:
    """Compiles revisions of one repository through one load cache; each commit's tree stays open until `close`."""

    def __init__(self, config: Config, git: Git) -> None:
        self.config, self.git = config, git
        self.cache = FileCache(config)
        self._seen: set[str] = set()
        self._trees = ExitStack()

    def compile(self, revision: Revision) -> Side:
        if revision.sha is None:
            kb = compile_knowledge_base(self.config, CHECK_STAGES, self.cache)
        else:
            git = self.git
            tree = CommitTree(git.top, revision.sha, git.prefix, self.config.records, frozenset(self._seen))
            self._trees.callback(tree.close)
            self._seen.update(tree.oids)
            kb = compile_knowledge_base(replace(self.config, files=tree), CHECK_STAGES, self.cache)
        self.cache.keep_derived()
        return Side(revision, kb)

    def close(self) -> None:
        self._trees.close()


@contextmanager
def compiled_sides(config: Config, git: Git, comparison: Comparison) -> Iterator[tuple[Side, Side]]:
    """(base, head), compiled; the commits' trees stay open until the context ends (positions in their files are
    read on demand)."""
    compiler = SideCompiler(config, git)
    try:
        # The work tree first: its cache on disk holds most of what the base side needs too.
        if comparison.head.sha is None:
            head = compiler.compile(comparison.head)
            base = compiler.compile(comparison.base)
        else:
            base = compiler.compile(comparison.base)
            head = compiler.compile(comparison.head)
        yield base, head
    finally:
        compiler.close()

"""The two sides of a diff, compiled by the pipeline through one load cache.

A commit is read from git objects (`flopkb.load.sources.GitTree`: no checkout, the work tree untouched); the work
tree is compiled where it is, with its own load cache read from disk (and never written: a diff leaves the cache as
`check` left it). Both sides go through the same `FileCache`, so a file whose bytes are the same on both sides is
parsed once, and what the stages derived from it (links, evidence, formula problems, kept with dependency keys) is
reused. Both sides are read with the work tree's `[tool.flopkb]` settings.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace

from flopkb.config import Config
from flopkb.kb.knowledge_base import KnowledgeBase
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
    """A commit's files, whose stat is their blob's object id: the load cache takes a blob seen in the other side's
    commit back without reading it (`FileCache` trusts an unchanged stat, as git's own index does)."""

    def stat(self, rel: str) -> os.stat_result | None:
        blob = self._blobs.get(rel)
        if blob is None:
            raise FileNotFoundError(rel)
        # (mode, inode, device, links, uid, gid, size, atime, mtime, ctime): the 160-bit object id as the inode,
        # which no file on disk has; times of 0 are old enough to be trusted.
        fields = (0o100644, int(blob[1], 16), 0, 1, 0, 0, 0, 0, 0, 0)
        return os.stat_result(fields, {"st_mtime_ns": 0, "st_ctime_ns": 0})


@contextmanager
def compiled_sides(config: Config, git: Git, comparison: Comparison) -> Iterator[tuple[Side, Side]]:
    """(base, head), compiled; the commits' trees stay open until the context ends (positions in their files are
    read on demand)."""
    cache = FileCache(config)
    with ExitStack() as trees:

        def side(revision: Revision) -> Side:
            if revision.sha is None:
                kb = compile_knowledge_base(config, CHECK_STAGES, cache)
            else:
                tree = CommitTree(git.top, revision.sha, git.prefix)
                trees.callback(tree.close)
                kb = compile_knowledge_base(replace(config, files=tree), CHECK_STAGES, cache)
            cache.keep_derived()
            return Side(revision, kb)

        # The work tree first: its cache on disk holds most of what the base side needs too.
        if comparison.head.sha is None:
            head = side(comparison.head)
            base = side(comparison.base)
        else:
            base = side(comparison.base)
            head = side(comparison.head)
        yield base, head

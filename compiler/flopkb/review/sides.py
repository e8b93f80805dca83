"""The two sides of a diff, compiled by the pipeline through one load cache.

A commit is read from git objects (`flopkb.load.sources.GitTree`: no checkout, the work tree untouched); the work
tree is compiled where it is, with its own load cache read from disk (and never written: a diff leaves the cache as
`check` left it). Both sides go through the same `FileCache`, so a file whose bytes are the same on both sides is
parsed once, and what the stages derived from it (links, evidence, formula problems, kept with dependency keys) is
reused. Both sides are read with the work tree's `[tool.flopkb]` settings.
"""

from __future__ import annotations

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
            tree = GitTree(git.top, revision.sha, git.prefix, known=frozenset(self._seen))
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

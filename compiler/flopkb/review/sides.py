"""The two sides of a diff, compiled by the pipeline through one load cache.

A commit is read from git objects (`flopkb.load.sources.GitTree`: no checkout, the work tree untouched); the work
tree is compiled where it is, with its own load cache read from disk (and never written: a diff leaves the cache as
`check` left it). Both sides go through the same `FileCache`, so a file whose bytes are the same on both sides is
parsed once, and what the stages derived from it (links, evidence, formula problems, kept with dependency keys) is
reused; so are the dependency keys the previous side computed that cannot differ (`flopkb.links.memo.carry_keys`).
Both sides are read with the work tree's `[tool.flopkb]` settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace

from flopkb.config import Config
from flopkb.kb.knowledge_base import KnowledgeBase, Stage
from flopkb.links.memo import carry_keys
from flopkb.load.sources import GitTree
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.diagnostics import Diagnostic
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
        self._last: KnowledgeBase | None = None
        self._tree: GitTree | None = None
        """The last commit's tree: the next is listed as its changes from it."""

    def compile(self, revision: Revision) -> Side:
        stages: tuple[Stage, ...] = CHECK_STAGES
        if self._last is not None:
            self.cache.keep_derived()  # what the stages derived last time, for this side's
            stages = (_carried_from(self._last), *CHECK_STAGES)
        if revision.sha is None:
            kb = compile_knowledge_base(self.config, stages, self.cache)
        else:
            git = self.git
            tree = GitTree(git.top, revision.sha, git.prefix, known=frozenset(self._seen), after=self._tree)
            self._trees.callback(tree.close)
            self._tree = tree
            self._seen.update(tree.oids)
            kb = compile_knowledge_base(replace(self.config, files=tree), stages, self.cache)
        self._last = kb
        return Side(revision, kb)

    def close(self) -> None:
        self._trees.close()


def _carried_from(previous: KnowledgeBase) -> Stage:
    """A first stage that gives the knowledge base the dependency keys of `previous` that cannot differ."""

    def carry_dependency_keys(kb: KnowledgeBase) -> tuple[Diagnostic, ...]:
        carry_keys(previous, kb)
        return ()

    return carry_dependency_keys


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

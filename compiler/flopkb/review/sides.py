"""The two sides of a diff, compiled by the pipeline through one load cache.

A commit is read from git objects (`flopkb.load.sources.GitTree`: no checkout, the work tree untouched); the work
tree is compiled where it is, with its own load cache read from disk (and never written: a diff leaves the cache as
`check` left it). Both sides go through the same `FileCache`, so a file whose bytes are the same on both sides is
parsed once, and what the stages derived from it (links, evidence, formula problems, kept with dependency keys) is
reused; so are the dependency keys the previous side computed that cannot differ (`flopkb.links.memo.carry_keys`).
Two commits whose changes are prose alone take another way (`flopkb.review.reuse`): the base compiled as a cold check
compiles it, the head made from it. Both sides are read with the work tree's `[tool.flopkb]` settings.
"""

from __future__ import annotations

import functools
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
from flopkb.review.reuse import lean_side, prose_edits, second_side


@dataclass(frozen=True, slots=True)
class Side:
    revision: Revision
    kb: KnowledgeBase


class SideCompiler:
    """Compiles revisions of one repository through one load cache; each commit's tree stays open until `close`."""

    def __init__(self, config: Config, git: Git) -> None:
        self.config, self.git = config, git
        self._seen: set[str] = set()
        self._trees = ExitStack()
        self._last: KnowledgeBase | None = None
        self._tree: GitTree | None = None
        """The last commit's tree: the next is listed as its changes from it."""

    @functools.cached_property
    def cache(self) -> FileCache:
        """The load cache both sides go through (a change of prose alone needs none)."""
        return FileCache(self.config)

    def compile(self, revision: Revision) -> Side:
        return self._compile(revision, None if revision.sha is None else self._list(revision.sha))

    def compile_commits(self, base: Revision, head: Revision) -> tuple[Side, Side]:
        """Two commits: when the head changes records' prose alone, the base as a cold check compiles it and the head
        from it (`flopkb.review.reuse`); else each through the load cache (`compile`)."""
        assert base.sha is not None and head.sha is not None and self._tree is None
        before = self._list(base.sha)
        after = self._list(head.sha)
        edits = prose_edits(self.config, before, after)
        if edits is None:
            return self._compile(base, before), self._compile(head, after)
        kb = lean_side(self.config, before)
        reused = second_side(self.config, kb, edits)
        if reused is None:  # rare (see reuse's module): the head compiled by itself, from a tree of its own
            alone = GitTree(self.git.top, head.sha, self.git.prefix)
            self._trees.callback(alone.close)
            reused = lean_side(self.config, alone)
        return Side(base, kb), Side(head, reused)

    def _list(self, sha: str) -> GitTree:
        """The commit's tree, listed as its changes from the last one listed; its blobs read by an earlier side are
        not read again."""
        git = self.git
        tree = GitTree(git.top, sha, git.prefix, known=frozenset(self._seen), after=self._tree)
        self._trees.callback(tree.close)
        self._tree = tree
        self._seen.update(tree.oids)
        return tree

    def _compile(self, revision: Revision, tree: GitTree | None) -> Side:
        stages: tuple[Stage, ...] = CHECK_STAGES
        if self._last is not None:
            self.cache.keep_derived()  # what the stages derived last time, for this side's
            stages = (_carried_from(self._last), *CHECK_STAGES)
        config = self.config if tree is None else replace(self.config, files=tree)
        kb = compile_knowledge_base(config, stages, self.cache)
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
            base, head = compiler.compile_commits(comparison.base, comparison.head)
        yield base, head
    finally:
        compiler.close()

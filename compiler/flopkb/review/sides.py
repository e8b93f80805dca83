"""The two sides of a diff, compiled by the pipeline through one load cache.

A commit is laid out in a temporary folder from git objects (`flopkb.review.tree`); the work tree is compiled
where it is, with its own load cache read from disk (and never written: a diff leaves the cache as `check` left
it). Both sides go through the same `FileCache`, so a file whose bytes are the same on both sides is parsed once,
and what the stages derived from it (links, evidence, formula problems, kept with dependency keys) is reused.
Both sides are read with the work tree's `[tool.flopkb]` settings.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from flopkb.config import Config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.review.git import Comparison, Git, Revision
from flopkb.review.tree import TreeReader, prefix_of


@dataclass(frozen=True, slots=True)
class Side:
    revision: Revision
    kb: KnowledgeBase


@contextmanager
def compiled_sides(config: Config, git: Git, comparison: Comparison) -> Iterator[tuple[Side, Side]]:
    """(base, head), compiled; the temporary folders of commits live until the context ends (positions in their
    files are read on demand)."""
    cache = FileCache(config)
    reader = TreeReader(git, prefix_of(git, config.root), _kb_paths(config))
    with tempfile.TemporaryDirectory(prefix="flopkb-diff-") as scratch:

        def side(revision: Revision) -> Side:
            if revision.sha is None:
                kb = compile_knowledge_base(config, CHECK_STAGES, cache)
            else:
                folder = Path(scratch) / revision.sha
                if not folder.exists():
                    folder.mkdir()
                    reader.write(revision.sha, folder)
                kb = compile_knowledge_base(replace(config, root=folder), CHECK_STAGES, cache)
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


def _kb_paths(config: Config) -> list[str]:
    return [config.records, f"{config.schema}/vocabulary.yaml", "pyproject.toml"]

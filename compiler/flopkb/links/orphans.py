"""The graph stage: the link graph built (`flopkb.links.graph`), and orphans reported."""

from __future__ import annotations

from collections.abc import Iterator

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.graph import LinkGraph
from flopkb.report.diagnostics import Diagnostic, make


def check_graph(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Build the link graph (stored as `kb.graph`) and report orphans at their id line."""
    graph = kb.graph = LinkGraph.build(kb)
    for record_id in graph.orphans():
        entry = kb.entries[record_id]
        line, column = entry.source.position(("id",)) if entry.source is not None else (1, 1)
        yield make(
            "orphan",
            entry.path,
            line,
            column,
            f"no other record links to or references {record_id}",
            f"link to it from a related record: [[{record_id}]]",
        )

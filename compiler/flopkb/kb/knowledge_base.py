"""The knowledge base: every entry, the vocabulary, the diagnostics, and what each stage found."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flopkb.config import Config
from flopkb.formulas.results import FormulaResults
from flopkb.kb.entry import Entry
from flopkb.links.cached import Edge, edges_of
from flopkb.links.debt import Evidence
from flopkb.links.extract import Link
from flopkb.links.graph import LinkGraph
from flopkb.links.resolver import Resolver
from flopkb.load.models import Record
from flopkb.load.vocabulary import Vocabulary
from flopkb.report.diagnostics import Diagnostic


@dataclass(slots=True)
class KnowledgeBase:
    config: Config
    vocabulary: Vocabulary | None
    entries: dict[str, Entry]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    resolver: Resolver | None = None
    """Resolves link targets to record ids (`flopkb.links.resolve`); built on first use."""
    _links: dict[str, list[Link]] = field(default_factory=dict, repr=False)
    _links_later: Callable[[], dict[str, list[Link]]] | None = field(default=None, repr=False, compare=False)
    _links_of: Callable[[str], list[Link]] | None = field(default=None, repr=False, compare=False)
    _edges: dict[str, tuple[Edge, ...]] | Callable[[], dict[str, tuple[Edge, ...]]] | None = field(
        default=None, repr=False, compare=False
    )
    referenced: set[str] | None = field(default=None, repr=False, compare=False)
    """Ids that some link or ref of another record resolves to (`flopkb.links.cached.link_all`): what orphans are
    told by."""
    graph: LinkGraph | None = None
    """The link graph of records (`flopkb.links.graph`): backlinks, orphans, neighbourhoods, exports."""
    evidence: Evidence | None = None
    """Evidence status of every record and the whole evidence debt (`flopkb.links.evidence`)."""
    formulas: FormulaResults = field(default_factory=dict, repr=False)
    """Every formula of every flop and fact, evaluated, with its claims, by record id in formula order
    (`flopkb.formulas.stage`). When the formula stage took its diagnostics from the load cache, each record's
    results are evaluated when first asked for (`LaterResults`: `check` never asks)."""
    values_refused: bool = field(default=False, repr=False, compare=False)
    """Whether the formula stage refused some record's values for the base's limit of values
    (`flopkb.formulas.evaluate.BASE_VALUE_LIMIT`): which records it refuses depends on the order of evaluation."""
    dependency_keys: Any = field(default=None, repr=False, compare=False)
    """Per record, the key of what its evidence and formulas read of other files (`flopkb.links.memo`); built on
    first use."""
    building: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    """Held while a part of the base built on first use is built (`links`, `edges`): an editor reads the base from
    several threads (`flopkb.kb.building`)."""

    @property
    def links(self) -> dict[str, list[Link]]:
        """Every wikilink and typed ref, by the id of the record that holds it, resolved (`flopkb.links.extract`).

        When the link stage took what they resolve to from the load cache, they
        are built here, on first use (`check` never uses them).
        """
        if self._links_later is not None:
            with self.building:  # a reader meanwhile waits, rather than find no links
                later = self._links_later
                if later is not None:
                    self._links = later()
                    self._links_later = self._links_of = None  # after: `links_of` reads them
        return self._links

    @links.setter
    def links(self, value: dict[str, list[Link]]) -> None:
        self._links, self._links_later, self._links_of, self._edges = value, None, None, None

    def links_later(
        self,
        compute: Callable[[], dict[str, list[Link]]],
        edges: Callable[[], dict[str, tuple[Edge, ...]]],
        one: Callable[[str], list[Link]],
    ) -> None:
        """Leave `links` to `compute()`, called on first use of `links`, `edges` to `edges()`, and one record's links
        (`links_of`) to `one(record_id)`."""
        self._links, self._links_later, self._links_of, self._edges = {}, compute, one, edges

    def links_of(self, record_id: str) -> list[Link]:
        """One record's links (as in `links`), without building every record's when they come from the load cache
        (an editor's hover asks for one record's: building all of them took 150 MB at 10,000 records)."""
        one = self._links_of
        if one is not None:
            return one(record_id) if record_id in self.entries else []
        return self.links.get(record_id, [])

    @property
    def edges(self) -> dict[str, tuple[Edge, ...]]:
        """Every record's edges of the link graph (`flopkb.links.extract.edges_of`), by record id; records without
        resolved links are absent. Taken from the load cache, like `links`, without building the links themselves."""
        edges = self._edges
        if isinstance(edges, dict):
            return edges
        with self.building:  # as `links`
            edges = self._edges
            if callable(edges):
                edges = edges()
            if edges is None:
                links = self.links
                edges = {record_id: found for record_id in links if (found := self._edges_from_links(record_id))}
            self._edges = edges
        return edges

    def edges_of(self, record_id: str) -> tuple[Edge, ...]:
        """One record's edges (as in `edges`), without building every record's when they come from its links."""
        if self._edges is None:
            return self._edges_from_links(record_id)
        return self.edges.get(record_id, ())

    def _edges_from_links(self, record_id: str) -> tuple[Edge, ...]:
        group = self.links.get(record_id, [])
        return edges_of([link.origin for link in group], [link.resolved for link in group])

    def release(self) -> None:
        """Drop what the stages attached, once nothing reads this base any more: their results refer back to it
        (the graph, the evidence's and the formula results' deferred parts), and those cycles would keep the whole
        base alive until a full collection, which costs seconds at 10,000 records. Reference counting then frees the
        base as soon as its holder lets it go (`flopkb.editor.checker`; `flopkb.site.publishing.serve`, whose bases
        stay frozen out of the collector's reach)."""
        self.graph = self.evidence = self.resolver = self.dependency_keys = self.referenced = None
        self.formulas, self._links, self._links_later, self._links_of, self._edges = {}, {}, None, None, None

    def records(self) -> Iterator[Record]:
        return (entry.record for entry in self.entries.values() if entry.record is not None)


Stage = Callable[[KnowledgeBase], Iterable[Diagnostic]]

"""The link graph: one networkx DiGraph of records, an edge per (record, target) pair.

Nodes are every record file's id (a file that failed to parse is a node
too, marked `broken`), with `kind`, `title` and `path`. An edge `a -> b`
says that record `a` links to or references record `b`; its `origins` are
the sorted, distinct places the links were written (`flopkb.links.extract.ORIGINS`:
`prose`, `values_for`, `affected_by_hardware`, `source`, `formula-hardware`,
`formula-ref`, `expect-hardware`) and `count` how many links there are.

The graph is built once, on first use, with two bulk calls
(`add_nodes_from`, `add_edges_from`) from `kb.edges` (what the resolved links
give, kept by the load cache: the links themselves are not built);
checking needs only orphans, which come from the links directly (so `flopkb
check` never imports networkx: that import alone is about 0.2 s). Nodes
carry each record's standing (`evidence`: `flopkb.links.debt.Evidence.standing`, what its badge says) when
evidence has been computed; the standing reads disagreements, so the graph is built after the formula stage. Exports are
deterministic: nodes and edges sorted, attributes in a fixed order.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any, Protocol

from flopkb.kb.entry import Entry
from flopkb.links.cached import Edge
from flopkb.links.debt import Evidence
from flopkb.links.extract import Link

if TYPE_CHECKING:
    import networkx as nx

FORMATS = ("json", "graphml", "dot")


class Linked(Protocol):
    """What the graph reads of a knowledge base: its entries, their resolved links and their evidence."""

    entries: dict[str, Entry]
    referenced: set[str] | None
    evidence: Evidence | None

    @property
    def links(self) -> dict[str, list[Link]]: ...

    @property
    def edges(self) -> dict[str, tuple[Edge, ...]]: ...


class LinkGraph:
    """The records and their links, with the questions the site and the checker ask of them.

    `graph` (the networkx DiGraph) is built on first use, once: `flopkb check`
    needs only orphans, which come straight from the resolved links.
    """

    def __init__(self, kb: Linked) -> None:
        self.kb = kb
        self._graph: nx.DiGraph | None = None
        self._edges: dict[str, tuple[Edge, ...]] = {}
        """The edges the graph was made of, by record."""
        self._previous: LinkGraph | None = None

    def take_from(self, previous: LinkGraph) -> None:
        """Build the graph, when first asked for, by updating `previous`'s (which then has none) rather than anew:
        only the records whose edges or attributes changed are touched. `flopkb serve` does, rebuild after
        rebuild; the graph is the one a fresh build makes (`tests/pipeline/test_incremental.py`)."""
        if self._graph is None and previous is not self:
            self._previous = previous

    @classmethod
    def build(cls, kb: Linked) -> LinkGraph:
        return cls(kb)

    @property
    def graph(self) -> nx.DiGraph:
        if self._graph is None:
            self._graph = self._build()
        return self._graph

    def _build(self) -> nx.DiGraph:
        # only the site and `flopkb graph` ask for the graph itself: check need not pay its import
        import networkx as nx

        kb = self.kb
        self._edges = kb.edges
        previous, self._previous = self._previous, None
        if previous is not None and previous._graph is not None:
            kept, previous._graph = previous._graph, None
            return self._update(kept, previous._edges)
        evidence = kb.evidence
        graph: nx.DiGraph[str] = nx.DiGraph()
        graph.add_nodes_from((record_id, _node_attributes(entry, evidence)) for record_id, entry in kb.entries.items())
        graph.add_edges_from(
            (source, target, {"origins": origins, "count": count})
            for source, edges in kb.edges.items()
            for target, origins, count in edges
        )
        return graph

    def _update(self, graph: nx.DiGraph, before: dict[str, tuple[Edge, ...]]) -> nx.DiGraph:
        """`graph`, made of the edges `before`, changed into this base's graph."""
        kb, now = self.kb, self._edges
        changed = [record_id for record_id in before.keys() | now.keys() if before.get(record_id) != now.get(record_id)]
        graph.remove_edges_from(
            (record_id, target) for record_id in changed for target, _, _ in before.get(record_id, ())
        )
        graph.remove_nodes_from([node for node in graph if node not in kb.entries])
        for record_id, entry in kb.entries.items():
            attributes = _node_attributes(entry, kb.evidence)
            if record_id not in graph:
                graph.add_node(record_id, **attributes)
            elif graph.nodes[record_id] != attributes:
                graph.nodes[record_id].clear()
                graph.nodes[record_id].update(attributes)
        graph.add_edges_from(
            (record_id, target, {"origins": origins, "count": count})
            for record_id in sorted(changed)
            for target, origins, count in now.get(record_id, ())
        )
        return graph

    def referenced(self) -> set[str]:
        """Ids of the records some link or ref of another record resolves to."""
        if self.kb.referenced is not None:
            return set(self.kb.referenced)  # as the link stage found them, without building every link
        referenced: set[str] = set()
        for record_id, group in self.kb.links.items():
            referenced.update(
                link.resolved for link in group if link.resolved is not None and link.resolved != record_id
            )
        return referenced

    # -- questions ---------------------------------------------------------

    def backlinks(self, record_id: str) -> list[tuple[str, tuple[str, ...]]]:
        """The other records that link to `record_id`, sorted, each with the origins of its links."""
        if record_id not in self.graph:
            return []
        pred = self.graph.pred[record_id]
        return [(source, pred[source]["origins"]) for source in sorted(pred) if source != record_id]

    def outlinks(self, record_id: str) -> list[tuple[str, tuple[str, ...]]]:
        """The records `record_id` links to (itself included, if it does), sorted, with origins."""
        if record_id not in self.graph:
            return []
        succ = self.graph.succ[record_id]
        return [(target, succ[target]["origins"]) for target in sorted(succ)]

    def orphans(self) -> list[str]:
        """Records (that loaded as records) no link or ref of another record points at, sorted."""
        referenced = self.referenced()
        return sorted(
            record_id
            for record_id, entry in self.kb.entries.items()
            if entry.summary.kind is not None and record_id not in referenced
        )

    def neighbourhood(self, record_id: str, radius: int = 1) -> nx.DiGraph:
        """The subgraph of records within `radius` links of `record_id`, in either direction."""
        import networkx as nx

        if record_id not in self.graph:
            return nx.DiGraph()
        return nx.ego_graph(self.graph, record_id, radius=radius, undirected=True)

    def components(self) -> list[list[str]]:
        """Weakly connected components, each sorted, largest first (ties by first id)."""
        import networkx as nx

        found = [sorted(component) for component in nx.weakly_connected_components(self.graph)]
        return sorted(found, key=lambda ids: (-len(ids), ids[0]))

    # -- exports -----------------------------------------------------------

    def to_data(self, graph: nx.DiGraph | None = None) -> dict[str, Any]:
        """Node-link data (the shape of `networkx.node_link_data(..., edges="links")`), sorted."""
        graph = self.graph if graph is None else graph
        nodes = [{"id": node, **graph.nodes[node]} for node in sorted(graph)]
        links = [
            {"source": source, "target": target, "origins": list(data["origins"]), "count": data["count"]}
            for source, target, data in sorted(graph.edges(data=True), key=lambda edge: (edge[0], edge[1]))
        ]
        return {"directed": True, "multigraph": False, "graph": {}, "nodes": nodes, "links": links}

    def to_json(self, graph: nx.DiGraph | None = None) -> str:
        return json.dumps(self.to_data(graph), indent=2, sort_keys=False, ensure_ascii=False) + "\n"

    def to_graphml(self, graph: nx.DiGraph | None = None) -> str:
        import networkx as nx

        graph = self.graph if graph is None else graph
        flat: nx.DiGraph[str] = nx.DiGraph()
        flat.add_nodes_from(
            (node, {key: _graphml_value(value) for key, value in graph.nodes[node].items()}) for node in sorted(graph)
        )
        flat.add_edges_from(
            (source, target, {"origins": ",".join(data["origins"]), "count": data["count"]})
            for source, target, data in sorted(graph.edges(data=True), key=lambda edge: (edge[0], edge[1]))
        )
        buffer = io.BytesIO()
        nx.write_graphml(flat, buffer, encoding="utf-8", prettyprint=True)
        return buffer.getvalue().decode("utf-8")

    def to_dot(self, graph: nx.DiGraph | None = None) -> str:
        """Graphviz DOT, written by hand (no pydot): one statement per node and per edge."""
        graph = self.graph if graph is None else graph
        lines = ["digraph flopkb {", "  node [shape=box];"]
        for node in sorted(graph):
            data = graph.nodes[node]
            attrs = f"label={_dot_string(data['title'])}, kind={_dot_string(data['kind'])}"
            if data["broken"]:
                attrs += ", style=dashed"
            lines.append(f"  {_dot_string(node)} [{attrs}];")
        for source, target, data in sorted(graph.edges(data=True), key=lambda edge: (edge[0], edge[1])):
            lines.append(
                f"  {_dot_string(source)} -> {_dot_string(target)} [label={_dot_string(','.join(data['origins']))}];"
            )
        lines.append("}")
        return "\n".join(lines) + "\n"

    def export(self, output_format: str) -> str:
        if output_format == "json":
            return self.to_json()
        if output_format == "graphml":
            return self.to_graphml()
        if output_format == "dot":
            return self.to_dot()
        raise ValueError(f"no graph format {output_format!r}; one of {', '.join(FORMATS)}")


def _node_attributes(entry: Entry, evidence: Evidence | None) -> dict[str, Any]:
    summary = entry.summary  # kind and title without the model (unloaded for unchanged files: `Entry.deferred`)
    if summary.kind is not None:
        title = summary.title or entry.id.rsplit("/", 1)[-1]  # as `Record.display_title`
        attributes = {"kind": summary.kind, "title": title, "path": entry.path, "broken": False}
    else:
        data = entry.source.data if entry.source is not None else {}
        kind = data.get("kind")
        attributes = {
            "kind": kind if isinstance(kind, str) else "",
            "title": entry.id.rsplit("/", 1)[-1],
            "path": entry.path,
            "broken": True,
        }
    if evidence is not None:
        attributes["evidence"] = evidence.standing(entry.id)  # what the record's badge says
    return attributes


def _graphml_value(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else json.dumps(value)


def _dot_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "")
    return f'"{escaped}"'

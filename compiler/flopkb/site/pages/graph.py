"""The link-graph page: every record and every link, drawn by Cytoscape from positions computed at build time.

Positions are computed here, not in the browser, so that the picture is the
same on every visit and every build (a fixed seed, coordinates rounded):

- up to `SPRING_LIMIT` records: networkx's `spring_layout` of the whole graph;
- beyond that (a force layout costs O(n^2) per iteration: seconds at a few
  hundred nodes on a shared machine, minutes at 10,000), records are grouped
  by the folder of their id (`flops/`, `kb/g07/`, ...); each group's records
  fill a sunflower spiral (best-linked records in the middle), and the groups
  themselves are placed on a larger sunflower spiral, best-linked groups in
  the middle, overlaps pushed apart. O(records + links).

The data is written to `graph.json` (also a handy export) and, for a graph
of at most `INLINE_LIMIT` records, inlined into the page as well, so that the
graph draws when the site is opened from the file system (where the browser
refuses to fetch files).
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

import networkx as nx

from flopkb.site.incremental.keys import face
from flopkb.site.pages.common import KIND_ORDER, escaped_json, json_for_script

if TYPE_CHECKING:
    from flopkb.site.pages.common import Site

GRAPH_PAGE = "graph.md"
GRAPH_JSON = "graph.json"
SPRING_LIMIT = 300
INLINE_LIMIT = 2000
SEED = 20240611
SPACING = 34.0
"""Pixels between neighbouring records in the drawing."""
_GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))


def links_between(site: Site) -> list[tuple[str, str]]:
    """The links from one record to another, sorted: what the home page counts and the graph page draws. A link of a
    record to itself is not between records, and a link to an id that no record has leads nowhere."""
    graph, entries = site.graph, site.entries
    if graph is None:
        return []
    return sorted(
        (source, target)
        for source in entries
        if source in graph
        for target in graph.succ[source]
        if target != source and target in entries
    )


def graph_data(site: Site) -> dict[str, Any]:
    """Nodes (id, label, kind, href relative to the site root, x, y) and edges of every record, sorted."""
    ids = sorted(site.entries)
    edges = links_between(site)
    positions = layout(ids, edges)
    nodes = []
    for record_id in ids:
        x, y = positions[record_id]
        nodes.append(
            {
                "id": record_id,
                "label": site.titles[record_id],
                "kind": site.kinds[record_id],
                "href": f"records/{record_id}.html",
                "x": x,
                "y": y,
            }
        )
    return {"nodes": nodes, "edges": [{"source": source, "target": target} for source, target in edges]}


def layout(ids: list[str], edges: list[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    """Pixel positions of every node: a spring layout when small, groups on spirals when large (see the module doc)."""
    if not ids:
        return {}
    if len(ids) <= SPRING_LIMIT:
        return _spring(ids, edges)
    return _grouped(ids, edges)


def _spring(ids: list[str], edges: list[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(ids)
    graph.add_edges_from(edges)
    if len(ids) == 1:
        return {ids[0]: (0.0, 0.0)}
    positions = nx.spring_layout(graph, seed=SEED, iterations=100)
    scale = SPACING * 2.5 * math.sqrt(len(ids))
    return {
        node: (_round(float(positions[node][0]) * scale), _round(float(positions[node][1]) * scale)) for node in ids
    }


def group_of(record_id: str) -> str:
    return record_id.rpartition("/")[0]


def _grouped(ids: list[str], edges: list[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    groups: dict[str, list[str]] = {}
    for record_id in ids:
        groups.setdefault(group_of(record_id), []).append(record_id)
    degree = dict.fromkeys(ids, 0)
    for source, target in edges:
        degree[source] += 1
        degree[target] += 1
    links = {name: sum(degree[record_id] for record_id in members) for name, members in groups.items()}
    # Best-linked groups in the middle, the others around them on a sunflower spiral
    # whose radius grows with the area the groups inside it take.
    names = sorted(groups, key=lambda name: (-links[name], name))
    radius = {name: SPACING * (0.6 * math.sqrt(len(groups[name])) + 0.5) for name in names}
    centres: dict[str, tuple[float, float]] = {}
    area = 0.0
    for index, name in enumerate(names):
        distance = math.sqrt(area / 0.7) + (radius[name] if index else 0.0)
        angle = index * _GOLDEN_ANGLE
        centres[name] = (distance * math.cos(angle), distance * math.sin(angle))
        area += (radius[name] + SPACING / 2) ** 2
    placed = _separate(names, centres, radius)
    positions: dict[str, tuple[float, float]] = {}
    for name in names:
        cx, cy = placed[name]
        members = sorted(groups[name], key=lambda record_id: (-degree[record_id], record_id))
        for index, record_id in enumerate(members):
            r = SPACING * 0.6 * math.sqrt(index)
            angle = index * _GOLDEN_ANGLE
            positions[record_id] = (_round(cx + r * math.cos(angle)), _round(cy + r * math.sin(angle)))
    return positions


def _separate(
    names: list[str], centres: dict[str, tuple[float, float]], radius: dict[str, float], rounds: int = 80
) -> dict[str, tuple[float, float]]:
    """Group centres with overlapping discs pushed apart, a little at a time (numpy, all pairs at once:
    groups are few; more than a few hundred are placed as they come)."""
    import numpy as np

    points = np.array([centres[name] for name in names], dtype=float)
    sizes = np.array([radius[name] for name in names], dtype=float)
    if len(names) < 2 or len(names) > 400:
        return {name: (float(x), float(y)) for name, (x, y) in zip(names, points, strict=True)}
    wanted = sizes[:, None] + sizes[None, :] + SPACING
    for _ in range(rounds):
        delta = points[:, None, :] - points[None, :, :]
        distance = np.linalg.norm(delta, axis=2)
        np.fill_diagonal(distance, np.inf)
        overlap = np.clip(wanted - distance, 0, None)
        np.fill_diagonal(overlap, 0)
        if not overlap.any():
            break
        push = (delta / np.maximum(distance, 1e-6)[:, :, None]) * (overlap / 2)[:, :, None]
        points += push.sum(axis=1) * 0.5
    return {name: (float(x), float(y)) for name, (x, y) in zip(names, points, strict=True)}


def _round(value: float) -> float:
    rounded = round(value, 1)
    return 0.0 if rounded == 0 else rounded


def graph_key(site: Site) -> str:
    """The graph page shows every record's id, title and kind and the links among them: what their faces hold
    (`flopkb.site.incremental.keys.face`)."""
    key = hashlib.blake2b(site.result.base.encode(), digest_size=16)
    for record_id in sorted(site.entries):
        key.update(f"{record_id}\0{face(site, record_id)}\0".encode())
    return key.hexdigest()


def render_graph_page(site: Site) -> None:
    """The graph page and `graph.json`, or the previous build's while no record shows otherwise (`graph_key`)."""
    if site.keep(graph_key(site), GRAPH_PAGE, GRAPH_JSON):
        return
    data = graph_data(site)
    site.write(GRAPH_JSON, escaped_json(data, sort_keys=True) + "\n")
    page = site.page(GRAPH_PAGE)
    counts = {kind: 0 for kind in KIND_ORDER}
    for kind in site.kinds.values():
        counts[kind] = counts.get(kind, 0) + 1
    site.render(
        "pages/graph.md.j2",
        GRAPH_PAGE,
        page=page,
        root=page.root,
        records=len(data["nodes"]),
        links=len(data["edges"]),
        counts=counts,
        kind_pages={kind: page.url(f"kinds/{kind}.md") for kind in counts},
        inline=json_for_script(data) if len(data["nodes"]) <= INLINE_LIMIT else None,
        data_url=GRAPH_JSON,
        layout="spring" if len(data["nodes"]) <= SPRING_LIMIT else "grouped",
    )

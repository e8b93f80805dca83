"""The link graph: edges typed by origin, backlinks, orphans, neighbourhoods, components, exports."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.cli import main
from flopkb.links.cached import edges_of
from flopkb.links.debt import DISAGREES, DRAFT, HAS_ERRATA, NO_SOURCES, SOURCED, UNVERIFIED_FIGURES
from kbfixture import H100 as ACC
from kbfixture import compile_kb, located, write_kb
from random_kb import initial

FLOP = """\
id: flops/a
kind: flop
category: arithmetic-intensity
description: 'See [[facts/b]] and [[facts/b#f|its formula]], and [[flops/a]] itself.'
hardware_parameters:
  - parameter: memory_bandwidth
    effect: E.
    basis: derived
    values_for: [h100]
affected_by_hardware: [hw/h100]
sources: [src/p, https://example.org]
"""

FACT = """\
id: facts/b
kind: fact
statement: A fact.
formulas:
  - id: f
    expr: "1"
"""

SOURCE = """\
id: src/p
kind: source
title: "A paper: \\"quoted\\""
"""

LONELY = """\
# a comment first
id: facts/lonely
kind: fact
statement: Nothing links here; it links to [[flops/a]].
"""

FILES = {
    "records/hw/h100.yaml": ACC,
    "records/flops/a.yaml": FLOP,
    "records/facts/b.yaml": FACT,
    "records/src/p.yaml": SOURCE,
    "records/facts/lonely.yaml": LONELY,
}


def test_orphans_at_their_id_line(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert located(kb) == [("orphan", "records/facts/lonely.yaml", 2, 5)]
    assert kb.diagnostics[0].message == "no other record links to or references facts/lonely"


def test_a_link_to_itself_does_not_save_a_record_from_orphanhood(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, {"records/facts/b.yaml": FACT.replace("A fact.", "See [[facts/b#f]].")}))
    assert located(kb) == [("orphan", "records/facts/b.yaml", 1, 5)]


def test_links_from_a_file_that_failed_validation_still_count(tmp_path: Path) -> None:
    broken = "id: hw/c\nkind: accelerator\nvendor: V\nnotes: See [[facts/b]].\n"  # an accelerator needs specs
    kb = compile_kb(write_kb(tmp_path, {"records/facts/b.yaml": FACT, "records/hw/c.yaml": broken}))
    assert kb.entries["hw/c"].record is None
    assert [c for c in located(kb)] == [("missing-field", "records/hw/c.yaml", 1, 1)]
    assert kb.graph is not None and kb.graph.backlinks("facts/b") == [("hw/c", ("prose",))]


def test_edges_are_typed_by_origin(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert kb.graph is not None
    graph = kb.graph.graph
    assert sorted(graph.edges) == [
        ("facts/lonely", "flops/a"),
        ("flops/a", "facts/b"),
        ("flops/a", "flops/a"),
        ("flops/a", "hw/h100"),
        ("flops/a", "src/p"),
    ]
    assert graph.edges["flops/a", "hw/h100"] == {"origins": ("affected_by_hardware", "values_for"), "count": 2}
    assert graph.edges["flops/a", "facts/b"] == {"origins": ("prose",), "count": 2}
    assert graph.edges["flops/a", "src/p"]["origins"] == ("source",)
    assert graph.nodes["hw/h100"] == {
        "kind": "accelerator",
        "title": "h100",
        "path": "records/hw/h100.yaml",
        "broken": False,
        "evidence": "no-sources",  # what its badge says: the fixture cites nothing
    }


def test_formula_origins(tmp_path: Path) -> None:
    fact = FACT + (
        "  - id: g\n"
        "    ref: facts/b#f\n"
        "  - id: h\n"
        "    expr: hw.memory_bandwidth\n"
        "    unit: byte/s\n"
        "    hardware: [hw/h100]\n"
        "    expect:\n"
        "      - {hardware: hw/h100, value: 3.35e12}\n"
    )
    kb = compile_kb(write_kb(tmp_path, {"records/hw/h100.yaml": ACC, "records/facts/b.yaml": fact}))
    assert kb.graph is not None
    assert kb.graph.outlinks("facts/b") == [
        ("facts/b", ("formula-ref",)),
        ("hw/h100", ("expect-hardware", "formula-hardware")),
    ]


def test_backlinks_neighbourhood_and_components(tmp_path: Path) -> None:
    extra = {"records/facts/island.yaml": "id: facts/island\nkind: fact\nstatement: Alone.\n"}
    kb = compile_kb(write_kb(tmp_path, {**FILES, **extra}))
    assert kb.graph is not None
    graph = kb.graph
    assert graph.backlinks("flops/a") == [("facts/lonely", ("prose",))]
    assert graph.backlinks("hw/h100") == [("flops/a", ("affected_by_hardware", "values_for"))]
    assert graph.backlinks("nobody") == []
    assert sorted(graph.neighbourhood("facts/b", 1)) == ["facts/b", "flops/a"]
    assert sorted(graph.neighbourhood("facts/b", 2)) == ["facts/b", "facts/lonely", "flops/a", "hw/h100", "src/p"]
    assert graph.components() == [["facts/b", "facts/lonely", "flops/a", "hw/h100", "src/p"], ["facts/island"]]
    assert graph.orphans() == ["facts/island", "facts/lonely"]


def test_a_broken_file_is_a_node(tmp_path: Path) -> None:
    kb = compile_kb(
        write_kb(tmp_path, {**FILES, "records/facts/bad.yaml": "id: facts/bad\nkind: fact\nstatement: [oops\n"})
    )
    assert kb.graph is not None
    assert kb.graph.graph.nodes["facts/bad"]["broken"] is True
    assert "facts/bad" not in kb.graph.orphans()  # it has its own error already


def test_json_export_is_node_link_data_and_deterministic(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert kb.graph is not None
    text = kb.graph.to_json()
    data = json.loads(text)
    assert [node["id"] for node in data["nodes"]] == sorted(kb.entries)
    assert {
        "source": "flops/a",
        "target": "hw/h100",
        "origins": ["affected_by_hardware", "values_for"],
        "count": 2,
    } in data["links"]
    rebuilt = nx.node_link_graph(data, edges="links")
    assert sorted(rebuilt.edges) == sorted(kb.graph.graph.edges)
    assert compile_kb(tmp_path).graph.to_json() == text  # type: ignore[union-attr]


def test_graphml_export_parses(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert kb.graph is not None
    path = tmp_path / "graph.graphml"
    path.write_text(kb.graph.to_graphml(), encoding="utf-8")
    read = nx.read_graphml(path)
    assert sorted(read.nodes) == sorted(kb.entries)
    assert read.edges["flops/a", "hw/h100"]["origins"] == "affected_by_hardware,values_for"
    assert read.nodes["src/p"]["title"] == 'A paper: "quoted"'


def test_dot_export_has_every_node_and_edge_escaped(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, FILES))
    assert kb.graph is not None
    dot = kb.graph.to_dot()
    assert dot.startswith("digraph flopkb {") and dot.rstrip().endswith("}")
    for record_id in kb.entries:
        assert re.search(rf'^  "{re.escape(record_id)}" \[', dot, re.MULTILINE)
    assert '"flops/a" -> "hw/h100" [label="affected_by_hardware,values_for"];' in dot
    assert 'label="A paper: \\"quoted\\""' in dot


def test_graph_command_formats_and_output_file(tmp_path: Path) -> None:
    write_kb(tmp_path, FILES)
    runner = CliRunner()
    result = runner.invoke(main, ["graph", "--root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["nodes"]) == 5
    out = tmp_path / "g.dot"
    result = runner.invoke(main, ["graph", "--root", str(tmp_path), "--format", "dot", "--output", str(out)])
    assert result.exit_code == 0 and result.output == ""
    assert out.read_text(encoding="utf-8").count(" -> ") == 5
    result = runner.invoke(main, ["graph", "--root", str(tmp_path), "--format", "graphml"])
    assert result.exit_code == 0 and "<graphml" in result.output
    assert runner.invoke(main, ["graph", "--root", str(tmp_path), "--format", "png"]).exit_code == 2


STANDINGS = {
    "records/src/paper.yaml": (
        "id: src/paper\nkind: source\ntitle: P\nurl: https://example.org/p\n"
        "measurements:\n  - {id: m, quantity: q, value: 2, basis: measured, where: Table 1}\n"
    ),
    "records/facts/disagrees.yaml": (
        "id: facts/disagrees\nkind: fact\nstatement: One, says [[src/paper]].\nsources: [src/paper]\n"
        "formulas:\n  - id: g\n    expr: '1'\n    expect:\n      - measured: src/paper#m\n"
    ),
    "records/facts/draft.yaml": "id: facts/draft\nkind: fact\nstatement: Replace this sentence with the fact.\n",
    "records/facts/bare.yaml": "id: facts/bare\nkind: fact\nstatement: See [[facts/draft]] and [[flops/debt]].\n",
    "records/facts/errata.yaml": (
        "id: facts/errata\nkind: fact\nstatement: It is 4x, see [[facts/bare]].\nsources: [src/paper]\n"
        "errata:\n  - {field: statement, quote: It is 4x, correction: It is 5x., basis: derived}\n"
    ),
    "records/flops/debt.yaml": (
        "id: flops/debt\nkind: flop\ncategory: memory-bandwidth\ndescription: D [[facts/errata]].\n"
        "sources: [src/paper]\nhardware_parameters:\n  - parameter: memory_bandwidth\n    effect: E.\n"
        "    basis: unverified\n    values_for: [hw/h100]\n"
    ),
    "records/hw/h100.yaml": ACC,
}


def test_every_node_carries_the_standing_its_badge_shows(tmp_path: Path) -> None:
    kb = compile_kb(write_kb(tmp_path, STANDINGS))
    assert kb.graph is not None and kb.evidence is not None
    nodes = kb.graph.graph.nodes
    assert {record_id: nodes[record_id]["evidence"] for record_id in kb.entries} == {
        "src/paper": SOURCED,
        "facts/disagrees": DISAGREES,
        "facts/draft": DRAFT,
        "facts/bare": NO_SOURCES,
        "facts/errata": HAS_ERRATA,
        "flops/debt": UNVERIFIED_FIGURES,
        "hw/h100": NO_SOURCES,
    }
    assert all(nodes[record_id]["evidence"] == kb.evidence.standing(record_id) for record_id in kb.entries)
    exported = json.loads(CliRunner().invoke(main, ["graph", "--root", str(tmp_path)]).output)
    assert {node["id"]: node["evidence"] for node in exported["nodes"]}["facts/disagrees"] == DISAGREES


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_on_any_base_each_node_carries_the_standing_its_badge_shows(
    tmp_path_factory: pytest.TempPathFactory, seed: int
) -> None:
    root = write_kb(tmp_path_factory.mktemp("kb"), initial(random.Random(seed)))
    kb = compile_kb(root)
    assert kb.graph is not None and kb.evidence is not None
    expected = {record_id: kb.evidence.standing(record_id) for record_id in kb.entries}
    assert {record_id: kb.graph.graph.nodes[record_id]["evidence"] for record_id in kb.entries} == expected
    exported = json.loads(CliRunner().invoke(main, ["graph", "--root", str(root)]).output)
    assert {node["id"]: node["evidence"] for node in exported["nodes"]} == expected


@given(
    st.lists(
        st.tuples(st.sampled_from(["body", "sources", "ref", "values_for"]), st.sampled_from(["a", "b", "c", None]))
    )
)
def test_a_records_edges_are_its_links_grouped_by_target(links: list[tuple[str, str | None]]) -> None:
    """One edge per target reached, in the order first reached: the sorted distinct origins of its links, and how many
    links reach it."""
    origins, targets = [origin for origin, _ in links], [target for _, target in links]
    reached = list(dict.fromkeys(target for target in targets if target is not None))
    expected = tuple(
        (
            target,
            tuple(sorted({origin for origin, to in links if to == target})),
            sum(1 for _, to in links if to == target),
        )
        for target in reached
    )
    assert edges_of(origins, targets) == expected

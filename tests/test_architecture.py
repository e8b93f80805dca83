"""The package's shape: no import cycle (imports inside functions and under TYPE_CHECKING count), small modules."""

import ast
from collections import Counter
from pathlib import Path

import networkx as nx

from repo import REPO

PACKAGE = REPO / "compiler" / "flopkb"
MAX_NON_BLANK_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """Every flopkb module `path` imports anywhere in its body; `from a import b` counts `a.b` when that is a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in known}


def import_graph() -> nx.DiGraph:
    paths = sorted(PACKAGE.rglob("*.py"))
    known = {module_name(path) for path in paths}
    graph = nx.DiGraph()
    for path in paths:
        name = module_name(path)
        graph.add_node(name)
        graph.add_edges_from((name, target) for target in imported_modules(path, known) if target != name)
    return graph


def test_no_import_cycle():
    graph = import_graph()
    packages = {name for name in graph if (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()}
    # A package's __init__ is imported before any of its modules: an edge into a package is not an edge out of it.
    modules = graph.subgraph(name for name in graph if name not in packages)
    assert list(nx.simple_cycles(modules)) == []


def test_import_graph_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from flopkb.report import codes\n    import flopkb.load.source\n")
    assert imported_modules(module, {"flopkb.report.codes", "flopkb.load.source"}) == {
        "flopkb.report.codes",
        "flopkb.load.source",
    }


def test_no_module_over_500_non_blank_lines():
    sizes = {
        module_name(path): sum(1 for line in path.read_text().splitlines() if line.strip())
        for path in PACKAGE.rglob("*.py")
    }
    assert {name: size for name, size in sizes.items() if size > MAX_NON_BLANK_LINES} == {}


def test_no_two_test_modules_share_a_name():
    # the test folders are not packages: pytest imports each module by its name, and refuses a second of that name
    names = Counter(path.name for path in (REPO / "tests").rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []

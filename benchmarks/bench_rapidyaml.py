"""Parse a generated base's records with libyaml (PyYAML's C loader) and with rapidyaml, in one process.

    pip install rapidyaml   # not a dependency of flopkb
    python benchmarks/bench_rapidyaml.py DIR [--repeat 2]

Prints the best CPU time of: libyaml's C load (the check's floor); rapidyaml's
parse alone; rapidyaml's parse plus a Python walk that builds the dicts and
lists (every scalar a string: no YAML 1.1 typing, no positions). See
docs/benchmarks.md, section (a‴).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    try:
        ryml: Any = importlib.import_module("ryml")
    except ImportError:
        sys.exit("rapidyaml is not installed: pip install rapidyaml")
    files = [path.read_bytes() for path in sorted((args.root / "records").rglob("*.yaml"))]

    def walk(tree: Any, node: int) -> object:
        if tree.is_map(node) or tree.is_seq(node):
            children = []
            child = tree.first_child(node)
            while child != ryml.NONE:
                children.append(child)
                child = tree.next_sibling(child)
            if tree.is_seq(node):
                return [walk(tree, child) for child in children]
            return {bytes(tree.key(child)).decode(): walk(tree, child) for child in children}
        return bytes(tree.val(node)).decode()

    def libyaml() -> None:
        for raw in files:
            yaml.load(raw.decode(), Loader=yaml.CSafeLoader)

    def rapidyaml_parse() -> None:
        for raw in files:
            ryml.parse_in_arena(raw)

    def rapidyaml_to_python() -> None:
        for raw in files:
            tree = ryml.parse_in_arena(raw)
            walk(tree, tree.root_id())

    runs: dict[str, list[float]] = {}
    readers: list[Callable[[], None]] = [libyaml, rapidyaml_parse, rapidyaml_to_python]
    for _ in range(args.repeat):
        for reader in readers:
            start = time.process_time()
            reader()
            runs.setdefault(reader.__name__, []).append(time.process_time() - start)
    for name, times in runs.items():
        print(f"{name:<22} {min(times):.2f} s CPU ({len(files)} files)")


if __name__ == "__main__":
    main()

"""Time the checker's reading of prose (`flopkb.links.prose.scan`) against the full parse, on a base's markdown fields.

    python benchmarks/bench_prose.py /tmp/kb10k

Prints how many markdown fields there are, how many hold a `[[`, how many of those `scan` takes from its
fast path, and the CPU seconds of `scan` and of `parse` on every field with a `[[`, beside PyYAML's C
loader on the same files (the floor `flopkb check` is measured against).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from flopkb.links import extract as links
from flopkb.links import prose


def fields(value: Any, node: tuple[Any, ...]) -> Iterator[str]:
    """The markdown strings under `value`, walked along a plan node of `flopkb.links.extract`."""
    tag = node[0]
    if tag == links._MD:
        if type(value) is str:
            yield value
    elif tag == links._LIST and type(value) is list:
        for item in value:
            yield from fields(item, node[1])
    elif tag == links._DICT and type(value) is dict:
        for item in value.values():
            yield from fields(item, node[1])
    elif tag == links._MODEL and type(value) is dict:
        for key, child in node[1].items():
            if key in value:
                yield from fields(value[key], child)


def cpu(run: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path)
    base = parser.parse_args().base
    texts = [path.read_text(encoding="utf-8") for path in sorted(base.glob("records/**/*.yaml"))]
    load = cpu(lambda: [yaml.load(text, Loader=yaml.CSafeLoader) for text in texts])
    data = [yaml.load(text, Loader=yaml.CSafeLoader) for text in texts]
    empty = (links._MODEL, {})
    found = [text for record in data for text in fields(record, links.PLANS.get(record.get("kind"), empty))]
    linked = [text for text in found if "[[" in text]
    fast = sum(1 for text in linked if prose._plain(text) and prose._fast_links(text) is not None)
    size = sum(map(len, found))
    print(f"{len(texts)} files, {len(found)} markdown fields ({size / 1e6:.1f} MB), {len(linked)} with [[")
    print(f"fast path: {fast} of {len(linked)} fields with [[ ({100 * fast / max(1, len(linked)):.1f} %)")
    print(f"PyYAML CSafeLoader, every file: {load:.3f} s")
    print(f"scan, every field:              {cpu(lambda: [prose.scan(text) for text in found]):.3f} s")
    print(f"parse, every field with [[:     {cpu(lambda: [prose.parse(text) for text in linked], 1):.3f} s")


if __name__ == "__main__":
    main()

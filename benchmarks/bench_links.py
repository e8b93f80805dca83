"""Benchmark the link stages alone, in-process, on a generated base.

    python benchmarks/bench_links.py [--records 10000] [--repeat 3] [--root DIR]

Each repeat is a fresh process: it loads the base (untimed), its entries
marked as the load cache marks them (so that stages keep their per-file work
in `Entry.derived`) from the second pass on, then times, with time.perf_counter
and time.process_time, the link stages (`check_links`, `check_graph`,
`check_evidence`) four times:

- `cold`: every link found in its record's data and resolved (what a check
  without the cache pays);
- `cold, caching`: the same, keeping each file's links and what they resolve
  to in its `derived` data (what the first cached check pays);
- `re-resolve`: every link resolved again from its links as written, kept by
  the first pass (what a cached check pays when an id, kind or alias of the
  base changed: a record added, removed or renamed);
- `warm`: what the links resolved to taken from the first pass (what a cached
  check pays when no id, kind or alias changed: the usual edit).

Each line gives the three stages' total and the link stage's own share. The
machine is shared and noisy: CPU time is the steadier figure; the best of the
repeats is printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

ONE_RUN = """
import json, sys, time
from pathlib import Path
from flopkb.config import load_config
from flopkb.pipeline.compile import load_knowledge_base
from flopkb.links.extract import RESOLVED
from flopkb.links.resolve import check_links
from flopkb.links.orphans import check_graph
from flopkb.links.evidence import check_evidence

kb = load_knowledge_base(load_config(Path(sys.argv[1])))

def clock():
    return time.perf_counter(), time.process_time()

def since(start):
    now = clock()
    return {"wall": now[0] - start[0], "cpu": now[1] - start[1]}

def stages():
    kb.resolver = kb.dependency_keys = None
    start = clock()
    problems = list(check_links(kb))
    links = since(start)
    problems += list(check_graph(kb))
    problems += list(check_evidence(kb))
    return {"total": since(start), "links": links, "problems": len(problems)}

runs = {"cold": stages()}
for entry in kb.entries.values():
    entry.digest = entry.id.encode()  # as the load cache marks its entries: stages keep their work in `derived`
runs["cold, caching"] = stages()
for entry in kb.entries.values():
    entry.derived.pop(RESOLVED, None)
runs["re-resolve"] = stages()
runs["warm"] = stages()
runs["count"] = sum(len(group) for group in kb.links.values())
print(json.dumps(runs))
"""
PARTS = ("cold", "cold, caching", "re-resolve", "warm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, help="reuse or create the generated base here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = args.root or Path(folder) / "kb"
        if not (root / "records").is_dir():
            generate(root, args.records)
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", ONE_RUN, str(root)], check=True, capture_output=True, text=True
                ).stdout
            )
            for _ in range(args.repeat)
        ]
    print(f"{runs[0]['count']:,} links, {runs[0]['cold']['problems']} problems")
    for part in PARTS:
        best = {kind: min(run[part][kind]["cpu"] for run in runs) for kind in ("total", "links")}
        wall = min(run[part]["total"]["wall"] for run in runs)
        print(
            f"{part:13} link stages: best wall {wall:.3f} s, best cpu {best['total']:.3f} s "
            f"(links {best['links']:.3f} s) (target: 0.3 s)"
        )


if __name__ == "__main__":
    main()

"""Benchmark the link stages alone, in-process, on a generated base.

    python benchmarks/bench_links.py [--records 10000] [--repeat 3] [--root DIR]

Each repeat is a fresh process: it loads the base (untimed), then times, with
time.perf_counter and time.process_time:

- `extract`: every record's links found as written (the markdown fields'
  wikilinks and the typed refs), alone: what a cold check pays and a warm one
  takes from the cache (`flopkb.links.extract_all`);
- `resolve`: the resolution index built and every link resolved and checked
  (`check_links` on entries that carry their links as written, as the load
  cache gives them back when ids or aliases changed); a check after an edit
  that changed none takes even what they resolve to from the cache;
- `graph`: orphans (`check_graph`);
- `evidence`: evidence debt and its diagnostics (`check_evidence`).

The cold check pays extract + resolve + graph + evidence (printed as `cold
total`); a check after editing one file pays resolve + graph and little of
evidence. The machine is shared and noisy: CPU time is the steadier figure;
the best of the repeats is printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate  # noqa: E402

ONE_RUN = """
import json, pickle, sys, time
from pathlib import Path
from flopkb.config import load_config
from flopkb.pipeline import load_knowledge_base
from flopkb.links import MEMO, extract_all, written_links
from flopkb.resolve import check_links
from flopkb.graph import check_graph
from flopkb.evidence import check_evidence

kb = load_knowledge_base(load_config(Path(sys.argv[1])))

def clock():
    return time.perf_counter(), time.process_time()

def since(start):
    now = clock()
    return {"wall": now[0] - start[0], "cpu": now[1] - start[1]}

start = clock()
found = extract_all(kb.entries)
extract = since(start)
for entry in kb.entries.values():  # as the load cache gives them back after a change of ids: links as written, to resolve
    if entry.source is not None:
        entry.derived[MEMO] = pickle.dumps(written_links(found.get(entry.id, [])))
start = clock()
problems = list(check_links(kb))
resolve = since(start)
start = clock()
problems += list(check_graph(kb))
graph = since(start)
start = clock()
problems += list(check_evidence(kb))
evidence = since(start)
links = sum(len(group) for group in kb.links.values())
print(json.dumps({"extract": extract, "resolve": resolve, "graph": graph, "evidence": evidence, "links": links, "problems": len(problems)}))
"""
PARTS = ("extract", "resolve", "graph", "evidence")


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
        runs = [json.loads(subprocess.run([sys.executable, "-c", ONE_RUN, str(root)], check=True, capture_output=True, text=True).stdout)
                for _ in range(args.repeat)]
    print(f"{runs[0]['links']:,} links, {runs[0]['problems']} problems")
    for part in PARTS:
        wall = min(run[part]["wall"] for run in runs)
        cpu = min(run[part]["cpu"] for run in runs)
        print(f"{part:9} best wall {wall:.3f} s, best cpu {cpu:.3f} s")
    for name, parts in (("cold total", PARTS), ("without extract", PARTS[1:])):
        wall = min(sum(run[part]["wall"] for part in parts) for run in runs)
        cpu = min(sum(run[part]["cpu"] for part in parts) for run in runs)
        print(f"{name:15} best wall {wall:.3f} s, best cpu {cpu:.3f} s (target: 0.3 s)")


if __name__ == "__main__":
    main()

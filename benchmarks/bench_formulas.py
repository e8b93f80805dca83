"""Benchmark the spec and formula stages alone, in-process, on a generated base.

    python benchmarks/bench_formulas.py [--records 10000] [--repeat 3]

Each repeat is a fresh process: it loads the base and runs the link stages
(untimed), then times, with time.perf_counter and time.process_time, the
first quantity read (pint's import and the unit registry: a once-per-process
cost that the first stage to read a quantity pays), the spec stage and the
formula stage. The machine is shared and noisy: CPU time is the steadier
figure; the best of the repeats is printed.
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
from flopkb.pipeline.stages import LINK_STAGES
from flopkb.formulas.specs import check_specs
from flopkb.formulas.stage import check_formulas

kb = load_knowledge_base(load_config(Path(sys.argv[1])))
for stage in LINK_STAGES:
    kb.diagnostics.extend(stage(kb))

def clock():
    return time.perf_counter(), time.process_time()

def since(start):
    now = clock()
    return {"wall": now[0] - start[0], "cpu": now[1] - start[1]}

start = clock()
from flopkb.formulas.units import parse_quantity
parse_quantity("1 TB/s")
pint = since(start)
start = clock()
specs = list(check_specs(kb))
spec_time = since(start)
start = clock()
problems = list(check_formulas(kb))
formula_time = since(start)
evaluations = sum(len(result.evaluations) for results in kb.formulas.values() for result in results)
formulas = sum(len(results) for results in kb.formulas.values())
print(json.dumps({"pint": pint, "specs": spec_time, "formulas": formula_time, "count": formulas,
                  "evaluations": evaluations, "problems": len(specs) + len(problems)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = generate(Path(folder) / "kb", args.records)
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", ONE_RUN, str(root)], check=True, capture_output=True, text=True
                ).stdout
            )
            for _ in range(args.repeat)
        ]
    first = runs[0]
    print(f"{first['count']:,} formulas, {first['evaluations']:,} evaluations, {first['problems']} problems")
    for part in ("pint", "specs", "formulas"):
        wall = min(run[part]["wall"] for run in runs)
        cpu = min(run[part]["cpu"] for run in runs)
        print(f"{part:9} best wall {wall:.3f} s, best cpu {cpu:.3f} s")
    total = min(run["pint"]["wall"] + run["specs"]["wall"] + run["formulas"]["wall"] for run in runs)
    total_cpu = min(run["pint"]["cpu"] + run["specs"]["cpu"] + run["formulas"]["cpu"] for run in runs)
    print(f"{'total':9} best wall {total:.3f} s, best cpu {total_cpu:.3f} s (budget: 1 s)")


if __name__ == "__main__":
    main()

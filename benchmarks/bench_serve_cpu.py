"""CPU and memory of `flopkb serve`'s rebuilds, in process: what each save costs, the collection included.

    python benchmarks/bench_serve_cpu.py --records 10000 --saves 20
    PYTHONPATH=/tmp/main-snap/compiler python benchmarks/bench_serve_cpu.py --records 10000 --saves 20   # before

A `Server` (no watcher, no HTTP) builds a generated base once, then each
save edits a record as `bench_serve.py` does (a flop's prose, then an
accelerator's `memory_capacity`, alternating) and calls `rebuild()`. Per
save: the CPU seconds of the rebuild (`time.process_time`: this process
only, so the machine's other jobs do not count, though they slow it), of
its garbage collections alone, the resident memory after it, and how many
objects are frozen out of the collector's reach. CPU seconds, unlike the
seconds to the page of `bench_serve.py`, compare across a loaded machine's
runs; medians per kind of edit are printed last.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serve import EDITS
from flopkb.config import load_config
from flopkb.site.publishing.serve import Server
from generate import generate


def resident_mib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--root", type=Path, help="a generated base to copy from (else one is generated)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="flopkb-bench-serve-cpu-")) / "kb"
    if args.root:
        shutil.copytree(args.root, root, ignore=shutil.ignore_patterns("build"))
    else:
        generate(root, args.records)
    collecting = [0.0]
    collect = gc.collect

    def timed_collect(*given: Any) -> int:
        start = time.process_time()
        try:
            return collect(*given)
        finally:
            collecting[0] += time.process_time() - start

    gc.collect = timed_collect  # type: ignore[assignment]
    server = Server(load_config(root), 0)
    start = time.process_time()
    server.rebuild()
    print(f"first build: {time.process_time() - start:.1f} s CPU, {resident_mib()} MiB", flush=True)
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in EDITS}
    memory = [resident_mib()]
    names = list(EDITS)
    for n in range(args.saves):
        name = names[n % len(names)]
        EDITS[name](root, 9000 + n)
        collecting[0] = 0.0
        start = time.process_time()
        server.rebuild()
        cpu = time.process_time() - start
        found[name].append((cpu, collecting[0]))
        memory.append(resident_mib())
        print(
            f"save {n + 1:3d} {name:<12} {cpu:5.2f} s CPU (collection {collecting[0]:4.2f} s)"
            f"  {memory[-1]} MiB  frozen objects {gc.get_freeze_count():,}",
            flush=True,
        )
    for name, runs in found.items():
        if runs:
            print(
                f"{name:<12} median {statistics.median(cpu for cpu, _ in runs):.2f} s CPU,"
                f" collection {statistics.median(gc_cpu for _, gc_cpu in runs):.2f} s ({len(runs)} saves)"
            )
    print(f"resident memory: first build {memory[0]} MiB, first save {memory[1]} MiB, last save {memory[-1]} MiB")
    server.stop()
    shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark the incremental check: a cold `flopkb check` against one after changing a single record.

    python benchmarks/bench_incremental.py [--records 10000] [--repeat 3]

Every run is a fresh process, in the same run of this script (the machine is
shared and noisy: compare the ratio, not the seconds):

- cold: `flopkb check --no-cache`, which neither reads nor writes the cache;
- cold, writing the cache: `flopkb check` with the cache folder removed;
- warm: `flopkb check` after appending a comment to one record, so that one
  file's content (and digest) changed and every other file is served from
  the cache.

Prints the best wall time and CPU time (user + system, worker processes
included) of each, and the ratio warm / cold of both (target <= 0.25). On a
loaded machine wall times wait for the CPU; the CPU ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds of one process (and the workers it waited for)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed with exit status {process.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(wall for wall, _ in runs), min(cpu for _, cpu in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, help="reuse or create the generated base here")
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="flopkb-bench-")) / "kb"
    if not (root / "records").is_dir():
        generate(root, args.records)
    check = [sys.executable, "-m", "flopkb", "check", "--root", str(root), "--format", "json"]
    edited = next((root / "records").rglob("*.yaml"))
    colds, writes, warms = [], [], []
    for round_ in range(args.repeat):
        colds.append(timed([*check, "--no-cache"]))
        shutil.rmtree(root / "build" / "cache", ignore_errors=True)
        writes.append(timed(check))
        with edited.open("a", encoding="utf-8") as stream:
            stream.write(f"# edited in round {round_}\n")
        warms.append(timed(check))
    (cold, cold_cpu), (write, write_cpu), (warm, warm_cpu) = best(colds), best(writes), best(warms)
    print(f"records:                       {args.records}")
    print(f"flopkb check, cold:            {cold:.2f} s wall, {cold_cpu:.2f} s CPU (--no-cache)")
    print(f"flopkb check, cold + cache:    {write:.2f} s wall, {write_cpu:.2f} s CPU (no cache yet; writes it)")
    print(f"flopkb check, one file edited: {warm:.2f} s wall, {warm_cpu:.2f} s CPU")
    print(f"ratio warm / cold:             {warm / cold:.2f} wall, {warm_cpu / cold_cpu:.2f} CPU (target <= 0.25)")


if __name__ == "__main__":
    main()

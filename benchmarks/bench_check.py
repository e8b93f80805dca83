"""Benchmark a cold `flopkb check` against reading and parsing the same files with PyYAML's C loader.

    python benchmarks/bench_check.py [--records 10000] [--repeat 3] [--root DIR] [--compare CHECKOUT]

Both run as fresh processes, alternating, in the same run (this machine is
shared and noisy: compare the ratio, not the seconds). The check runs with
`--no-cache` (the cache is on by default: a second run would be warm). Prints
the best wall time and CPU time (user + system, the check's worker processes
included) of each, their ratios and the check's peak memory (the largest
resident set of the process or of any one of its workers). With `--compare`,
the check of another checkout of flopkb (say, a `git worktree` of an older
commit: its `compiler/` folder goes first on PYTHONPATH) runs too, in the same
alternation: before and after, against the same baseline.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

BASELINE = """
import sys, pathlib, yaml
for path in sorted(pathlib.Path(sys.argv[1], "records").rglob("*.yaml")):
    yaml.load(path.read_bytes().decode("utf-8"), Loader=yaml.CSafeLoader)
"""


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, exit status and peak resident memory (bytes) of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_utime + usage.ru_stime, process.returncode, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, help="reuse or create the generated base here")
    parser.add_argument(
        "--compare", type=Path, metavar="CHECKOUT", help="also time the check of the flopkb checkout there"
    )
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="flopkb-bench-")) / "kb"
    if not (root / "records").is_dir():
        generate(root, args.records)
    baseline_cmd = [sys.executable, "-c", BASELINE, str(root)]
    check_cmd = [sys.executable, "-m", "flopkb", "check", "--root", str(root), "--format", "json", "--no-cache"]
    other_env = {**os.environ, "PYTHONPATH": str(args.compare.resolve() / "compiler")} if args.compare else None
    baselines, checks, others, memory, other_memory = [], [], [], 0, 0
    for _ in range(args.repeat):
        baselines.append(timed(baseline_cmd)[:2])
        elapsed, cpu, status, peak = timed(check_cmd)
        if status not in (0, 1):
            raise SystemExit(f"flopkb check failed with exit status {status}")
        checks.append((elapsed, cpu))
        memory = max(memory, peak)
        if other_env is not None:
            elapsed, cpu, status, peak = timed(check_cmd, other_env)
            if status not in (0, 1):
                raise SystemExit(f"flopkb check of {args.compare} failed with exit status {status}")
            others.append((elapsed, cpu))
            other_memory = max(other_memory, peak)
    baseline, baseline_cpu = min(wall for wall, _ in baselines), min(cpu for _, cpu in baselines)
    check, check_cpu = min(wall for wall, _ in checks), min(cpu for _, cpu in checks)
    print(f"records:                  {args.records}")
    print(f"PyYAML C load (baseline): {baseline:.2f} s wall, {baseline_cpu:.2f} s CPU")
    print(f"flopkb check --no-cache:  {check:.2f} s wall, {check_cpu:.2f} s CPU")
    print(f"ratio:                    {check / baseline:.2f} wall (target <= 1.5), {check_cpu / baseline_cpu:.2f} CPU")
    print(f"check peak memory:        {memory / 2**20:.0f} MiB (target < 1024)")
    if others:
        other, other_cpu = min(wall for wall, _ in others), min(cpu for _, cpu in others)
        print(
            f"check of {args.compare}: {other:.2f} s wall, {other_cpu:.2f} s CPU; "
            f"ratio {other / baseline:.2f} wall, {other_cpu / baseline_cpu:.2f} CPU; {other_memory / 2**20:.0f} MiB"
        )


if __name__ == "__main__":
    main()

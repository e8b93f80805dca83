"""Benchmark a cold `flopkb check` against reading and parsing the same files with PyYAML's C loader.

    python benchmarks/bench_check.py [--records 10000] [--repeat 3] [--root DIR] [--compare CHECKOUT]

All run as fresh processes, alternating, in the same run (this machine is
shared and noisy: compare the ratio, not the seconds). The check runs three
ways: with `--no-cache`; as the first check of a fresh clone on a fresh
machine (an empty user cache folder, so the cache is written); and as that
first check under CI (`CI=true`: no cache is written). Prints the best wall
time and CPU time (user + system, the check's worker processes included) of
each, their ratios to the floor and each check's peak memory (the largest
resident set of the process or of any one of its workers). A check writes
its cache in a detached process once it has answered
(`flopkb.pipeline.background`): this script adopts that process, waits for
it before the next run, and prints its CPU time and when the cache was on
disk, apart. With `--compare`,
the check of another checkout of flopkb (say, a `git worktree` of an older
commit: its `compiler/` folder goes first on PYTHONPATH) runs too, in the same
alternation: before and after, against the same baseline.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

BASELINE = """
import sys, pathlib, yaml
for path in sorted(pathlib.Path(sys.argv[1], "records").rglob("*.yaml")):
    yaml.load(path.read_bytes().decode("utf-8"), Loader=yaml.CSafeLoader)
"""


class Run(NamedTuple):
    wall: float
    """Seconds until the command ended (its answer out, its exit status given)."""
    cpu: float
    """CPU seconds (user + system) of the command and of the worker processes it waited for."""
    status: int
    peak: int
    """Peak resident memory in bytes (the largest of the process and of any one of its workers)."""
    after_cpu: float
    """CPU seconds of what the command left running detached (the load cache's writer), until it ended."""
    settled: float
    """Seconds until that detached work ended too (the cache on disk): `wall` when there was none."""


def timed(command: list[str], env: dict[str, str] | None = None) -> Run:
    """One process, and what it left running detached: this process adopts it (a child subreaper), and waits for it."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    after = 0.0
    while True:
        try:
            _, _, orphan = os.wait4(-1, 0)
        except ChildProcessError:
            break
        after += orphan.ru_utime + orphan.ru_stime
    return Run(
        elapsed,
        usage.ru_utime + usage.ru_stime,
        process.returncode,
        usage.ru_maxrss * 1024,
        after,
        time.perf_counter() - start,
    )


def adopt_orphans() -> None:
    """Make this process the child subreaper of its descendants (Linux): what a command leaves running when it ends
    is adopted by this process, not by init, so that `timed` can wait for it and count its CPU."""
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("cannot adopt detached processes (prctl PR_SET_CHILD_SUBREAPER): Linux only")


def fresh_cache_env(**extra: str) -> Callable[[], dict[str, str]]:
    """An environment per run with an empty user cache folder of its own: a fresh clone on a fresh machine."""

    def env() -> dict[str, str]:
        return {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="flopkb-bench-cache-"), **extra}

    return env


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
    check_cmd = [sys.executable, "-m", "flopkb", "check", "--root", str(root), "--format", "json"]
    clean = {name: value for name, value in os.environ.items() if name != "CI"}
    checks: dict[str, tuple[list[str], Callable[[], dict[str, str]]]] = {
        "flopkb check --no-cache": ([*check_cmd, "--no-cache"], lambda: clean),
        "first check, cache written": (check_cmd, fresh_cache_env()),
        "first check under CI=true": (check_cmd, fresh_cache_env(CI="true")),
    }
    if args.compare:
        other = {**clean, "PYTHONPATH": str(args.compare.resolve() / "compiler")}
        checks[f"check --no-cache of {args.compare}"] = ([*check_cmd, "--no-cache"], lambda: other)
        checks[f"first check of {args.compare}"] = (check_cmd, lambda: {**fresh_cache_env()(), **other})
    adopt_orphans()
    baselines: list[Run] = []
    times: dict[str, list[Run]] = {name: [] for name in checks}
    for _ in range(args.repeat):
        baselines.append(timed(baseline_cmd))
        for name, (command, env) in checks.items():
            environment = env()
            shutil.rmtree(root / "build" / "cache", ignore_errors=True)  # where flopkb kept its cache before
            run = timed(command, environment)
            if "flopkb-bench-cache-" in environment.get("XDG_CACHE_HOME", ""):
                shutil.rmtree(environment["XDG_CACHE_HOME"])
            if run.status not in (0, 1):
                raise SystemExit(f"{name} failed with exit status {run.status}")
            times[name].append(run)
    baseline, baseline_cpu = min(run.wall for run in baselines), min(run.cpu for run in baselines)
    print(f"records: {args.records}, best of {args.repeat}")
    print(f"{'PyYAML C load (the floor)':<34} {baseline:6.2f} s wall {baseline_cpu:6.2f} s CPU")
    for name, runs in times.items():
        wall, cpu = min(run.wall for run in runs), min(run.cpu for run in runs)
        print(
            f"{name:<34} {wall:6.2f} s wall {cpu:6.2f} s CPU   ratio {wall / baseline:.2f} wall,"
            f" {cpu / baseline_cpu:.2f} CPU (target <= 1.5)   peak {max(run.peak for run in runs) / 2**20:.0f} MiB"
        )
        if any(run.after_cpu for run in runs):
            after, settled = min(run.after_cpu for run in runs), min(run.settled for run in runs)
            print(
                f"{'  then, detached, the cache writer':<34} {after:6.2f} s CPU, on disk {settled:.2f} s after the"
                f" start: ratio {settled / baseline:.2f} wall, {(cpu + after) / baseline_cpu:.2f} CPU with the check"
            )


if __name__ == "__main__":
    main()

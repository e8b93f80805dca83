"""Benchmark `flopkb check` on the project's own records: the answer an author waits for.

    python benchmarks/bench_own.py [--repeat 5] [--root DIR]

Runs, as fresh processes, alternating: `python -c pass` (the interpreter's
own start, for reference), `flopkb check --no-cache` (cold: every record
parsed, pint imported for the specs and formulas) and `flopkb check` (the
cache written by the previous run: the usual case). Prints the best wall and
CPU time of each (target: under 1 s wall) and which heavy modules the check
imported.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pydantic", "yaml", "pint", "numpy", "networkx", "rich", "rapidfuzz", "markdown_it", "jinja2")


def timed(command: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed")
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    check = [sys.executable, "-m", "flopkb", "check", "--root", str(args.root), "--format", "json"]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "check --no-cache": [*check, "--no-cache"],
        "check (cached)": check,
    }
    timed(check)  # the cache exists
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            runs[name].append(timed(command))
    records = len(list((args.root / "records").rglob("*.y*ml")))
    print(f"records: {records}")
    for name, found in runs.items():
        print(
            f"{name:17} best wall {min(w for w, _ in found):.2f} s, best cpu {min(c for _, c in found):.2f} s "
            "(target: < 1 s wall)"
        )
    probe = (
        "import sys\nfrom flopkb.cli import main\n"
        "try:\n"
        f"    main(['check', '--root', {str(args.root)!r}, '--format', 'json', '--no-cache'])\n"
        "except SystemExit:\n    pass\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    print(f"heavy modules a check imports: {done.stderr.strip()}")


if __name__ == "__main__":
    main()

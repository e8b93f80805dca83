"""Benchmark the incremental check: a cold `flopkb check` against one after changing a single record.

    python benchmarks/bench_incremental.py [--records 10000] [--repeat 3] [--root DIR]

Every run is a fresh process, in the same run of this script (the machine is
shared and noisy: compare the ratios, not the seconds). Each round runs:

- cold: `flopkb check --no-cache`, which neither reads nor writes the cache;
- cold, writing the cache: `flopkb check` with the cache folder removed;
- then `flopkb check` after each of these edits, one at a time:
  - `comment`: a comment appended to one record (its bytes and digest change,
    its data does not): the edit the first version of this benchmark made;
  - `prose`: a word of a flop's description changed;
  - `formula`: an input of a flop's formula changed (the formula is
    evaluated again: pint is imported);
  - `accelerator`: a spec value of an accelerator changed: every record that
    computes with it (its `values_for` rows, formulas in whose scope it is)
    has its evidence and formulas computed again, about a tenth of the base;
  - `new record`: a record added (as `flopkb new` does): the base's ids
    change, so every file's links are resolved again (from the cache).

Prints the best wall time and CPU time (user + system, worker processes
included) of each, and the ratio to the cold check of both (target <= 0.25).
On a loaded machine wall times wait for the CPU; the CPU ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def rewrite(path: Path, change: Callable[[str, int], str]) -> Callable[[int], None]:
    def edit(round_: int) -> None:
        text = path.read_text(encoding="utf-8")
        changed = change(text, round_)
        assert changed != text, path
        path.write_text(changed, encoding="utf-8")

    return edit


def edits(root: Path) -> dict[str, Callable[[int], None]]:
    records = root / "records"
    # rec-00010 is a flop (index % 3 != 0) with a formula (index % 10 == 0); acc-007 is in the scope of some formulas.
    flop = records / "kb/g10/rec-00010.yaml"
    return {
        "comment": rewrite(next(records.rglob("*.yaml")), lambda text, n: f"{text}# edited in round {n}\n"),
        "prose": rewrite(
            records / "kb/g01/rec-00001.yaml",
            lambda text, n: re.sub(r"description: \|\n  (\S+)", lambda m: f"{m.group(0)} edited{n}", text, count=1),
        ),
        "formula": rewrite(flop, lambda text, n: re.sub(r"      k: \d+", f"      k: {5 + n}", text, count=1)),
        "accelerator": rewrite(
            records / "hw/acc-007.yaml",
            lambda text, n: re.sub(r'value: "[0-9.]+ TB/s"', f'value: "{3 + n}.5 TB/s"', text, count=1),
        ),
        "new record": lambda n: (records / f"kb/new/fact-{n}.yaml").write_text(
            f"id: kb/new/fact-{n}\nkind: fact\nstatement: A new fact about [[kb/g01/rec-00001]].\n", encoding="utf-8"
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, help="reuse or create the generated base here (its records are edited)")
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="flopkb-bench-")) / "kb"
    if not (root / "records").is_dir():
        generate(root, args.records)
    shutil.rmtree(root / "records" / "kb" / "new", ignore_errors=True)
    (root / "records" / "kb" / "new").mkdir()
    check = [sys.executable, "-m", "flopkb", "check", "--root", str(root), "--format", "json"]
    changes = edits(root)
    colds, writes = [], []
    warms: dict[str, list[tuple[float, float]]] = {name: [] for name in changes}
    for round_ in range(args.repeat):
        colds.append(timed([*check, "--no-cache"]))
        shutil.rmtree(root / "build" / "cache", ignore_errors=True)
        writes.append(timed(check))
        for name, edit in changes.items():
            edit(round_)
            warms[name].append(timed(check))
    (cold, cold_cpu), (write, write_cpu) = best(colds), best(writes)
    print(f"records:                         {args.records}")
    print(f"flopkb check, cold:              {cold:.2f} s wall, {cold_cpu:.2f} s CPU (--no-cache)")
    print(f"flopkb check, cold + cache:      {write:.2f} s wall, {write_cpu:.2f} s CPU (no cache yet; writes it)")
    for name, runs in warms.items():
        warm, warm_cpu = best(runs)
        print(
            f"one file edited: {name:15} {warm:.2f} s wall ({warm / cold:.2f} of cold), "
            f"{warm_cpu:.2f} s CPU ({warm_cpu / cold_cpu:.2f}) (target <= 0.25)"
        )


if __name__ == "__main__":
    main()

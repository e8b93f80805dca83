"""Benchmark `flopkb diff` against a cold `flopkb check` on a fresh clone of a generated base, with no cache.

    python benchmarks/bench_diff.py [--records 10000] [--repeat 3] [--before OTHER/compiler]

A repository is made of a generated base (`generate.py`) and two commits on
top of it: one changes an accelerator's spec (`memory_bandwidth` of
hw/acc-007, in the scope of about a tenth of the formulas), the next
rewords one record's prose. The repository is cloned (`git clone`, so the
clone has no `build/cache`), and in the clone every run is a fresh process:

- cold check: `flopkb check --no-cache` of the clone's work tree;
- spec: `flopkb diff HEAD~2..HEAD~1`;
- prose: `flopkb diff HEAD~1..HEAD`.

A diff compiles two sides from git objects through one load cache, so a blob
unchanged between them is parsed once: it should cost about one check, not
two (targets: spec <= 1.3x, prose <= 1.1x of the cold check). Prints the best
wall and CPU times of each and their ratios, and the median of each round's
CPU ratio (a diff against the check run just before it); on a loaded machine
the CPU ratios are the steadier ones. With `--before PATH` (the `compiler/` folder of another
checkout of flopkb), that flopkb runs the same three commands, alternating
with this one in the same run, and its ratios are printed too.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_incremental import best, timed
from generate import generate

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]


def make_repository(root: Path, records: int) -> None:
    generate(root, records)
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(root)], check=True)
    commit(root, "a generated base")
    accelerator = root / "records/hw/acc-007.yaml"
    text = accelerator.read_text(encoding="utf-8")
    accelerator.write_text(re.sub(r'value: "[0-9.]+ TB/s"', 'value: "3.5 TB/s"', text, count=1), encoding="utf-8")
    commit(root, "one accelerator's spec")
    prose = root / "records/kb/g01/rec-00001.yaml"
    text = prose.read_text(encoding="utf-8")
    prose.write_text(re.sub(r"(statement|description): \|\n  (\S+)", r"\g<0> reworded", text, count=1), "utf-8")
    commit(root, "one record's prose")


def commit(root: Path, message: str) -> None:
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", message], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", help="the compiler/ folder of another flopkb checkout, measured side by side")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="flopkb-bench-diff-"))
    origin, clone = scratch / "origin", scratch / "clone"
    make_repository(origin, args.records)
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    flopkb = [sys.executable, "-m", "flopkb"]
    commands = {
        "cold check": ["check", "--root", str(clone), "--no-cache", "--format", "json"],
        "spec": ["diff", "--root", str(clone), "HEAD~2..HEAD~1", "--format", "json"],
        "prose": ["diff", "--root", str(clone), "HEAD~1..HEAD", "--format", "json"],
    }
    variants = {"after": os.environ.get("PYTHONPATH", "")} | ({"before": args.before} if args.before else {})
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for variant, path in variants.items():
            os.environ["PYTHONPATH"] = path
            for name, command in commands.items():
                runs.setdefault((variant, name), []).append(timed([*flopkb, *command]))
            assert not (clone / "build").exists(), "a diff writes no cache"
    print(f"records: {args.records}")
    for variant in variants:
        cold, cold_cpu = best(runs[variant, "cold check"])
        print(f"{variant}: flopkb check, cold (--no-cache): {cold:.2f} s wall, {cold_cpu:.2f} s CPU")
        for name, target in (("spec", 1.3), ("prose", 1.1)):
            wall, cpu = best(runs[variant, name])
            ratios = sorted(
                diff[1] / check[1] for diff, check in zip(runs[variant, name], runs[variant, "cold check"], strict=True)
            )
            print(
                f"{variant}: flopkb diff, {name:5}: {wall:.2f} s wall ({wall / cold:.2f}x), {cpu:.2f} s CPU"
                f" ({cpu / cold_cpu:.2f}x; median of the rounds' CPU ratios {statistics.median(ratios):.2f}x)"
                f" (target <= {target}x)"
            )


if __name__ == "__main__":
    main()

"""Benchmark `flopkb build` against a bare `mkdocs build` of the markdown it generated, at several base sizes.

    python benchmarks/bench_build.py                      # 1,000 and 10,000 records
    python benchmarks/bench_build.py --sizes 1000,3000    # other sizes
    python benchmarks/bench_build.py --repeat 2           # best of two runs of each

For each size: generate a synthetic base (benchmarks/generate.py), run
`flopkb build` on it as a fresh process from a cold start (no build/ folder:
no cache, no old site), then run `mkdocs build` as a fresh process on the
docs folder that build left behind (`build/site-docs/`), with the same
configuration (`build/site-mkdocs.yml`) except for the output folder. The
difference is what flopkb adds: loading and checking the records, evaluating
formulas, rendering the pages, charts and graph, and swapping the site in.

Prints, per size, both wall times, their ratio (the target: at most 1.3) and
the time per 1,000 records; then the growth per 1,000 records between the
sizes (linear growth: about the same per-1,000 figure at every size).

Wall time on a shared machine moves with whatever else runs (±30% between
two runs of the same command has been seen), so the CPU time of each command
(user + system, its worker processes included) is printed too: it is the
steadier measure of the work each does. `--repeat N` interleaves the two
commands N times and keeps the best of each.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

TARGET_RATIO = 1.3


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the command and the processes it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bare_config(base: Path, out: Path) -> Path:
    """flopkb's mkdocs configuration for `base`, building into `out` instead of the base's site folder."""
    config = yaml.safe_load((base / "build" / "site-mkdocs.yml").read_text(encoding="utf-8"))
    config["site_dir"] = str(out)
    path = out.parent / f"{out.name}-mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def measure(base: Path, repeat: int) -> tuple[tuple[float, float], tuple[float, float], int]:
    """((wall, CPU) of the best flopkb build, (wall, CPU) of the best bare mkdocs build, pages)."""
    builds, bares = [], []
    for _ in range(repeat):
        shutil.rmtree(base / "build", ignore_errors=True)
        builds.append(timed([sys.executable, "-m", "flopkb", "build", "--root", str(base), "--format", "text"]))
        out = base.parent / f"{base.name}-bare-site"
        shutil.rmtree(out, ignore_errors=True)
        config = bare_config(base, out)
        bares.append(timed([sys.executable, "-m", "mkdocs", "build", "--quiet", "-f", str(config)]))
    pages = sum(1 for _ in (base / "build" / "site-docs").rglob("*.md"))
    return min(builds), min(bares), pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record counts (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the best is kept")
    parser.add_argument("--root", type=Path, help="where to generate the bases (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the generated bases and sites")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    root = args.root or Path(tempfile.mkdtemp(prefix="flopkb-bench-build-"))
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for size in sizes:
            base = root / f"kb{size}"
            if not (base / "records").is_dir():
                generate(base, size)
            (build, build_cpu), (bare, bare_cpu), pages = measure(base, args.repeat)
            rows.append((size, pages, build, bare))
            print(
                f"{size:>6} records, {pages} pages: flopkb build {build:7.1f} s, bare mkdocs build {bare:7.1f} s, "
                f"ratio {build / bare:.2f} (target <= {TARGET_RATIO}), {build / size * 1000:.1f} s per 1,000 records; "
                f"CPU {build_cpu:.1f} s against {bare_cpu:.1f} s, ratio {build_cpu / bare_cpu:.2f}",
                flush=True,
            )
    finally:
        if not args.keep and args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    if len(rows) >= 2:
        (small, _, small_build, small_bare), (large, _, large_build, large_bare) = rows[0], rows[-1]
        per_1000 = (large_build - small_build) / (large - small) * 1000
        bare_per_1000 = (large_bare - small_bare) / (large - small) * 1000
        print(
            f"growth from {small} to {large} records: flopkb build {per_1000:.1f} s per 1,000 records "
            f"(bare mkdocs {bare_per_1000:.1f} s); "
            f"time x{large_build / small_build:.1f} for records x{large / small:.0f}"
        )
    worst = max((build / bare for _, _, build, bare in rows), default=0.0)
    print(f"worst ratio {worst:.2f}: {'within' if worst <= TARGET_RATIO else 'OVER'} the {TARGET_RATIO} target")


if __name__ == "__main__":
    main()

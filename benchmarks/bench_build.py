"""Benchmark `flopkb build` against a bare `mkdocs build` of the markdown it generated, at several base sizes.

    python benchmarks/bench_build.py                      # 1,000 and 10,000 records
    python benchmarks/bench_build.py --sizes 1000,3000    # other sizes
    python benchmarks/bench_build.py --repeat 2           # best of two runs of each

    python benchmarks/bench_build.py --before /work/main/compiler   # also another flopkb, in the same run

For each size: generate a synthetic base (benchmarks/generate.py), run
`flopkb build` on it as a fresh process from a cold start (no build/ folder:
no cache, no old site), then run `mkdocs build` as a fresh process on the
docs folder that build left behind (`build/site-docs/`), twice: with the same
configuration (`build/site-mkdocs.yml`) except for the output folder ("same
config"), and with a minimal Material configuration ("minimal": site name,
folders, `use_directory_urls: false` so that the pages and URLs are the same,
flopkb's nav (the index pages: with mkdocs' default nav of every page,
Material renders 10,000 entries into every page), `theme: material`, and
mkdocs' default plugins, i.e. Material's search). The
difference to "same config" is what flopkb adds: loading and checking the
records, evaluating formulas, rendering the pages, charts and graph, the
search index, and swapping the site in.

Prints, per size, the wall times, the ratios (the targets: at most 1.3
against the same configuration, at most 1.2 against the minimal one) and the
time per 1,000 records; then the growth per 1,000 records between the sizes
(linear growth: about the same per-1,000 figure at every size). With
`--before PATH` (the `compiler/` folder of another checkout), that flopkb's
cold build of the same base is timed in the same run (`PYTHONPATH=PATH`),
and the ratio after / before is printed.

Wall time on a shared machine moves with whatever else runs (±30% between
two runs of the same command has been seen), so the CPU time of each command
(user + system, its worker processes included) is printed too: it is the
steadier measure of the work each does. `--repeat N` interleaves the two
commands N times and keeps the best of each (the least wall time and,
separately, the least CPU time).
"""

from __future__ import annotations

import argparse
import os
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
TARGET_MINIMAL = 1.2


def timed(command: list[str], cwd: Path | None = None, code: str | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the command and the processes it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": code + os.pathsep + os.environ.get("PYTHONPATH", "")} if code else None
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=env)
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


def minimal_config(base: Path, out: Path) -> Path:
    """A minimal Material configuration for the docs folder flopkb left in `base`, building into `out`."""
    flopkb = yaml.safe_load((base / "build" / "site-mkdocs.yml").read_text(encoding="utf-8"))
    config = {
        "site_name": "flopkb",
        "docs_dir": str(base / "build" / "site-docs"),
        "site_dir": str(out),
        "use_directory_urls": False,
        "theme": {"name": "material"},
        "nav": flopkb["nav"],
    }
    path = out.parent / f"{out.name}-mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


Timing = tuple[float, float]


def measure(base: Path, repeat: int, before: str | None) -> tuple[Timing, Timing, Timing, Timing | None, int]:
    """(wall, CPU) of the best flopkb build, same-config and minimal mkdocs builds, `before`'s build; pages."""
    builds, bares, minimals, befores = [], [], [], []
    flopkb = [sys.executable, "-m", "flopkb", "build", "--root", str(base), "--format", "text"]
    for _ in range(repeat):
        if before:
            shutil.rmtree(base / "build", ignore_errors=True)
            befores.append(timed(flopkb, code=before))
        shutil.rmtree(base / "build", ignore_errors=True)
        builds.append(timed(flopkb))
        for make, found in ((bare_config, bares), (minimal_config, minimals)):
            out = base.parent / f"{base.name}-{make.__name__}-site"
            shutil.rmtree(out, ignore_errors=True)
            found.append(timed([sys.executable, "-m", "mkdocs", "build", "--quiet", "-f", str(make(base, out))]))
    pages = sum(1 for _ in (base / "build" / "site-docs").rglob("*.md"))
    return best(builds), best(bares), best(minimals), best(befores) if befores else None, pages


def best(timings: list[Timing]) -> Timing:
    """The least wall time and the least CPU time of the runs (each from whichever run had it)."""
    return min(wall for wall, _ in timings), min(cpu for _, cpu in timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record counts (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the best is kept")
    parser.add_argument("--root", type=Path, help="where to generate the bases (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the generated bases and sites")
    parser.add_argument("--before", help="the compiler/ folder of another flopkb checkout, timed in the same run")
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
            (build, build_cpu), (bare, bare_cpu), (minimal, minimal_cpu), old, pages = measure(
                base, args.repeat, args.before
            )
            rows.append((size, pages, build, bare, minimal))
            print(
                f"{size:>6} records, {pages} pages: flopkb build {build:7.1f} s; bare mkdocs, same config {bare:7.1f} s"
                f" (ratio {build / bare:.2f}, target <= {TARGET_RATIO}), minimal config {minimal:7.1f} s (ratio"
                f" {build / minimal:.2f}, target <= {TARGET_MINIMAL}); {build / size * 1000:.1f} s per 1,000 records;"
                f" CPU {build_cpu:.1f} s against {bare_cpu:.1f} s and {minimal_cpu:.1f} s, ratios"
                f" {build_cpu / bare_cpu:.2f} and {build_cpu / minimal_cpu:.2f}"
                + (f"; before {old[0]:.1f} s (CPU {old[1]:.1f} s), after/before {build / old[0]:.2f}" if old else ""),
                flush=True,
            )
    finally:
        if not args.keep and args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    if len(rows) >= 2:
        (small, _, small_build, small_bare, _), (large, _, large_build, large_bare, _) = rows[0], rows[-1]
        per_1000 = (large_build - small_build) / (large - small) * 1000
        bare_per_1000 = (large_bare - small_bare) / (large - small) * 1000
        print(
            f"growth from {small} to {large} records: flopkb build {per_1000:.1f} s per 1,000 records "
            f"(bare mkdocs {bare_per_1000:.1f} s); "
            f"time x{large_build / small_build:.1f} for records x{large / small:.0f}"
        )
    worst = max((build / bare for _, _, build, bare, _ in rows), default=0.0)
    print(f"worst ratio {worst:.2f}: {'within' if worst <= TARGET_RATIO else 'OVER'} the {TARGET_RATIO} target")
    worst = max((build / minimal for _, _, build, _, minimal in rows), default=0.0)
    print(
        f"against the minimal config {worst:.2f}: {'within' if worst <= TARGET_MINIMAL else 'OVER'} the "
        f"{TARGET_MINIMAL} target"
    )


if __name__ == "__main__":
    main()

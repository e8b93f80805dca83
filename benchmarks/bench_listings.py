"""Listing pages (a kind's, a category's, a tag's records) as a reader opens them, against a record page, in Chromium.

    python benchmarks/bench_listings.py                           # generate and build 10,000 records
    python benchmarks/bench_listings.py --root /tmp/kb10k          # reuse a generated base there (built again)
    python benchmarks/bench_listings.py --site /tmp/old/build/site # measure a site built already (another checkout's)

The base is benchmarks/generate.py's (generated when `--root` holds no records/), built with `flopkb build` from this
checkout. Printed: per family of listings (kinds/, categories/, tags/), how many pages and the largest one's bytes;
then the time from navigation to DOMContentLoaded (median of --repeat visits, each in a fresh browser context at
1280x900, the site served by http.server on 127.0.0.1) of the first page of the longest listing, its last page, and
the largest record page.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from browser import launch_chromium, serve_directory  # noqa: E402
from generate import generate  # noqa: E402

FAMILIES = ("kinds", "categories", "tags")


def build(root: Path) -> Path:
    """Build the base at `root` with this checkout's flopkb; its site folder."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "compiler")}
    command = [sys.executable, "-m", "flopkb", "build", "--root", str(root)]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root / "build" / "site"


def largest(files: list[Path]) -> Path:
    return max(files, key=lambda path: (path.stat().st_size, path.as_posix()))


def listing_pages(site: Path, family: str) -> list[Path]:
    """Every page of the family's listings: `<family>/<name>.html` and the pages past the first,
    `<family>/<name>/<n>.html` (none before listings were paged); the tag index left out."""
    folder = site / family
    return [path for path in folder.rglob("*.html") if path.relative_to(folder).as_posix() != "index.html"]


def later_pages(site: Path, first: Path) -> list[Path]:
    """The pages of `first`'s listing past the first, in order."""
    folder = first.with_suffix("")
    found = folder.glob("*.html") if folder.is_dir() else []
    return sorted((path for path in found if path.stem.isdigit()), key=lambda path: int(path.stem))


def dom_content_loaded(browser: object, url: str) -> float:
    """Milliseconds from navigation to the end of DOMContentLoaded, in a fresh context."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        page.goto(url, wait_until="domcontentloaded", timeout=300_000)
        return float(page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"))
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000, help="records to generate (default 10,000)")
    parser.add_argument("--root", type=Path, help="the base: generated there when it has no records/, then built")
    parser.add_argument("--site", type=Path, help="a built site to measure as it is (no generating, no building)")
    parser.add_argument("--repeat", type=int, default=3, help="visits per page; the median is printed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-listings-") as scratch:
        site = args.site
        if site is None:
            root = args.root or Path(scratch) / "kb"
            if not (root / "records").is_dir():
                generate(root, args.records)
            site = build(root)
        report(site, args.repeat)


def report(site: Path, repeat: int) -> None:
    print(f"{'listings':<12}{'pages':>8}{'largest page':>15}  path")
    everything: list[Path] = []
    for family in FAMILIES:
        pages = listing_pages(site, family)
        everything += pages
        if pages:
            top = largest(pages)
            print(f"{family:<12}{len(pages):>8,}{top.stat().st_size:>15,}  {top.relative_to(site)}")
    firsts = [path for path in everything if not path.stem.isdigit()]
    first = max(firsts, key=lambda path: (len(later_pages(site, path)), path.stat().st_size, path.as_posix()))
    record = largest(list((site / "records").rglob("*.html")))
    visits = [("longest listing, first page", first), ("its last page", (later_pages(site, first) or [first])[-1])]
    visits.append(("largest record page", record))
    print(f"\nDOMContentLoaded, median of {repeat} (1280x900, http.server on 127.0.0.1)")
    with serve_directory(site) as base, launch_chromium() as browser:
        for label, path in visits:
            url = base + path.relative_to(site).as_posix()
            ms = statistics.median(dom_content_loaded(browser, url) for _ in range(repeat))
            print(f"{label:<30}{path.stat().st_size:>12,} bytes{ms:>10,.0f} ms  {path.relative_to(site)}", flush=True)


if __name__ == "__main__":
    main()

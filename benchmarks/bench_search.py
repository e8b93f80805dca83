"""A reader's first search, pagefind (the site's) against Material's built-in search, in Chromium.

    python benchmarks/bench_search.py                        # 1,000 and 10,000 records
    python benchmarks/bench_search.py --sizes 1000 --repeat 5

For each size: generate a base (benchmarks/generate.py), build it with
`flopkb build` (pagefind), then build the same generated markdown with the same
mkdocs configuration but Material's search plugin instead (and Material's own
templates). Each site is served by http.server on 127.0.0.1; a fresh browser
context opens the home page, types a query as soon as the page has loaded, and
waits for the first result (a search that every page matches is pagefind's
worst case: its ranking then scores every page in the reader's browser).
Printed: the bytes the server sent for search (the index, its chunks and
fragments, the search scripts; pagefind/ or search/ and Material's search
worker) in that visit, the size of the whole index, and the time from typing
to the first result (median of --repeat runs). Material's
index is also given gzipped, as a host that compresses would send it
(pagefind's index files are compressed already).
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from browser import Served, launch_chromium, serve_directory  # noqa: E402
from generate import generate  # noqa: E402

#: The paths whose bytes count as search, per engine.
SEARCH_PATHS = {
    "pagefind": ("/pagefind/",),
    "material": ("/search/", "/assets/javascripts/workers/"),
}
#: Index data (not scripts): pagefind's metadata, word chunks and page fragments; Material's JSON.
INDEX_SUFFIXES = (".pf_meta", ".pf_index", ".pf_fragment", "search_index.json")


@dataclass(frozen=True)
class Visit:
    search_bytes: int
    index_bytes: int
    all_bytes: int
    ms: float


def first_search(browser: object, site: Path, engine: str, query: str) -> Visit:
    """Open the home page in a fresh context, search for `query` at once, wait for the first result."""
    served = Served()
    with serve_directory(site, served=served) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        try:
            page = context.new_page()
            page.set_default_timeout(300_000)
            page.goto(base + "index.html", wait_until="load")
            start = time.perf_counter()
            if engine == "pagefind":
                page.locator(".pagefind-ui__search-input").fill(query)
                page.locator(".pagefind-ui__result").first.wait_for()
            else:
                page.locator("label.md-search__icon, .md-search__input").first.click()
                page.locator("input.md-search__input").fill(query)
                page.locator(".md-search-result__item").first.wait_for()
            ms = (time.perf_counter() - start) * 1000
            page.wait_for_load_state("networkidle")
        finally:
            context.close()
    index = sum(size for path, size in served.responses if path.endswith(INDEX_SUFFIXES))
    return Visit(served.total(*SEARCH_PATHS[engine]), index, served.total(), ms)


def index_bytes(folder: Path) -> int:
    """The size of the whole index in `folder` (pagefind/ or search/), scripts left out."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.name.endswith(INDEX_SUFFIXES))


def build_both(root: Path) -> tuple[Path, Path]:
    """(pagefind site, Material-search site) of the base in `root`."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "compiler")}
    subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(root)],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    cfg = yaml.safe_load((root / "build" / "site-mkdocs.yml").read_text(encoding="utf-8"))
    cfg["plugins"] = [{"search": {"lang": "en"}}]
    cfg["theme"].pop("custom_dir")
    cfg["site_dir"] = str(root / "build" / "material-site")
    material_cfg = root / "build" / "material-mkdocs.yml"
    material_cfg.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(material_cfg)],
        check=True,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        stdout=subprocess.DEVNULL,
    )
    return root / "build" / "site", root / "build" / "material-site"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record counts (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=3, help="searches per site; the median time is printed")
    parser.add_argument(
        "--queries",
        default="123,decode bandwidth",
        help="comma-separated queries the reader types (default: a number in one title and the"
        " links to it; two words that every generated record holds many times, the worst case)",
    )
    parser.add_argument("--root", type=Path, help="where to generate and build (default: a temporary folder)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as scratch:
        work = args.root or Path(scratch)
        sites = {}
        for n in sizes:
            generate(work / f"kb{n}", n)
            sites[n] = build_both(work / f"kb{n}")
        print(f"median time of {args.repeat}; bytes as served (http.server, no compression)")
        print(
            f"{'records':>8}  {'query':<18}{'search':<9}{'first search':>14}{'of it index':>13}{'whole index':>14}"
            f"{'whole visit':>13}{'to result':>11}"
        )
        with launch_chromium() as browser:
            for n in sizes:
                pagefind_site, material_site = sites[n]
                whole = {
                    "pagefind": index_bytes(pagefind_site / "pagefind"),
                    "material": index_bytes(material_site / "search"),
                }
                for query in args.queries.split(","):
                    for engine, site in (("pagefind", pagefind_site), ("material", material_site)):
                        visits = [first_search(browser, site, engine, query) for _ in range(args.repeat)]
                        ms = statistics.median(v.ms for v in visits)
                        first = visits[0]
                        print(
                            f"{n:>8,}  {query:<18}{engine:<9}{first.search_bytes:>14,}{first.index_bytes:>13,}"
                            f"{whole[engine]:>14,}{first.all_bytes:>13,}{ms:>9.0f} ms",
                            flush=True,
                        )
                index = material_site / "search" / "search_index.json"
                packed = len(gzip.compress(index.read_bytes(), 6))
                print(f"{'':>8}  Material's index gzipped: {packed:,} bytes", flush=True)


if __name__ == "__main__":
    main()

"""The site's infrastructure, proven end to end: a tiny docs folder built with
our mkdocs configuration, served on 127.0.0.1 and read in Chromium.

Checks: KaTeX typesets formulas (with its own fonts), a chart SVG shows, the
Cytoscape graph draws and opens a record on click, search (pagefind's) works
with no network, nothing is requested from outside the site, nothing logs an
error, two builds are byte-identical. Screenshots land in build/screenshots/.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from browser import arrive, search
from flopkb.site.charts.svg import (
    LineSeries,
    RooflineSeries,
    line_chart_svg,
    roofline_svg,
    svg_size,
)
from flopkb.site.publishing.mkdocs import (
    DEFAULT_NAV,
    EXTRA_CSS,
    EXTRA_JAVASCRIPT,
    build_site,
)

EPOCH = 1_700_000_000  # 2023-11-14

HOME = r"""# flopkb

A knowledge base of what costs FLOPs and bytes in LLM inference.

The arithmetic intensity of a decode step:

$$ AI = \frac{B + k}{1} $$

Inline, a batch of $B$ requests with $k$ draft tokens each reads the weights once.

See the [accelerator comparison](accelerators/compare.md), the
[link graph](graph.md) and a [record](records/flops/decode-arithmetic-intensity.md).
"""

COMPARE = """# Compare accelerators

Every accelerator's roofline on one chart: the slope is memory bandwidth, the
flat roof is the dense compute peak.

<figure class="flopkb-chart">
<img src="compare-roofline.svg" alt="Rooflines of three accelerators" width="{w}" height="{h}">
<figcaption>Dense BF16 peaks against HBM bandwidth. Ridge points in FLOP/byte.</figcaption>
</figure>

| accelerator | peak BF16 dense | memory bandwidth | basis |
| --- | ---: | ---: | --- |
| NVIDIA H100 SXM | 989 TFLOP/s | 3.35 TB/s | <span class="flopkb-badge flopkb-badge--vendor-spec">vendor-spec</span> |
| AMD MI300X | 1307 TFLOP/s | 5.3 TB/s | <span class="flopkb-badge flopkb-badge--cited">cited</span> |
| NVIDIA A100 SXM 80GB | 312 TFLOP/s | 2.04 TB/s | <span class="flopkb-badge flopkb-badge--measured">measured</span> |
"""

GRAPH_PAGE = """# Link graph

Every record and every link between records. Click a node to open it.

<div class="flopkb-graph" data-graph="graph.json">
<a href="records/flops/decode-arithmetic-intensity.html">Decode arithmetic intensity</a>,
<a href="accelerators/compare.html">Compare accelerators</a>,
<a href="index.html">Home</a>
</div>
"""

GRAPH = {
    "nodes": [
        {
            "id": "flops/decode-arithmetic-intensity",
            "label": "Decode arithmetic intensity",
            "kind": "flop",
            "href": "records/flops/decode-arithmetic-intensity.html",
        },
        {
            "id": "accelerators/h100-sxm",
            "label": "NVIDIA H100 SXM",
            "kind": "accelerator",
            "href": "accelerators/compare.html",
        },
        {"id": "sources/roofline-paper", "label": "Williams et al. 2009", "kind": "source", "href": "index.html"},
    ],
    "edges": [
        {"source": "flops/decode-arithmetic-intensity", "target": "accelerators/h100-sxm"},
        {"source": "flops/decode-arithmetic-intensity", "target": "sources/roofline-paper"},
    ],
}

RECORD = r"""# Decode arithmetic intensity <span class="flopkb-kind flopkb-kind--flop">flop</span>

<p class="flopkb-lede">A decode step reads every weight once per batch: its FLOP per byte is the batch size.</p>

Category
:   arithmetic-intensity

Basis
:   <span class="flopkb-badge flopkb-badge--derived">derived</span>
    <span class="flopkb-badge flopkb-badge--unverified">unverified</span>

## Formula

$$ AI = \frac{2 B \cdot P}{2 P} = B $$

<figure class="flopkb-chart">
<img src="decode-sweep.svg" alt="Decode throughput against batch size" width="{w}" height="{h}">
</figure>

## Neighbourhood

<div class="flopkb-graph flopkb-graph--small" data-graph="#graph-data"></div>
<script type="application/json" id="graph-data">
{"focus": "flops/decode-arithmetic-intensity",
 "nodes": [{"id": "flops/decode-arithmetic-intensity", "label": "Decode arithmetic intensity", "kind": "flop"},
           {"id": "accelerators/h100-sxm", "label": "NVIDIA H100 SXM", "kind": "accelerator",
            "href": "../../accelerators/compare.html"}],
 "edges": [{"source": "flops/decode-arithmetic-intensity", "target": "accelerators/h100-sxm"}]}
</script>
"""

ACCELERATORS = [
    RooflineSeries("NVIDIA H100 SXM", 989e12, 3.35e12, "../records/flops/decode-arithmetic-intensity.html"),
    RooflineSeries("AMD MI300X", 1307e12, 5.3e12),
    RooflineSeries("NVIDIA A100 SXM 80GB", 312e12, 2.039e12),
]


def nav_pages(nav: Sequence[Any]) -> list[str]:
    """Every markdown path the nav names, in nav order."""
    out: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, str):
            if not item.startswith(("http://", "https://")):
                out.append(item)
        elif isinstance(item, dict):
            for v in item.values():
                walk(v)
        elif isinstance(item, (list, tuple)):
            for v in item:
                walk(v)

    walk(nav)
    return out


def write_svg(path: Path, svg: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(svg.encode("utf-8"))


def write_docs(docs: Path) -> None:
    for rel in nav_pages(DEFAULT_NAV):
        p = docs / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        title = Path(rel).stem.replace("-", " ").capitalize()
        p.write_text(f"# {title}\n\nThis index page is written by the renderer.\n", encoding="utf-8")
    (docs / "index.md").write_text(HOME, encoding="utf-8")
    roof = roofline_svg(ACCELERATORS, title="Rooflines, dense BF16")
    w, h = svg_size(roof)
    (docs / "accelerators" / "compare.md").write_text(
        COMPARE.replace("{w}", str(w)).replace("{h}", str(h)), encoding="utf-8"
    )
    write_svg(docs / "accelerators" / "compare-roofline.svg", roof)
    (docs / "graph.md").write_text(GRAPH_PAGE, encoding="utf-8")
    (docs / "graph.json").write_text(json.dumps(GRAPH, indent=1, sort_keys=True), encoding="utf-8")
    rec = docs / "records" / "flops"
    rec.mkdir(parents=True, exist_ok=True)
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    sweep = [
        LineSeries(a.name, [(b, min(b * a.bandwidth, a.peak_flops) / 14e9) for b in batches]) for a in ACCELERATORS
    ]
    line = line_chart_svg(
        sweep,
        x_label="batch size",
        y_label="decode throughput (token/s)",
        title="Decode throughput of a 7B model",
        log_x=True,
    )
    w, h = svg_size(line)
    (rec / "decode-arithmetic-intensity.md").write_text(
        RECORD.replace("{w}", str(w)).replace("{h}", str(h)), encoding="utf-8"
    )
    write_svg(rec / "decode-sweep.svg", line)


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    write_docs(root / "docs")
    result = build_site(root / "docs", root / "out" / "site", source_date_epoch=EPOCH, strict=True)
    print(f"build: {result.seconds:.2f} s")
    assert result.warnings == []
    return result.site_dir


# ---------------------------------------------------------------------------
# Without a browser


def test_build_is_byte_identical(tmp_path: Path, site: Path) -> None:
    # Built again in another process with another hash seed (set order), in
    # another folder: every byte of every file is the same.
    write_docs(tmp_path / "docs")
    code = (
        "import sys; from flopkb.site.publishing.mkdocs import build_site; "
        f"build_site(sys.argv[1], sys.argv[2], source_date_epoch={EPOCH}, strict=True)"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    env.pop("SOURCE_DATE_EPOCH", None)
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "docs"), str(tmp_path / "elsewhere" / "site")],
        check=True,
        env=env,
        capture_output=True,
    )
    a, b = tree_digest(site), tree_digest(tmp_path / "elsewhere" / "site")
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    assert "pagefind/pagefind-entry.json" in a


def test_sitemap_is_dated_by_source_date_epoch(tmp_path: Path) -> None:
    # mkdocs lists pages in the sitemap only when site_url is set; it dates
    # them (and the gzip header) from SOURCE_DATE_EPOCH.
    write_docs(tmp_path / "docs")
    digests = []
    for name in ("one", "two"):
        out = build_site(
            tmp_path / "docs", tmp_path / name / "site", source_date_epoch=EPOCH, site_url="https://flopkb.invalid/"
        ).site_dir
        digests.append(tree_digest(out))
    assert digests[0] == digests[1]
    sitemap = (out / "sitemap.xml").read_text(encoding="utf-8")
    assert "<loc>https://flopkb.invalid/accelerators/compare.html</loc>" in sitemap
    assert "records/flops/decode-arithmetic-intensity.html" in sitemap
    assert set(re.findall(r"<lastmod>(.*?)</lastmod>", sitemap)) == {"2023-11-14"}
    with gzip.open(out / "sitemap.xml.gz") as f:
        assert f.read() == sitemap.encode("utf-8")
    # gzip's header holds the build date's midnight (UTC), not the clock.
    assert (out / "sitemap.xml.gz").read_bytes()[4:8] == (EPOCH - EPOCH % 86400).to_bytes(4, "little")


def test_records_are_not_in_the_nav(site: Path) -> None:
    nav_link = re.compile(r'<a href="([^"]*)" class="md-(?:nav|tabs)__link')
    for page in ("index.html", "records/flops/decode-arithmetic-intensity.html"):
        links = nav_link.findall((site / page).read_text(encoding="utf-8"))
        assert any(link.endswith("compare.html") for link in links), page
        assert not [link for link in links if "records/" in link], page


def test_nothing_outside_the_site_is_referenced(site: Path) -> None:
    loads = re.compile(
        r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""", re.IGNORECASE
    )
    css_urls = re.compile(r"""url\(\s*["']?(?:https?:)?//""", re.IGNORECASE)
    for p in sorted(site.rglob("*")):
        if p.suffix == ".html":
            text = p.read_text(encoding="utf-8")
            assert not loads.search(text), f"{p.name} loads from outside the site"
            assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, p.name
        elif p.suffix == ".css":
            assert not css_urls.search(p.read_text(encoding="utf-8")), f"{p.name} loads from outside"
    for rel in EXTRA_CSS + EXTRA_JAVASCRIPT:
        assert (site / rel).is_file(), rel
    assert not (site / "assets" / "vendor" / "README.html").exists()


def test_katex_fonts_referenced_by_the_css_are_all_there(site: Path) -> None:
    css = site / "assets" / "vendor" / "katex" / "katex.min.css"
    urls = set(re.findall(r"url\(([^)]+)\)", css.read_text(encoding="utf-8")))
    assert urls and all((css.parent / u).is_file() for u in urls)


# ---------------------------------------------------------------------------
# In Chromium


def test_home_page_typesets_formulas(site, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(site)
    page.goto(base + "index.html")
    page.wait_for_selector(".arithmatex .katex")
    assert page.locator("div.arithmatex .katex-display").count() == 1
    assert page.locator("span.arithmatex .katex").count() == 2
    # KaTeX's own fonts came from the site (a missing font is a failed request).
    assert page.evaluate("document.fonts.ready.then(() => document.fonts.check('16px KaTeX_Main'))")
    assert page.evaluate("[...document.fonts].some(f => f.family.includes('KaTeX') && f.status === 'loaded')")
    shot(page, "infra-home")
    page_log.assert_clean()


def test_roofline_svg_is_shown(site, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(site)
    page.goto(base + "accelerators/compare.html")
    img = page.locator(".flopkb-chart img")
    img.wait_for()
    assert img.is_visible()
    assert page.evaluate("document.querySelector('.flopkb-chart img').naturalWidth") == 780
    box = img.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150
    shot(page, "infra-compare")
    page_log.assert_clean()


def test_graph_draws_and_opens_a_record(site, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(site)
    page.goto(base + "graph.html")
    page.wait_for_selector(".flopkb-graph[data-state=ready]")
    assert page.evaluate("window.flopkbGraph.nodes().length") == 3
    assert page.evaluate("window.flopkbGraph.edges().length") == 2
    assert page.locator(".flopkb-graph-legend__item").all_inner_texts() == ["accelerator", "flop", "source"]
    shot(page, "infra-graph")
    # Click the flop node where Cytoscape drew it; its record opens.
    pos = page.evaluate("""() => {
        const n = window.flopkbGraph.getElementById('flops/decode-arithmetic-intensity');
        const r = document.querySelector('.flopkb-graph').getBoundingClientRect();
        const p = n.renderedPosition();
        return {x: r.left + p.x, y: r.top + p.y};
    }""")
    page.mouse.click(pos["x"], pos["y"])
    arrive(page, "**/records/flops/decode-arithmetic-intensity.html")
    page.wait_for_selector(".flopkb-graph--small[data-state=ready]")
    assert page.evaluate("window.flopkbGraph.nodes().length") == 2
    assert page.evaluate("window.flopkbGraph.$('node.focus').length") == 1
    assert page.locator(".arithmatex .katex").count() == 1
    assert page.locator("img[src$='/decode-sweep.svg']").is_visible()  # made absolute by instant navigation
    shot(page, "infra-record")
    page_log.assert_clean()


def test_search_works_offline(site, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(site)
    page.goto(base + "index.html")
    search(page, "roofline").filter(has_text="Compare accelerators").first.wait_for()
    # Records are out of the nav but in the search index.
    search(page, "decode step").filter(has_text="Decode arithmetic intensity").first.wait_for()
    shot(page, "infra-search", full_page=False)
    page_log.assert_clean()


def _label_brightness(page) -> int:
    rgb = page.evaluate("window.flopkbGraph.nodes()[0].style('color')")
    return sum(int(v) for v in re.findall(r"\d+", rgb)[:3])


def test_dark_scheme_reads(site, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(site)
    page.emulate_media(color_scheme="dark")
    page.goto(base + "records/flops/decode-arithmetic-intensity.html")
    page.wait_for_selector(".flopkb-graph[data-state=ready]")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    assert _label_brightness(page) > 500  # light text on the dark page
    shot(page, "infra-record-dark")
    # The palette toggle recolours the graph.
    page.locator("form[data-md-component=palette] label:visible").first.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'")
    page.wait_for_function("getComputedStyle(document.body).backgroundColor === 'rgb(255, 255, 255)'")
    assert _label_brightness(page) < 200
    page_log.assert_clean()


def test_guard_blocks_and_reports_outside_requests(site, serve_dir, page, page_log) -> None:
    base = serve_dir(site)
    page.goto(base + "index.html")
    page.evaluate("fetch('https://example.invalid/x').catch(() => null)")
    page.wait_for_timeout(200)
    assert page_log.external_requests == ["https://example.invalid/x"]
    with pytest.raises(AssertionError, match="external request"):
        page_log.assert_clean()

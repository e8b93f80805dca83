"""The project's site as a reader sees it in Chromium: what overlaps, what is cut, what overflows, what jumps.

Each test opens the built project site (`project_site`) and measures what the
browser drew: text boxes of the charts, label boxes of the link graph, the
right edge of everything in the content column, where ids wrap, the height of
a chart before its image has loaded. Screenshots of the pages checked land in
build/screenshots/reading-*.png.
"""

from __future__ import annotations

import re

import pytest

from browser import SCREENSHOT_DIR, search
from site_fixtures import BuiltSite

H100 = "records/accelerators/nvidia-h100-sxm.html"
BREAK_EVEN = "records/facts/fct-spec-decoding-cost-model-break-even.html"

# The boxes on screen of the elements a selector finds (a multi-line title counts once, as its whole box).
BOXES = """selector => [...document.querySelectorAll(selector)].map(e => {
    const r = e.getBoundingClientRect();
    return {text: e.tagName === 'circle' ? 'marker' : e.textContent, x1: r.left, y1: r.top, x2: r.right, y2: r.bottom};
})"""
# Load every chart of the page now, not when scrolled to.
LOAD_CHARTS = """async () => { for (const img of document.querySelectorAll('.flopkb-chart img')) {
    img.loading = 'eager';
    if (!img.complete) await new Promise(done => { img.onload = done; img.onerror = done; });
} }"""
# [naturalWidth (0 before it loads), height on the page] of every chart.
CHART_BOXES = """() => [...document.querySelectorAll('.flopkb-chart img')]
    .map(img => [img.complete ? img.naturalWidth : 0, img.getBoundingClientRect().height])"""


def open_page(page, base: str, rel: str) -> None:
    page.goto(base + rel)
    page.wait_for_load_state("networkidle")


def overlapping(boxes: list[dict], slack: float = 0.5) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a["x1"] + slack < b["x2"]
                and b["x1"] + slack < a["x2"]
                and a["y1"] + slack < b["y2"]
                and b["y1"] + slack < a["y2"]
            ):
                found.append((a["text"], b["text"]))
    return found


def chart_sources(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('.flopkb-chart img')].map(img => img.src)")


# ---------------------------------------------------------------------------
# Charts


def test_no_two_texts_of_a_roofline_chart_overlap(project_site: BuiltSite, serve_dir, page, shot) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, "accelerators/compare.html")
    shot(page, "reading-compare")
    charts = chart_sources(page)
    open_page(page, base, H100)
    charts += chart_sources(page)
    assert len(charts) >= 3  # the comparison's charts (one per parameter the accelerators share) and a roofline
    for src in charts:
        page.goto(src)
        texts = page.evaluate(BOXES, "text")
        assert len(texts) > 20
        assert overlapping(texts) == [], src
        # Nor does any text cover a ridge point.
        markers = page.evaluate(BOXES, "g.roof circle")
        assert len(markers) >= 1
        assert [pair for pair in overlapping(markers + texts) if pair.count("marker") == 1] == [], src


def test_formula_charts_name_their_axis_and_leave_out_a_lone_legend(project_site: BuiltSite, serve_dir, page) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, BREAK_EVEN)
    charts = chart_sources(page)
    assert len(charts) >= 5
    for src in charts:
        page.goto(src)
        texts = page.evaluate("() => [...document.querySelectorAll('text')].map(t => t.textContent)")
        assert "result" not in texts and not any(text.startswith("result (") for text in texts), src
        lines = page.evaluate("() => document.querySelectorAll('g.line').length")
        legend = page.evaluate("() => document.querySelectorAll('g[transform^=translate] > text').length")
        assert (legend > 0) == (lines > 1 or page.locator(".measured").count() > 0), src
    # The y axis is named by the formula's title (up to its ": ") and unit.
    page.goto(base + BREAK_EVEN.replace("records/", "charts/").replace(".html", "/speedup.svg"))
    assert page.locator("text[transform^=rotate]").all_text_contents() == ["Speedup of a speculative step"]


def test_chart_text_is_at_least_11_px_as_shown(project_site: BuiltSite, serve_dir, page) -> None:
    base = serve_dir(project_site.site)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        for rel in (BREAK_EVEN, H100, "accelerators/compare.html"):
            open_page(page, base, rel)
            page.evaluate(LOAD_CHARTS)
            shown = page.evaluate(
                "() => [...document.querySelectorAll('.flopkb-chart img')].map(i => [i.src, i.width])"
            )
            for src, displayed in shown:
                smallest = _smallest_font(page.context, src)
                assert smallest * displayed / 780 >= 11 - 1e-6, (rel, width, src, smallest, displayed)


def _smallest_font(context, src: str) -> float:
    chart = context.new_page()
    try:
        chart.goto(src)
        sizes = chart.evaluate("() => [...document.querySelectorAll('text')].map(t => getComputedStyle(t).fontSize)")
        return min(float(size.removesuffix("px")) for size in sizes)
    finally:
        chart.close()


def test_flat_data_get_an_axis_that_does_not_start_at_0(project_site: BuiltSite, serve_dir, page) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, BREAK_EVEN)
    figure = page.locator('[data-formula="break-even-compute-bound"] .flopkb-chart')
    figure.scroll_into_view_if_needed()
    figure.locator("img").evaluate("img => img.complete || new Promise(r => img.onload = r)")
    figure.screenshot(path=str(SCREENSHOT_DIR / "reading-break-even-chart.png"))
    page.goto(figure.locator("img").evaluate("img => img.src"))
    ticks = page.evaluate("""() => [...document.querySelectorAll('g[text-anchor=end] text')].map(t => t.textContent)""")
    values = [float(tick) for tick in ticks]
    assert min(values) >= 0.9 and max(values) <= 1.2, ticks  # the data run from 1.0 to 1.1
    assert page.locator(".axis-break").count() == 1
    assert "does not start at 0" in page.locator(".axis-break").text_content()
    # The data fill the plot: the line spans more than half its height.
    span = page.evaluate("""() => { const r = document.querySelector('g.line path').getBoundingClientRect();
                                    const p = document.querySelector('rect[fill=none]').getBoundingClientRect();
                                    return r.height / p.height; }""")
    assert span > 0.5


def test_chart_titles_are_whole_and_inside_the_chart(project_site: BuiltSite, serve_dir, page) -> None:
    base = serve_dir(project_site.site)
    charts = []
    for rel in (BREAK_EVEN, "records/flops/sd-speedup-vs-batch-roofline.html", "accelerators/compare.html"):
        open_page(page, base, rel)
        charts += chart_sources(page)
    for src in charts:
        page.goto(src)
        title = page.evaluate("() => document.querySelector('svg > title').textContent")
        shown = page.evaluate("""() => { const t = document.querySelector('text[font-size="15"]');
            const lines = [...t.querySelectorAll('tspan')].map(line => line.textContent);
            return [lines.length ? lines : [t.textContent], t.getBoundingClientRect().right,
                    document.querySelector('svg').getBoundingClientRect().right]; }""")
        lines, right, width = shown
        assert " ".join(lines) == " ".join(title.split()) and "…" not in " ".join(lines), src
        assert right <= width, src


def test_charts_have_their_height_before_they_load(project_site: BuiltSite, serve_dir, page) -> None:
    base = serve_dir(project_site.site)
    held = []
    page.route(re.compile(r".*/charts/.*\.svg$"), lambda route: held.append(route))
    page.goto(base + BREAK_EVEN)
    page.wait_for_selector(".flopkb-chart img", state="attached")
    before = page.evaluate(CHART_BOXES)
    assert before and all(not loaded for loaded, _ in before)
    for route in held:
        route.continue_()
    page.unroute(re.compile(r".*/charts/.*\.svg$"))
    page.evaluate(LOAD_CHARTS)
    after = page.evaluate(CHART_BOXES)
    assert all(loaded > 0 for loaded, _ in after)
    assert [round(height) for _, height in before] == [round(height) for _, height in after]
    assert all(height > 300 for _, height in after)


# ---------------------------------------------------------------------------
# The link graph


def test_graph_labels_do_not_overlap_and_hover_shows_the_whole_title(
    project_site: BuiltSite, serve_dir, page, page_log, shot
) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, "graph.html")
    page.wait_for_selector(".flopkb-graph[data-state=ready]")
    page.wait_for_timeout(300)
    shot(page, "reading-graph", full_page=False)
    boxes = page.evaluate("""() => window.flopkbGraph.nodes().filter(n => !n.hasClass('flopkb-nolabel')).map(n => {
        const b = n.renderedBoundingBox({includeNodes: false, includeLabels: true, includeOverlays: false});
        return {text: n.data('label'), x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2}; })""")
    assert len(boxes) >= project_site.records // 2
    assert overlapping(boxes) == []
    # A record whose label is cut: hovering it shows its whole title.
    target = page.evaluate("""() => {
        const n = window.flopkbGraph.getElementById('facts/fct-spec-decoding-cost-model-break-even');
        const box = document.querySelector('.flopkb-graph').getBoundingClientRect(), p = n.renderedPosition();
        return {x: box.left + p.x, y: box.top + p.y, label: n.data('label')}; }""")
    assert len(target["label"]) > 30
    page.mouse.move(target["x"], target["y"])
    tip = page.locator(".flopkb-graph-tip")
    tip.wait_for(state="visible")
    assert tip.inner_text() == target["label"]
    shot(page, "reading-graph-hover", full_page=False)
    page_log.assert_clean()


# ---------------------------------------------------------------------------
# Record pages

_OVERFLOW = """() => {
    const column = document.querySelector('article').parentElement.getBoundingClientRect().right;
    const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
        if (p.tagName === 'ARTICLE') return false;
        if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
    const out = [];
    for (const el of document.querySelectorAll('article *')) {
        const r = el.getBoundingClientRect();
        if ((r.width || r.height) && r.right > column + 0.5 && !scrolls(el)) {
            out.push(el.tagName + ': ' + el.textContent.trim().slice(0, 60));
        }
    }
    return out;
}"""

# Where an id, a parameter name or code in a table wraps: the character before each line break.
_WRAPS = """() => {
    const out = [];
    const codes = 'article code.flopkb-id, article td code, article th code, article dl code';
    for (const el of document.querySelectorAll(codes)) {
        let before = null, top = null;
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) for (let i = 0; i < node.length; i++) {
            const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
            const r = range.getBoundingClientRect();
            if (!r.width && !r.height) continue;
            if (top !== null && r.top > top + 2 && !/[\\s\\/-]/.test(before)) {
                out.push(el.textContent.trim() + ' after ' + before);
            }
            top = r.top; before = node.data[i];
        }
    }
    return out;
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_overflows_the_content_column_and_ids_wrap_only_at_slashes_and_hyphens(
    project_site: BuiltSite, serve_dir, page, width: int
) -> None:
    base = serve_dir(project_site.site)
    page.set_viewport_size({"width": width, "height": 900})
    pages = sorted(p.relative_to(project_site.site).as_posix() for p in (project_site.site / "records").rglob("*.html"))
    pages += ["accelerators/compare.html", "evidence.html", "kinds/flop.html", "kinds/source.html"]
    assert len(pages) > 25
    problems = {}
    for rel in pages:
        open_page(page, base, rel)
        found = page.evaluate(_OVERFLOW) + page.evaluate(_WRAPS)
        if width == 1280 and rel.startswith("records/"):
            # On a desktop screen every table of a record page fits: none needs scrolling sideways.
            found += page.evaluate("""() => [...document.querySelectorAll('article .md-typeset__scrollwrap')]
                .filter(w => w.scrollWidth > w.clientWidth + 1)
                .map(w => 'scrolls: ' + w.textContent.trim().slice(0, 60))""")
        if found:
            problems[rel] = found
    assert problems == {}


def test_meta_chips_read_as_separate_words_and_titles_read_as_words(
    project_site: BuiltSite, serve_dir, page, shot
) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, "records/flops/sd-batch-dilution-problem.html")
    meta = page.locator(".flopkb-meta").inner_text()
    assert "arithmetic-intensity · unverified figures · " in meta
    assert meta.endswith("flops/sd-batch-dilution-problem")
    # The record has no title: its heading is its id's last segment, as words.
    assert page.locator("article h1").inner_text().rstrip("¶").strip() == "Sd batch dilution problem"
    assert page.title() == "Sd batch dilution problem - flopkb"
    shot(page, "reading-untitled-record", full_page=False)
    open_page(page, base, H100)
    assert page.title() == "NVIDIA H100 SXM - flopkb"
    open_page(page, base, "index.html")
    assert page.title() == "flopkb"
    # Search excerpts: the page's text as indexed has the separators too.
    results = search(page, "dilution")
    results.filter(has_text="Sd batch dilution problem").first.wait_for()
    assert "intensityhas" not in results.first.inner_text()


def test_accelerator_page_shows_the_value_of_every_formula_evaluated_on_it(
    project_site: BuiltSite, serve_dir, page, shot
) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, H100)
    table = page.locator(".flopkb-used-by table")
    table.scroll_into_view_if_needed()
    table.screenshot(path=str(SCREENSHOT_DIR / "reading-h100-formulas.png"))
    rows = table.locator("tbody tr")
    kb = project_site.outcome.kb
    expected = [
        result
        for record_id in sorted(kb.formulas)
        for result in kb.formulas[record_id]
        if any(e.hardware == "accelerators/nvidia-h100-sxm" for e in result.evaluations)
    ]
    assert rows.count() == len(expected) > 5
    ridge = rows.filter(has_text="Ridge point: dense BF16 peak over memory bandwidth")
    assert ridge.locator("td").last.inner_text() == "295.3 FLOP/byte"
    assert "k = 2: 98.45" in rows.filter(has_text="Batch at which the B * (k + 1)-row verify pass").inner_text()

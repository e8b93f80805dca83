"""The project's charts in a real browser, at a desktop and a phone width: what a reader sees of each chart."""

from __future__ import annotations

import pytest

from site_fixtures import BuiltSite

SPEEDUP = "records/flops/sd-speedup-vs-batch-roofline.html"


def speedup_chart(page, url: str):
    """The "Speculative speedup S(B)" chart's image on the page at `url`, scrolled to and loaded."""
    page.goto(url)
    img = page.locator('[data-formula="speedup-vs-batch"] .flopkb-chart img')
    img.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    return img


def assert_fits_its_column(page, img) -> None:
    column = page.locator("article").bounding_box()
    box = img.bounding_box()
    assert column is not None and box is not None and box["width"] <= column["width"] + 1


@pytest.mark.parametrize("width", [1280, 390])
def test_the_axes_end_near_the_points_and_the_y_label_is_short(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width
) -> None:
    """No empty stretch of axis beyond the data (the last batch near the plot's right edge); a short y label."""
    page.set_viewport_size({"width": width, "height": 900})
    base = serve_dir(project_site.site)
    page.goto(base + SPEEDUP)
    page.wait_for_selector("article h1")
    img = page.locator('[data-formula="speedup-vs-batch"] .flopkb-chart img')
    img.scroll_into_view_if_needed()
    assert img.is_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    shot(page, f"chart-speedup-{width}", full_page=False)
    page_log.assert_clean()
    page.goto(img.evaluate("img => img.src"))
    frame = page.locator("rect.plot-frame").bounding_box()
    points = [box for box in (c.bounding_box() for c in page.locator("circle:has(title)").all()) if box]
    assert frame is not None and points
    right = max(box["x"] + box["width"] / 2 for box in points)
    assert frame["x"] + frame["width"] - right <= 0.1 * frame["width"]
    # The y axis names the quantity in a few words; the formula itself stays in the title above the plot.
    assert page.locator("text[transform^=rotate]").all_text_contents() == ["Speculative speedup"]
    title = " ".join(page.locator("text.chart-title").all_text_contents())
    assert "S(B) = a * T_base(B)" in title


def test_a_phone_never_scrolls_any_page_sideways(project_site: BuiltSite, serve_dir, page, page_log) -> None:
    """At 390 px no page of the site is wider than the screen: a wide table scrolls inside its own box."""
    page.set_viewport_size({"width": 390, "height": 900})
    base = serve_dir(project_site.site)
    pages = sorted(path.relative_to(project_site.site).as_posix() for path in project_site.site.rglob("*.html"))
    assert len(pages) > 50
    for rel in pages:
        page.goto(base + rel)
        page.wait_for_load_state("load")
        width, screen = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        assert width <= screen, f"{rel}: the page scrolls sideways ({width} px on a {screen} px screen)"
    page.goto(base + SPEEDUP)
    page.wait_for_selector("article h1")
    page.wait_for_load_state("networkidle")
    scrolling = page.evaluate("""() => [...document.querySelectorAll('article table')].filter(table => {
        for (let box = table.parentElement; box && box.tagName !== 'ARTICLE'; box = box.parentElement) {
            const overflow = getComputedStyle(box).overflowX;
            if (overflow === 'auto' || overflow === 'scroll') return box.scrollWidth > box.clientWidth;
        }
        return false;
    }).length""")
    assert scrolling > 0  # a table wider than the phone, in a box of its own that scrolls
    page_log.assert_clean()


SEEN = """share => {
    // Each series: how many of its marks show at least `share` of themselves (sampled on a 9 x 9 grid).
    const seen = {};
    for (const g of document.querySelectorAll('g.points')) {
        const marks = [...g.children].filter(m => m.tagName !== 'title');
        seen[g.querySelector('title').textContent] = marks.filter(m => {
            const b = m.getBoundingClientRect();
            let mine = 0, all = 0;
            for (let i = 1; i < 9; i++) for (let j = 1; j < 9; j++) {
                const e = document.elementFromPoint(b.left + b.width * i / 9, b.top + b.height * j / 9);
                all++;
                if (e === m || (e && m.contains(e))) mine++;
            }
            return mine >= share * all;
        }).length;
    }
    return seen;
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_series_that_lie_on_each_other_all_show_and_measured_points_are_on_top(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width
) -> None:
    """ "Speculative speedup S(B)": H100, B200 and MI300X take the same values up to batch 64 (and H100 and B200 nearly
    after): every series' marks show (each a shape of its own, the first drawn the largest), and the measured points
    are drawn over every line and mark of the model."""
    page.set_viewport_size({"width": width, "height": 900})
    img = speedup_chart(page, serve_dir(project_site.site) + SPEEDUP)
    assert_fits_its_column(page, img)
    shot(page, f"chart-series-{width}", full_page=False)
    page.goto(img.evaluate("img => img.src"))
    # The chart alone, scaled to the screen's width as the page scales it to its column.
    page.evaluate(
        "() => { const svg = document.documentElement; svg.setAttribute('width', innerWidth - 24);"
        " svg.removeAttribute('height'); }"
    )
    seen = page.evaluate(SEEN, 0.1)
    assert len(seen) == 4 and all(count > 0 for count in seen.values()), seen
    shapes = page.evaluate("[...document.querySelectorAll('g.points')].map(g => g.children[1].dataset.shape)")
    assert len(set(shapes)) == len(shapes), shapes  # a shape per series
    on_top = page.evaluate("""() => [...document.querySelectorAll('.mark--measured path')].map(m => {
        const b = m.getBoundingClientRect();
        const e = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
        return e === m;
    })""")
    assert on_top and all(on_top)
    page_log.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_on_a_phone_the_legend_is_below_the_plot(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width
) -> None:
    """Charts scale to their column; below 600 px the page shows the narrow drawing, whose legend is under the plot
    (the wide one's column beside the plot would be cut to unreadable text)."""
    page.set_viewport_size({"width": width, "height": 900})
    img = speedup_chart(page, serve_dir(project_site.site) + SPEEDUP)
    assert_fits_its_column(page, img)
    source = img.evaluate("img => img.currentSrc")
    assert ("/charts/_narrow/" in source) == (width < 600)
    shot(page, f"chart-legend-{width}", full_page=False)
    page.goto(source)
    frame = page.locator("rect.plot-frame").bounding_box()
    legend = [
        b
        for b in (e.bounding_box() for e in page.locator("g.legend-mark, g[transform^=translate]:has(title)").all())
        if b
    ]
    assert frame is not None and legend
    if width < 600:
        assert all(b["y"] > frame["y"] + frame["height"] for b in legend)  # under the plot
        assert page.evaluate("document.documentElement.viewBox.baseVal.width") < 500
    else:
        assert all(b["x"] > frame["x"] + frame["width"] for b in legend)  # beside it
    page_log.assert_clean()

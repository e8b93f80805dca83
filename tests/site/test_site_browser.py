"""The readers' site in a real browser (Debian's Chromium driven by Playwright), and `flopkb serve`.

The project's own records and schema are copied to a temporary base and built
once for the session (`project_site`), served on 127.0.0.1, and read the way a
reader reads them: home page, a wikilink followed, a record found by search,
an evaluated formula table and a roofline chart, the graph page with every
record. Every page must load nothing from outside the site and log no error
(`page_log.assert_clean()`). Screenshots of the main pages land in
build/screenshots/site-*.png.

Hostile records (`hostile_site`) are opened too: no dialog may open, whatever
the page, search included.

`flopkb serve` is started on a free port; a record is edited and the open page
must reload itself with the change.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest

from browser import arrive, require_playwright, search
from flopkb.config import load_config
from flopkb.site.publishing.serve import VERSION_PATH, Server
from flopkb.site.publishing.serve_http import POLL_MS
from repo import REPO
from site_fixtures import BuiltSite, copy_project_base

RIDGE = "records/facts/ridge-point.html"
H100 = "records/accelerators/nvidia-h100-sxm.html"


def open_page(page, base: str, rel: str) -> None:
    """Open a page and let it settle (navigating away from a page still loading aborts its loads)."""
    page.goto(base + rel)
    page.wait_for_selector("article h1")
    page.wait_for_load_state("networkidle")


def h1(page) -> str:
    return page.locator("article h1").inner_text().rstrip("¶").strip()


def scroll_through(page) -> None:
    """Scroll to the end and back, so that lazily loaded charts load."""
    page.evaluate("""async () => {
        for (let y = 0; y < document.body.scrollHeight; y += 500) {
            window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20));
        }
        window.scrollTo(0, 0);
    }""")


def images_loaded(page, selector: str) -> list[int]:
    return page.evaluate(f"""() => Promise.all([...document.querySelectorAll({selector!r})].map(img =>
        img.complete ? img.naturalWidth
            : new Promise(done => {{ img.onload = () => done(img.naturalWidth); img.onerror = () => done(0); }})))""")


# ---------------------------------------------------------------------------
# The project's own base


def test_home_page(project_site: BuiltSite, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, "index.html")
    assert h1(page) == "flopkb"
    cards = page.locator(".flopkb-card")
    assert cards.count() == 5
    assert "Accelerators" in cards.all_inner_texts()[3]
    shot(page, "site-home")
    page.locator(".md-tabs__link", has_text="Evidence").click()
    arrive(page, "**/evidence.html")
    page.wait_for_selector("article h1")
    shot(page, "site-evidence")
    page_log.assert_clean()


def test_following_a_wikilink_and_a_formula_anchor(project_site: BuiltSite, serve_dir, page, page_log) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, RIDGE)
    page.locator(".flopkb-lead a", has_text="NVIDIA H100 SXM").first.click()
    arrive(page, "**/" + H100)
    assert h1(page) == "NVIDIA H100 SXM"
    # [[...#formula]]: the "defined in" link of a formula that reuses another lands on that formula.
    open_page(page, base, "records/flops/sd-batch-dilution-problem.html")
    page.locator('[data-formula="ai-at-batch"] dd a').first.click()
    arrive(page, "**/speculative-decoding-bandwidth-trade-at-batch.html#speculative-ai")
    page.wait_for_function("""() => { const r = document.getElementById('speculative-ai').getBoundingClientRect();
                                      return r.top >= 0 && r.top < window.innerHeight; }""")
    page_log.assert_clean()


def test_search_finds_a_record(project_site: BuiltSite, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, "index.html")
    assert page.locator(".md-header .flopkb-search .pagefind-ui__search-input").is_visible()
    hit = search(page, "ridge point").filter(has_text="Ridge point and the batch")
    hit.first.wait_for()
    shot(page, "site-search", full_page=False)
    hit.first.locator("a.pagefind-ui__result-link").first.click()
    arrive(page, "**/" + RIDGE + "*")
    # Formulas are searchable by their expression.
    search(page, "peak_bf16_dense").filter(has_text="Ridge point").first.wait_for()
    page_log.assert_clean()


def test_formulas_are_typeset_with_their_evaluated_table(
    project_site: BuiltSite, serve_dir, page, page_log, shot
) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, RIDGE)
    page.wait_for_selector(".flopkb-formula .katex")
    assert page.locator(".flopkb-formula .katex-display").count() == 3
    table = page.locator('[data-formula="ridge-point"] .flopkb-results table')
    assert table.is_visible()
    texts = table.locator("td").all_inner_texts()
    assert "295.3 FLOP/byte" in texts and "246.7 FLOP/byte" in texts
    assert page.locator('[data-formula="ridge-point"] .flopkb-claim--ok').count() == 4
    shot(page, "site-formulas")
    open_page(page, base, "records/facts/fct-spec-decoding-cost-model-break-even.html")
    scroll_through(page)
    widths = images_loaded(page, ".flopkb-formula .flopkb-chart img")
    assert len(widths) >= 5 and all(width > 0 for width in widths)
    shot(page, "site-flop-formulas")
    page_log.assert_clean()


def test_accelerator_page_and_comparison_show_rooflines(
    project_site: BuiltSite, serve_dir, page, page_log, shot
) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, H100)
    roofline = page.locator('img[src$="nvidia-h100-sxm/roofline.svg"]')
    roofline.scroll_into_view_if_needed()
    assert images_loaded(page, 'img[src$="roofline.svg"]') == [780]
    assert page.locator('tr[id="specs.memory_bandwidth"]').inner_text().count("3.35 TB/s") == 1
    page.wait_for_selector(".flopkb-graph--small[data-state=ready]")
    assert page.evaluate("window.flopkbGraph.nodes().length") >= 5
    shot(page, "site-accelerator")
    open_page(page, base, "accelerators/compare.html")
    assert all(width == 780 for width in images_loaded(page, ".flopkb-chart img"))
    assert page.locator(".flopkb-compare th a").count() == len(list((REPO / "records/accelerators").glob("*.yaml")))
    shot(page, "site-compare")
    page_log.assert_clean()


def test_graph_page_shows_every_record(project_site: BuiltSite, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, "graph.html")
    page.wait_for_selector(".flopkb-graph[data-state=ready]")
    assert page.evaluate("window.flopkbGraph.nodes().length") == project_site.records
    assert page.evaluate("window.flopkbGraph.edges().length") > project_site.records
    shot(page, "site-graph", full_page=False)
    position = page.evaluate("""() => {
        const node = window.flopkbGraph.getElementById('facts/ridge-point');
        const box = document.querySelector('.flopkb-graph').getBoundingClientRect();
        const p = node.renderedPosition();
        return {x: box.left + p.x, y: box.top + p.y};
    }""")
    page.mouse.click(position["x"], position["y"])
    arrive(page, "**/" + RIDGE)
    page_log.assert_clean()


def test_dark_scheme_record_page(project_site: BuiltSite, serve_dir, page, page_log, shot) -> None:
    base = serve_dir(project_site.site)
    page.emulate_media(color_scheme="dark")
    open_page(page, base, "records/flops/sd-batch-dilution-problem.html")
    page.wait_for_selector(".flopkb-graph--small[data-state=ready]")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    shot(page, "site-flop-dark", full_page=False)
    page_log.assert_clean()


# ---------------------------------------------------------------------------
# Hostile records


def test_hostile_pages_run_nothing(hostile_site: BuiltSite, serve_dir, page, page_log) -> None:
    base = serve_dir(hostile_site.site)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    pages = sorted(
        p.relative_to(hostile_site.site).as_posix() for p in hostile_site.site.rglob("*.html") if p.name != "404.html"
    )
    assert len(pages) > 10
    for rel in pages:
        page.goto(base + rel)
        page.wait_for_load_state("load")
        # Hover and focus everything a record wrote, in case a handler slipped through.
        page.evaluate("""() => { for (const el of document.querySelectorAll('article *')) {
            for (const type of ['mouseover', 'focus', 'toggle', 'load', 'error'])
                el.dispatchEvent(new Event(type)); } }""")
    open_page(page, base, "index.html")
    search(page, "hostile")  # results show the payloads, as text
    shown = "document.querySelector('.pagefind-ui__results').innerText.includes('<script>alert(10)</script> Hostile')"
    page.wait_for_function(shown)
    page.wait_for_timeout(500)
    assert dialogs == []
    # (Quick successive navigations abort each other's favicon loads: not a problem of the site.)
    assert page_log.external_requests == [] and page_log.page_errors == [] and page_log.console_errors == []


# ---------------------------------------------------------------------------
# flopkb serve


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # 127.0.0.1 only
        return response.read().decode("utf-8")


@pytest.fixture
def served(tmp_path: Path):
    base = copy_project_base(tmp_path / "kb")
    server = Server(load_config(base), port=0)
    url = server.start()
    try:
        yield base, server, url
    finally:
        server.stop()


def _wait_for_state(url: str, wanted, timeout: float = 60.0) -> dict:
    """Poll the server's version endpoint until `wanted(state)`."""
    import json

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = json.loads(_get(url + VERSION_PATH.lstrip("/")))
        if wanted(state):
            return state
        time.sleep(0.1)
    raise AssertionError(f"the server did not get there within {timeout} s")


def test_serve_injects_the_reload_script_into_served_pages_only(served) -> None:
    _, server, url = served
    served_page = _get(url + RIDGE)
    assert VERSION_PATH in served_page
    assert VERSION_PATH not in (server.site_dir / RIDGE).read_text(encoding="utf-8")
    assert VERSION_PATH in _get(url)  # the folder's index.html too
    assert url.startswith("http://127.0.0.1:")


def test_serve_rebuilds_on_a_change_and_the_page_reloads(served, page) -> None:
    base, server, url = served
    page.goto(url + RIDGE)
    page.wait_for_selector("article h1")
    page.wait_for_timeout(500)  # the poller has read the first version
    record = base / "records/facts/ridge-point.yaml"
    text = record.read_text(encoding="utf-8")
    changed = text.replace(
        'title: "Ridge point and the batch at which decode turns compute-bound"',
        'title: "Ridge point, edited while serving"',
    )
    assert changed != text
    start = time.monotonic()
    record.write_text(changed, encoding="utf-8")
    page.wait_for_function(
        "document.querySelector('article h1')?.innerText.includes('edited while serving')", timeout=60_000
    )
    seen = time.monotonic() - start
    print(f"flopkb serve: the change showed in the browser after {seen:.2f} s")
    assert "edited while serving" in (server.site_dir / RIDGE).read_text(encoding="utf-8")


def test_a_search_after_a_save_finds_the_saved_words(served, page) -> None:
    """Saves do not index the site; the first search after one does, and waits for it: it finds what was saved."""
    base, server, url = served
    server.search.wait(120)  # the first build's index
    record = base / "records/facts/ridge-point.yaml"
    text = record.read_text(encoding="utf-8")
    changed = text.replace(
        'title: "Ridge point and the batch at which decode turns compute-bound"', 'title: "Ridge point zanzibarword"'
    )
    assert changed != text
    version = server.state.snapshot()["version"]
    record.write_text(changed, encoding="utf-8")
    _wait_for_state(url, lambda state: state["version"] > version)
    with server._build_lock:  # the saved page is in first, then the rest, whose version change reloads the page
        pass
    assert server.search.pending  # the save did not index
    page.goto(url)
    page.wait_for_selector(".pagefind-ui__search-input")
    page.set_default_timeout(60_000)
    results = search(page, "zanzibarword")
    # pagefind shows results as the word is typed: wait for those of the whole word (a prefix may match other pages)
    require_playwright().expect(results.first).to_contain_text("Ridge point zanzibarword", timeout=60_000)
    assert not server.search.pending


def test_a_query_being_typed_is_not_reloaded_away(served, page) -> None:
    """A save while the reader's search box holds text reloads nothing; emptying the box shows the save."""
    base, server, url = served
    server.search.wait(120)  # the first build's index
    page.goto(url)
    page.wait_for_selector(".pagefind-ui__search-input")
    page.set_default_timeout(60_000)
    page.evaluate("window.flopkbNotReloaded = true")
    results = search(page, "ridge")
    version = server.state.snapshot()["version"]
    record = base / "records/facts/ridge-point.yaml"
    text = record.read_text(encoding="utf-8")
    changed = text.replace(
        'title: "Ridge point and the batch at which decode turns compute-bound"', 'title: "Ridge point, saved"'
    )
    assert changed != text
    record.write_text(changed, encoding="utf-8")
    _wait_for_state(url, lambda state: state["version"] > version)
    with server._build_lock:  # both of the save's version changes are out
        pass
    page.wait_for_timeout(5 * POLL_MS)  # several polls have seen the new version
    assert page.locator(".pagefind-ui__search-input").input_value() == "ridge"
    assert results.count() > 0 and page.evaluate("window.flopkbNotReloaded") is True
    page.locator(".pagefind-ui__search-input").fill("")
    page.wait_for_function("window.flopkbNotReloaded === undefined")


def test_serve_keeps_the_last_good_site_while_the_base_has_errors(served, page) -> None:
    base, server, url = served
    page.goto(url + RIDGE)
    page.wait_for_selector("article h1")
    page.wait_for_timeout(500)
    version = server.state.snapshot()["version"]
    broken = base / "records/facts/broken.yaml"
    broken.write_text("id: facts/broken\nkind: fact\nstatement: Links to [[nowhere-at-all]].\n", encoding="utf-8")
    state = _wait_for_state(url, lambda state: state["state"] == "refused")
    assert "dangling-link" in state["message"] and state["version"] == version
    page.wait_for_selector("#flopkb-serve-banner", timeout=30_000)
    banner = page.locator("#flopkb-serve-banner").inner_text()
    assert "records/facts/broken.yaml:3:" in banner and "dangling-link" in banner  # where, and what
    assert (server.site_dir / RIDGE).is_file()  # the last good site is still there
    broken.unlink()
    state = _wait_for_state(url, lambda state: state["state"] == "ok")
    assert state["version"] == version + 1
    page.wait_for_function("!document.getElementById('flopkb-serve-banner')", timeout=30_000)


ROOFLINE = "records/flops/sd-speedup-vs-batch-roofline.html"


def test_measured_points_over_the_chart_and_the_disagreement_notice(
    project_site: BuiltSite, serve_dir, page, page_log, shot
) -> None:
    base = serve_dir(project_site.site)
    open_page(page, base, ROOFLINE)
    notice = page.locator(".flopkb-disagreements")
    assert notice.is_visible()
    assert "disagrees with what its sources measured" in notice.inner_text()
    assert "1.38" in notice.inner_text() and "Table 3" in notice.inner_text()
    table = page.locator('[data-formula="speedup-vs-batch"] .flopkb-measured table')
    assert table.is_visible()
    assert "relative error" in table.inner_text() and "disagrees" in table.inner_text()
    shot(page, "site-measured-notice")
    chart = page.locator('[data-formula="speedup-vs-batch"] .flopkb-chart img').evaluate("img => img.src")
    notice.locator("a", has_text="Table 3").first.click()  # the measurement's row on the source's page
    arrive(page, "**/eagle3-2025.html#sglang-eagle3-throughput-gain-bs*")
    row = page.locator(f"tr#{page.url.rsplit('#', 1)[1]}")
    assert row.is_visible() and "Table 3" in row.inner_text()
    page_log.assert_clean()
    page.goto(chart)  # the chart itself: the points are in its SVG
    marks = page.locator(".mark--measured")
    assert marks.count() == 2
    for index in range(2):
        assert marks.nth(index).is_visible()
        box = marks.nth(index).bounding_box()
        assert box is not None and box["width"] > 4 and box["height"] > 4
    assert "Table 3" in marks.first.locator("title").text_content()
    assert page.locator(".legend-mark", has_text="measured").is_visible()

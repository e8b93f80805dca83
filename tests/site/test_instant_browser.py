"""Instant navigation (Material's navigation.instant) in a real browser: a followed link swaps the page in without
a reload, and everything flopkb's script does to a page (formulas, charts, the link graph, link previews, search)
works on the page swapped in. From file://, where instant navigation cannot fetch, links reload as before."""

from __future__ import annotations

import pytest

from browser import arrive, file_url_page, search
from site_fixtures import BuiltSite

DILUTION = "records/flops/sd-batch-dilution-problem.html"
SPEEDUP = "records/flops/sd-speedup-vs-batch-roofline.html"
MARK = "window.flopkbNoReload = 'still here'"


def follow(page, selector: str, url_end: str) -> None:
    """Click the first link matching `selector` and wait for its page to be in place."""
    page.locator(selector).first.click()
    arrive(page, "**/" + url_end + "*")


def no_reload(page) -> bool:
    return page.evaluate("window.flopkbNoReload === 'still here'")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_followed_link_swaps_the_page_in_and_it_works(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    base = serve_dir(project_site.site)
    page.goto(base + DILUTION)
    page.wait_for_selector('.flopkb-graph[data-state="ready"]')
    page.evaluate(MARK)
    # A wikilink in the page's text, to a record with formulas, a chart and a neighbourhood graph.
    follow(page, 'article a[href*="sd-speedup-vs-batch-roofline.html"]', SPEEDUP)
    assert no_reload(page), "the page was loaded again, not swapped in"
    assert page.locator("article h1").inner_text().startswith("Speculative")
    page.wait_for_selector('.flopkb-graph--small[data-state="ready"]')
    assert page.evaluate("document.body.contains(window.flopkbGraph.container())")
    assert page.evaluate("window.flopkbGraphs.length") == 1  # the previous page's graph is let go
    assert page.locator("article .flopkb-formula .katex").count() > 0
    img = page.locator('[data-formula="speedup-vs-batch"] .flopkb-chart img')
    img.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    # A link preview on the new page.
    link = page.locator("article .flopkb-lead a[href*='records/']").first
    link.scroll_into_view_if_needed()
    link.hover()
    page.locator("#flopkb-preview").wait_for(state="visible")
    shot(page, f"instant-swapped-{width}", full_page=False)
    page.mouse.move(1, 1)
    # The whole link graph, through the header's tab (at 390 px, the drawer's link).
    if width >= 1280:
        follow(page, ".md-tabs__link:text-is('Link graph')", "graph.html")
    else:
        page.locator("label.md-header__button[for='__drawer']").click()
        follow(page, ".md-nav--primary a.md-nav__link[href$='graph.html']", "graph.html")
    assert no_reload(page)
    page.wait_for_selector('.flopkb-graph--full[data-state="ready"]')
    assert page.evaluate("window.flopkbGraph.nodes().length") == project_site.records
    # Search, after two swaps: pagefind's box is the header's, kept across swaps.
    if width >= 1280:
        search(page, "ridge point").filter(has_text="Ridge point").first.wait_for()
    # Back: the previous page again, working, still without a reload.
    page.go_back()
    page.wait_for_function("end => location.pathname.endsWith(end)", arg=SPEEDUP)
    page.wait_for_selector('.flopkb-graph--small[data-state="ready"]')
    assert no_reload(page)
    page_log.assert_clean()


def test_from_file_urls_links_reload_and_nothing_breaks(project_site: BuiltSite, browser) -> None:
    with file_url_page(browser, project_site.site) as (page, site, errors):
        page.goto(site + DILUTION)
        page.wait_for_selector('.flopkb-graph[data-state="ready"]')
        page.evaluate(MARK)
        page.locator('article a[href*="sd-speedup-vs-batch-roofline.html"]').first.click()
        arrive(page, "**/" + SPEEDUP + "*")
        page.wait_for_selector('.flopkb-graph--small[data-state="ready"]')
        assert page.locator("article .flopkb-formula .katex").count() > 0
        page.locator(".flopkb-search__input").fill("ridge point")
        page.locator(".flopkb-search__results a").first.wait_for()
        assert errors == []

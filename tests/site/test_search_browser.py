"""Search on a generated base of 400 records (`benchmarks/generate.py`), in Chromium, and 404.html under a sub-path.

A search for a record's title lists that record first and opens its page. A
reader's first search fetches a small part of pagefind's index (the chunks of
the words typed and the fragments of the results shown), not all of it: the
bytes the server sent are counted (`browser.Served`).

The site's 404 page, served from a sub-path (the parent folder served), loads
its styles and scripts and finds records.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from browser import REPO, Served, arrive, search, serve_directory
from site_fixtures import BuiltSite, build_base

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

RECORDS = 400
INDEX_DATA = (".pf_meta", ".pf_index", ".pf_fragment")


@pytest.fixture(scope="module")
def generated_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    return build_base(generate(tmp_path_factory.mktemp("generated") / "kb", RECORDS))


def index_size(site: Path) -> int:
    return sum(p.stat().st_size for p in (site / "pagefind").rglob("*") if p.name.endswith(INDEX_DATA))


def test_first_search_finds_the_record_and_fetches_a_small_part_of_the_index(
    generated_site: BuiltSite, page, page_log
) -> None:
    served = Served()
    with serve_directory(generated_site.site, served=served) as base:
        page.goto(base + "kinds/fact.html")
        page.wait_for_load_state("networkidle")
        page_load = served.total()
        served.clear()
        first = search(page, "123").first.locator("a.pagefind-ui__result-link").first
        assert first.inner_text() == "Synthetic record 123"
        page.wait_for_load_state("networkidle")
        fetched = sum(size for path, size in served.responses if path.endswith(INDEX_DATA))
        whole = index_size(generated_site.site)
        assert 0 < fetched * 10 < whole, (fetched, whole)
        print(
            f"page {page_load:,} B; first search {served.total('/pagefind/'):,} B, of it index {fetched:,} B;"
            f" whole index {whole:,} B"
        )
        first.click()
        arrive(page, "**/records/kb/g23/rec-00123.html")
        assert page.locator("article h1").inner_text().rstrip("¶").strip() == "Synthetic record 123"
    page_log.assert_clean()


def test_404_page_works_under_a_sub_path(generated_site: BuiltSite, serve_dir, page, page_log) -> None:
    base = serve_dir(generated_site.site.parent) + generated_site.site.name + "/"
    page.goto(base + "404.html")
    page.wait_for_load_state("networkidle")
    assert page.locator("article h1").inner_text() == "404 - Not found"
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    link = search(page, "Synthetic record 123").first.locator("a.pagefind-ui__result-link").first
    assert link.get_attribute("href") == f"/{generated_site.site.name}/records/kb/g23/rec-00123.html"
    assert page.locator(".md-tabs__link", has_text="Evidence").evaluate("a => a.href") == base + "evidence.html"
    page_log.assert_clean()


def test_opened_from_disk_everything_works_and_search_finds_records_by_title_id_and_alias(
    generated_site: BuiltSite, browser
) -> None:
    """From file:// (`build/site/index.html` opened in a browser): styles, scripts and links work; the search box
    finds records by title, id and alias (and says full text needs the site served). Nothing outside the site
    folder is fetched."""
    site = generated_site.site.resolve().as_uri() + "/"
    outside: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if url.startswith(site):
            route.continue_()  # type: ignore[attr-defined]
        else:
            outside.append(url)
            route.abort("blockedbyclient")  # type: ignore[attr-defined]

    context.route("**/*", route)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(site + "records/kb/g23/rec-00123.html")
        page.wait_for_load_state("load")
        assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
        search = page.locator(".flopkb-search__input")
        for query, found in (
            ("synthetic record 123", "Synthetic record 123"),  # title
            ("g23/rec-00123", "Synthetic record 123"),  # id
            ("moved/rec-00125", "Synthetic record 125"),  # alias
        ):
            search.fill(query)
            first = page.locator(".flopkb-search__results a").first
            first.wait_for()
            assert first.inner_text() == found, query
        assert "flopkb serve" in page.locator(".flopkb-search__results").inner_text()
        search.fill("")
        link = page.locator("article a[href$='.html']").filter(has_text="Synthetic record").first
        target = str(link.get_attribute("href")).rsplit("/", 1)[-1]
        link.click()
        page.wait_for_load_state("load")
        assert page.url.startswith(site) and page.url.endswith(target)
        assert page.locator("article h1").inner_text().startswith("Synthetic record")
        assert (outside, errors) == ([], [])
    finally:
        context.close()

"""A listing's pages read in a real browser, at phone and desktop width: the pager above the rows takes a reader
from the first page to the last and back, the page never wider than the screen, and every record of the listing is
on one of the pages it reaches."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser import open_at
from flopkb.site.pages import listings
from kbfixture import write_kb
from site_fixtures import BuiltSite, build_base

FACTS = 9
ROWS = 2


@pytest.fixture(scope="module")
def paged_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltSite]:
    files = {
        f"records/facts/f{n}.yaml": f"id: facts/f{n}\nkind: fact\ntitle: Fact {n}\nstatement: A fact.\ntags: [t]\n"
        for n in range(FACTS)
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(listings, "LISTING_ROWS", ROWS)
        yield build_base(write_kb(tmp_path_factory.mktemp("paged") / "kb", files))


def current(page, number: int):
    """The pager's mark of the current page, once it says `number`."""
    return page.locator("nav.flopkb-pager [aria-current=page]", has_text=re.compile(f"^{number}$")).first


def ids_on(page) -> list[str]:
    return [text.strip() for text in page.locator("table code.flopkb-id").all_inner_texts()]


@pytest.mark.parametrize("width", [390, 1280])
def test_the_pager_goes_through_every_page_and_back(
    paged_site: BuiltSite, serve_dir, page, page_log, shot, width: int
) -> None:
    open_at(page, serve_dir(paged_site.site) + "kinds/fact.html", width)
    pager = page.locator("nav.flopkb-pager").first
    assert pager.is_visible()
    assert pager.locator("[aria-current=page]").inner_text() == "1"
    assert "…" in pager.inner_text(), "page 4 is left out between 3 and 5"
    shot(page, f"listing-pager-{width}", full_page=False)
    seen = ids_on(page)
    for number in range(2, 6):
        pager.get_by_text("next →").click()
        page.wait_for_url(f"**/kinds/fact/{number}.html")
        current(page, number).wait_for()  # instant navigation: the new page's content swapped in
        assert page.locator("h1").inner_text().startswith("Facts")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"page {number} is wider than the screen"
        seen += ids_on(page)
    assert pager.locator("a", has_text="next →").count() == 0, "the last page has no next"
    assert sorted(seen) == sorted(f"facts/f{n}" for n in range(FACTS))
    pager.get_by_text("1", exact=True).click()
    page.wait_for_url("**/kinds/fact.html")
    current(page, 1).wait_for()
    assert pager.locator("a", has_text="← previous").count() == 0, "the first page has no previous"
    page_log.assert_clean()


def test_pages_past_the_first_are_not_searched(paged_site: BuiltSite) -> None:
    first, second = (paged_site.site / rel for rel in ("kinds/fact.html", "kinds/fact/2.html"))
    assert "data-pagefind-body" in first.read_text(encoding="utf-8")
    assert "data-pagefind-body" not in second.read_text(encoding="utf-8")
    assert "<title>Facts · page 2 of 5" in second.read_text(encoding="utf-8")
    assert Path(paged_site.site / "tags/t/5.html").is_file()

"""A source's Measurements table read in a real browser: on a phone each measurement is a card whose every cell is
on screen beside its column's name (as a table, the squeezed off-screen `conditions` column made each row 590 px of
mostly white); on a desktop a table whose every column is on screen."""

from __future__ import annotations

import pytest

from browser import open_at
from site_fixtures import BuiltSite

SOURCE = "sources/eagle3-2025"
COLUMNS = ["id", "quantity", "value", "basis", "where", "conditions"]
BLANK = """cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const style = getComputedStyle(cell);
  const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
  return cell.getBoundingClientRect().height - range.getBoundingClientRect().height - padding;
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_every_measurement_reads_on_screen_in_rows_without_screens_of_white(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width: int
) -> None:
    open_at(page, serve_dir(project_site.site) + f"records/{SOURCE}.html", width)
    rows = page.locator(".flopkb-measurements tbody tr")
    assert rows.count() > 40
    first = rows.first
    first.scroll_into_view_if_needed()
    cells = first.locator("td")
    assert cells.count() == len(COLUMNS)
    for index, name in enumerate(COLUMNS):
        box = cells.nth(index).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, f"{name} is off screen"
        assert cells.nth(index).get_attribute("data-label") == name
    height = first.bounding_box()["height"]
    assert height < 500, f"a measurement's row is {height:.0f} px tall at {width} px"
    if width < 600:
        for index, name in enumerate(COLUMNS):
            white = cells.nth(index).evaluate(BLANK)
            assert white < 20, f"{name}: {white:.0f} px of the cell's height hold nothing"
        label = cells.nth(5).evaluate("cell => getComputedStyle(cell, '::before').content")
        assert label == '"conditions"', "each cell of a card says which column it is"
    shot(page, f"measurements-{width}", full_page=False)
    page_log.assert_clean()

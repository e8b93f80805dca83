"""The index of record titles that search uses when the site is opened from `file://`.

Browsers let a page opened from disk fetch nothing, so pagefind's full-text
search cannot run there. Instead the search box loads this small script
(`search-titles.js`, with a `<script>` element, which `file://` allows) and
finds records by id, title and alias (`site/assets/flopkb-offline-search.js`).
It is written whole by every build, from the records' summaries (no model is
loaded): about 100 bytes a record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flopkb.site.pages.common import html_path, json_for_script, record_path

if TYPE_CHECKING:
    from flopkb.site.pages.common import Site

TITLES = "search-titles.js"


def titles_script(site: Site) -> str:
    """`flopkbTitles([[page, title, id, aliases], ...])`, records in reading order (by kind, then title)."""
    rows = [
        [html_path(record_path(record_id)), site.titles[record_id], record_id, " ".join(entry.summary.aliases)]
        for record_id, entry in sorted(site.entries.items(), key=lambda item: site.sort_keys[item[0]])
    ]
    return f"flopkbTitles({json_for_script(rows)});\n"

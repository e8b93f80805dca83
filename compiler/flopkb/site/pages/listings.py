"""Listing pages (a kind's, a category's, a tag's records): each listing in pages of LISTING_ROWS rows, the first at
the listing's own path, the others in a folder beside it (`kinds/flop.md`, `kinds/flop/2.md`, ...), linked by a
pager; and what a row shows of its record.

A listing of every record was 4.8 MB at 10,000 records and took 10 to 30 s to open in Chromium; a page of
LISTING_ROWS rows weighs about what a record page does (docs/benchmarks.md, "Listing pages"). Each page is keyed by
the rows it shows and where it stands in the listing (`Site.keep`), so an edit that changes one row renders the
page that shows it; a record added or removed shifts the rows after it, and those pages are rendered again.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from flopkb.links.debt import NO_SOURCES
from flopkb.site.pages.common import author_list, tag_path

if TYPE_CHECKING:
    from flopkb.site.pages.common import Page, Site

LISTING_ROWS = 100
"""Rows per listing page."""
PAGER_SPAN = 2
"""The pager links the first and last pages, and this many pages on each side of the current one."""
LISTING_MEMO = "site.listing"
"""`Entry.derived` key of what a record's listing row shows of its own file (`_own`): kept by the load cache while
the file is unchanged, so that listing pages are keyed, and rendered, without loading the models."""


def listing_files(rel: str, rows: int) -> list[str]:
    """The files of a listing of `rows` rows whose first page is `rel`: `rel`, then `<rel without .md>/<n>.md`.
    (No listing's own path has a `/` in its last name, so page n of one listing is never another listing.)"""
    stem = rel.removesuffix(".md")
    count = max(1, -(-rows // LISTING_ROWS))
    return [rel, *(f"{stem}/{number}.md" for number in range(2, count + 1))]


def pager(page: Page, files: list[str], number: int) -> list[dict[str, Any]]:
    """The pager of page `number` (from 1) of a listing: previous, the page numbers (the first, the last, PAGER_SPAN
    each side of this one, `…` between), next; each with `text`, `href` (None: not a link) and `current`."""
    shown = sorted({1, len(files), *range(max(1, number - PAGER_SPAN), min(len(files), number + PAGER_SPAN) + 1)})
    items = [_step(page, files, number - 1, "← previous")]
    for before, shown_number in zip([0, *shown], shown, strict=False):
        if shown_number - before > 1:
            items.append({"text": "…", "href": None, "current": False})
        href = None if shown_number == number else page.url(files[shown_number - 1])
        items.append({"text": str(shown_number), "href": href, "current": shown_number == number})
    items.append(_step(page, files, number + 1, "next →"))
    return items


def _step(page: Page, files: list[str], number: int, text: str) -> dict[str, Any]:
    href = page.url(files[number - 1]) if 1 <= number <= len(files) else None
    return {"text": text, "href": href, "current": False}


def render_listing(
    site: Site, template: str, rel: str, ids: list[str], about: dict[str, Any], links: dict[str, str] | None = None
) -> None:
    """Write the pages of the listing of `ids` whose first page is `rel`, each from `template` with `about`, `links`
    (name -> a file of the docs folder, given as its URL from the page), `rows` (the page's own), `total`, `first`
    (the number of its first row), `number`, `pages` and `pager` (empty when there is one page)."""
    links = links or {}
    files = listing_files(rel, len(ids))
    for number, file in enumerate(files, start=1):
        start = (number - 1) * LISTING_ROWS
        rows = ids[start : start + LISTING_ROWS]
        if site.keep(listing_key(site, template, about, links, len(ids), number, ids=rows), file):
            continue
        page = site.page(file)
        site.render(
            template,
            file,
            page=page,
            root=page.root,
            rows=[listing_row(site, page, record_id) for record_id in rows],
            total=len(ids),
            first=start + 1,
            number=number,
            pages=len(files),
            pager=pager(page, files, number) if len(files) > 1 else [],
            **about,
            **{name: page.url(target) for name, target in links.items()},
        )


def status(site: Site, record_id: str) -> str:
    """The record's standing (`flopkb.links.debt.STANDINGS`): what badges say of its evidence."""
    evidence = site.kb.evidence
    return evidence.standing(record_id) if evidence is not None else NO_SOURCES


def own(site: Site, record_id: str) -> tuple[Any, str | None, tuple[str, ...]]:
    """What a listing row shows of the record's own file: (kind-specific detail, category of a flop, tags)."""
    entry = site.entries[record_id]
    found: tuple[Any, str | None, tuple[str, ...]] | None = entry.derived.get(LISTING_MEMO)
    if found is None:
        record = site.record(record_id)
        category = record.category if record.kind == "flop" else None
        found = entry.derived[LISTING_MEMO] = (_detail(record), category, tuple(record.tags))
    return found


def listing_row(site: Site, page: Page, record_id: str) -> dict[str, Any]:
    """One record in a listing: link, id, what kind-specific detail there is, evidence status, tags."""
    detail, category, tags = own(site, record_id)
    return {
        "link": page.link(record_id),
        "id": record_id,
        "detail": detail,
        "detail_href": page.url(site.category_paths[category]) if category in site.category_paths else None,
        "status": status(site, record_id),
        "tags": [{"name": tag, "href": page.url(tag_path(tag))} for tag in tags],
    }


def listing_key(site: Site, *shown: object, ids: list[str]) -> str:
    """The key of a listing page: the base key, what it shows besides rows, and every row's inputs."""
    key = hashlib.blake2b(site.result.base.encode(), digest_size=16)
    key.update(repr(shown).encode())
    for record_id in ids:
        key.update(repr((record_id, site.titles[record_id], status(site, record_id), own(site, record_id))).encode())
    return key.hexdigest()


def _detail(record: Any) -> Any:
    kind = record.kind
    detail = ""
    if kind == "flop":
        detail = record.category
    elif kind == "accelerator":
        detail = record.vendor
    elif kind == "engine":
        detail = f"{len(record.features)} features" if record.features else ""
    elif kind == "source":
        detail = " · ".join(
            part for part in (author_list(record.authors) or "", str(record.year or ""), record.venue or "") if part
        )
    elif kind == "fact":
        detail = f"{len(record.formulas)} formula{'s' if len(record.formulas) != 1 else ''}" if record.formulas else ""
    return detail

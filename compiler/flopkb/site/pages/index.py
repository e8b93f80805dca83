"""The index pages: home, one index per kind, per category and per tag, the tag index, evidence debt, diagnostic
codes; and the nav.

Records stay out of the nav (Material renders the whole nav into every page:
a nav of every record makes the build quadratic); readers reach them from
these pages and from search. Long listings are marked `data-search-exclude`,
so that searching for a record finds its page, not every index that lists it.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from flopkb.links.debt import INHERITED_DEBT, NO_SOURCES, STANDING_MEANINGS, STANDINGS
from flopkb.report.codes_doc import render_codes_markdown
from flopkb.site.pages.changes import CHANGES_PAGE
from flopkb.site.pages.common import (
    KIND_ORDER,
    KIND_TITLES,
    TAGS_INDEX,
    debt_anchor,
    figure_words,
    record_path,
    tag_path,
)
from flopkb.site.pages.graph import GRAPH_PAGE, links_between
from flopkb.site.pages.hardware import COMPARE_PAGE
from flopkb.site.pages.listings import listing_key, listing_row, own, render_listing
from flopkb.site.pages.measurements import disagreement_list

if TYPE_CHECKING:
    from flopkb.site.pages.common import Page, Site

HOME = "index.md"
EVIDENCE = "evidence.md"
CODES = "codes.md"
HOME_LIST_LIMIT = 60
"""The home page lists the flop classes and facts themselves while there are at most this many of each."""


def kind_page(kind: str) -> str:
    return f"kinds/{kind}.md"


def _sorted_ids(site: Site, ids: list[str]) -> list[str]:
    return sorted(ids, key=lambda record_id: (site.titles[record_id].lower(), record_id))


def _by_kind(site: Site) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {kind: [] for kind in KIND_ORDER}
    for record_id, kind in site.kinds.items():
        groups.setdefault(kind, []).append(record_id)
    return {kind: _sorted_ids(site, ids) for kind, ids in groups.items()}


def _by_category(site: Site) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {term: [] for term in site.category_paths}
    for record_id, kind in site.kinds.items():
        if kind == "flop":
            groups[str(own(site, record_id)[1])].append(record_id)
    return {term: _sorted_ids(site, ids) for term, ids in groups.items()}


def _by_tag(site: Site) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for record_id in site.kinds:
        for tag in dict.fromkeys(own(site, record_id)[2]):
            groups.setdefault(tag, []).append(record_id)
    return {tag: _sorted_ids(site, groups[tag]) for tag in sorted(groups)}


def nav(site: Site, by_category: dict[str, list[str]], tagged: bool, with_changes: bool = False) -> list[Any]:
    """The nav: kinds, the categories that have records (an empty one is not offered), the tag index, the site-wide
    pages (with the Recent changes page when there is one)."""
    kinds = [{KIND_TITLES[kind]: kind_page(kind)} for kind in KIND_ORDER]
    categories = [{html.escape(term): path} for term, path in site.category_paths.items() if by_category[term]]
    items: list[Any] = [{"Home": HOME}, {"Kinds": kinds}]
    if categories:
        items.append({"Categories": categories})
    if tagged:
        items.append({"Tags": TAGS_INDEX})
    items += [
        {"Compare accelerators": COMPARE_PAGE},
        {"Link graph": GRAPH_PAGE},
        {"Evidence": EVIDENCE},
        *([{"Recent changes": CHANGES_PAGE}] if with_changes else []),
        {"Diagnostic codes": CODES},
    ]
    return items


def render_index_pages(site: Site, with_changes: bool = False) -> list[Any]:
    """Write home, kind, category, evidence and codes pages; return the nav (with the Recent changes page when
    there is one)."""
    by_kind = _by_kind(site)
    by_category = _by_category(site)
    render_home(site, by_kind, by_category)
    for kind, ids in by_kind.items():
        about = {"kind": kind, "kind_title": KIND_TITLES.get(kind, kind)}
        render_listing(site, "pages/kind.md.j2", kind_page(kind), ids, about)
    descriptions = site.vocabulary.categories if site.vocabulary else {}
    for term, rel in site.category_paths.items():
        about = {"term": term, "description": descriptions.get(term, "")}
        render_listing(site, "pages/category.md.j2", rel, by_category[term], about)
    by_tag = _by_tag(site)
    render_tag_pages(site, by_tag)
    render_evidence(site)
    # A page of its own in the tabs: a sidebar would hold only itself and squeeze its tables.
    site.write(CODES, "---\nhide:\n  - navigation\n---\n\n" + render_codes_markdown())
    return nav(site, by_category, bool(by_tag), with_changes)


def render_tag_pages(site: Site, by_tag: dict[str, list[str]]) -> None:
    """A page per tag listing its records, and the index of every tag with its count."""
    if not by_tag:
        return
    counts = [(tag, len(ids)) for tag, ids in by_tag.items()]
    if not site.keep(listing_key(site, "tags", counts, ids=[]), TAGS_INDEX):
        page = site.page(TAGS_INDEX)
        tags = [{"name": tag, "count": count, "href": page.url(tag_path(tag))} for tag, count in counts]
        site.render("pages/tags.md.j2", TAGS_INDEX, page=page, root=page.root, tags=tags)
    for tag, ids in by_tag.items():
        render_listing(site, "pages/tag.md.j2", tag_path(tag), ids, {"tag": tag}, {"index": TAGS_INDEX})


def render_home(site: Site, by_kind: dict[str, list[str]], by_category: dict[str, list[str]]) -> None:
    page = site.page(HOME)
    evidence = site.kb.evidence
    counts = _standings(site)
    descriptions = site.vocabulary.categories if site.vocabulary else {}
    kinds = [
        {"kind": kind, "title": KIND_TITLES.get(kind, kind), "count": len(ids), "href": page.url(kind_page(kind))}
        for kind, ids in by_kind.items()
    ]
    categories = [
        {
            "term": term,
            "description": descriptions.get(term, ""),
            "count": len(by_category[term]),
            "href": page.url(rel),
        }
        for term, rel in site.category_paths.items()
        if by_category[term]
    ]
    lists = {
        kind: [listing_row(site, page, record_id) for record_id in by_kind.get(kind, [])]
        for kind in ("flop", "fact")
        if 0 < len(by_kind.get(kind, [])) <= HOME_LIST_LIMIT
    }
    formulas = sum(len(results) for results in site.kb.formulas.values())
    claims = sum(len(result.claims) for results in site.kb.formulas.values() for result in results)
    checked = sum(
        1
        for results in site.kb.formulas.values()
        for result in results
        for claim in result.claims
        if claim.status == "ok"
    )
    settings = site.config.site
    site.render(
        "pages/home.md.j2",
        HOME,
        page=page,
        root=page.root,
        name=settings.name,
        description=settings.description,
        repo_url=settings.repo_url
        if settings.repo_url and settings.repo_url.startswith(("http://", "https://"))
        else None,
        records=len(site.entries),
        kinds=kinds,
        categories=categories,
        lists=lists,
        status_counts=counts,
        standings=STANDINGS,
        errata=len(evidence.errata) if evidence is not None else 0,
        debt=len(evidence.debt) if evidence is not None else 0,
        disagreements=len(evidence.disagreements) if evidence is not None else 0,
        formulas=formulas,
        claims=claims,
        checked=checked,
        accelerators=len(by_kind.get("accelerator", [])),
        links=len(links_between(site)),
        compare_href=page.url(COMPARE_PAGE),
        graph_href=page.url(GRAPH_PAGE),
        evidence_href=page.url(EVIDENCE),
        codes_href=page.url(CODES),
    )


def _standings(site: Site) -> dict[str, int]:
    """How many records of the site have each standing."""
    evidence = site.kb.evidence
    counts = dict.fromkeys(STANDINGS, 0)
    for record_id in site.entries:
        counts[evidence.standing(record_id) if evidence is not None else NO_SOURCES] += 1
    return counts


def errata_list(site: Site, page: Page) -> list[dict[str, Any]]:
    """Every erratum of the site's records: where it stands, the words it quotes, the correction."""
    evidence = site.kb.evidence
    if evidence is None:
        return []
    return [
        {
            "record": page.link(item.record),
            "href": page.href(item.record, f"erratum-{item.number}"),
            "number": item.number,
            "field": item.in_field,
            "quote": page.inline(item.quote),
            "correction": page.prose(item.correction),
            "basis": item.basis,
            "sources": page.citations(item.sources),
        }
        for item in evidence.errata
        if item.record in site.entries
    ]


def render_evidence(site: Site) -> None:

    page = site.page(EVIDENCE)
    evidence = site.kb.evidence
    items = []
    resting: list[str] = []
    if evidence is not None:
        for item in evidence.debt:
            if item.record not in site.entries:
                continue
            items.append(
                {
                    "figure": page.link(item.record, debt_anchor(item.path)),
                    "label": figure_words(item.path, item.parameter),
                    "what": "spec" if item.what == "spec" else "hardware row",
                    "parameter": item.parameter,
                    "dependents": [
                        page.link(other) for other in evidence.dependents.get(item, ()) if other in site.entries
                    ],
                    "source": item.file,
                }
            )
        resting = [
            record_id
            for record_id, status in evidence.records.items()
            if status.status == INHERITED_DEBT and record_id in site.entries
        ]
    site.render(
        "pages/evidence.md.j2",
        EVIDENCE,
        page=page,
        root=page.root,
        items=items,
        counts=_standings(site),
        standings=STANDINGS,
        meanings=STANDING_MEANINGS,
        errata=errata_list(site, page),
        records=len(site.entries),
        resting=[listing_row(site, page, record_id) for record_id in _sorted_ids(site, resting)],
        disagreements=disagreement_list(site, page),
    )


__all__ = ["CODES", "EVIDENCE", "HOME", "kind_page", "nav", "record_path", "render_index_pages"]

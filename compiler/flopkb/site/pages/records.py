"""Record pages: what each record's template is given (prose, backlinks, evidence, neighbourhood graph, formulas).

Every page costs O(its own size): no page walks the whole base (backlinks and
neighbourhoods are adjacency lookups, shared indexes are built once).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from flopkb.links.debt import NO_SOURCES, STANDING_MEANINGS
from flopkb.load.models import AcceleratorRecord, EngineRecord, FactRecord, FlopRecord, SourceRecord
from flopkb.site.pages.common import (
    Page,
    Site,
    debt_anchor,
    figure_words,
    fragment,
    front_matter_title,
    json_for_script,
    record_path,
    tag_path,
)
from flopkb.site.pages.errata import errata_by_field, frame_quotes, mark_quotes, notes_html
from flopkb.site.pages.formulas import formula_views
from flopkb.site.pages.hardware import accelerator_context
from flopkb.site.pages.last_changed import last_change
from flopkb.site.pages.measurements import disagreement_notice, measurement_rows
from flopkb.site.pages.previews import description, page_accelerators, preview_path, preview_script
from flopkb.site.pages.redirects import redirect_html, redirect_path, redirected_aliases
from flopkb.site.sanitize import safe_url

if TYPE_CHECKING:
    from flopkb.kb.entry import Entry


NEIGHBOURHOOD_LIMIT = 24
"""At most this many neighbours in a record's neighbourhood graph (its own links first, then backlinks)."""
BACKLINKS_OPEN = 40
"""Backlink lists longer than this are folded (a `<details>` element)."""

ORIGIN_WORDS = {
    "prose": "mentions it",
    "source": "cites it",
    "values_for": "has figures for it",
    "affected_by_hardware": "applies to it",
    "formula-hardware": "computes with it",
    "expect-hardware": "checks a claim on it",
    "formula-ref": "reuses its formula",
    "measured": "tests a formula against its measurements",
}

# Record pages


def changed_view(site: Site, path: str) -> dict[str, str | None] | None:
    """The record file's last change for its footer: date, short and full commit id and the commit's URL ('' date:
    changes not committed); None outside a git repository."""
    change = last_change(site.changes, path)
    if change is None:
        return None
    url = site.repo_commit_url(change.sha) if change.sha else None
    return {"date": change.date, "short": change.short, "sha": change.sha, "url": url}


def record_context(site: Site, entry: Entry) -> dict[str, Any]:
    """Everything a record template needs, as plain values, links and sanitised HTML."""
    record = entry.record
    assert record is not None
    rel = record_path(entry.id)
    page = site.page(rel)
    title = site.titles[entry.id]
    errata = errata_by_field(page, site.kb.evidence.of(entry.id).errata if site.kb.evidence is not None else ())

    def prose(text: str | None, *path: str | int) -> Markup:
        """A markdown field as HTML, the words its errata quote marked and the corrections beside them."""
        found = errata.get(path, []) if text else []
        shown.add(path)
        return mark_quotes(page.prose(frame_quotes(text, found) if text else text), found)

    def inline(text: str | None, *path: str | int) -> Markup:
        found = errata.get(path, []) if text else []
        shown.add(path)
        return mark_quotes(page.inline(frame_quotes(text, found) if text else text), found)

    shown: set[tuple[str | int, ...]] = set()

    context: dict[str, Any] = {
        "page": page,
        "root": page.root,
        "record": record,
        "id": entry.id,
        "kind": record.kind,
        "title": title,
        "front_title": front_matter_title(title),
        "source_path": entry.path,
        "source_url": site.repo_file_url(entry.path),
        "edit_url": site.repo_file_url(entry.path, "edit"),
        "changed": changed_view(site, entry.path),
        "tags": [{"name": tag, "href": page.url(tag_path(tag))} for tag in record.tags],
        "aliases": list(record.aliases),
        "notes": prose(record.notes, "notes"),
        "sources": page.citations(record.sources),
        "evidence": evidence_view(site, page, entry.id),
        "backlinks": backlinks_view(site, page, entry.id),
        "backlinks_open": BACKLINKS_OPEN,
        "neighbourhood": neighbourhood_json(site, page, entry.id),
        "kind_index": page.url(f"kinds/{record.kind}.md"),
        "disagreements": [],
        "page_accelerators": page_accelerators(site, entry.id, record.kind),
    }
    kind = record.kind
    if isinstance(record, FlopRecord):
        category = record.category
        context.update(
            category=category,
            category_href=page.url(site.category_paths[category]) if category in site.category_paths else "",
            category_description=(site.vocabulary.categories.get(category, "") if site.vocabulary else ""),
            description=prose(record.description, "description"),
            scales_with=[
                {"factor": row.factor, "effect": inline(row.effect, "scales_with", index, "effect")}
                for index, row in enumerate(record.scales_with)
            ],
            hardware_parameters=[
                {
                    **hardware_row_view(site, page, index, row),
                    "effect": inline(row.effect, "hardware_parameters", index, "effect"),
                    "magnitude": inline(row.magnitude, "hardware_parameters", index, "magnitude"),
                }
                for index, row in enumerate(record.hardware_parameters)
            ],
            affected_by_hardware=[page.ref_link(ref) for ref in record.affected_by_hardware],
            workarounds=[prose(text, "workarounds", index) for index, text in enumerate(record.workarounds)],
        )
    elif isinstance(record, FactRecord):
        context["statement"] = prose(record.statement, "statement")
    elif isinstance(record, EngineRecord):
        context.update(
            description=prose(record.description, "description"),
            homepage=safe_url(record.homepage) if record.homepage else None,
            features=list(record.features),
        )
    elif isinstance(record, AcceleratorRecord):
        context.update(accelerator_context(site, page, entry))
    elif isinstance(record, SourceRecord):
        context.update(
            citation=page.citation(entry.id),
            url=safe_url(record.url) if record.url else None,
            authors=list(record.authors),
            year=record.year,
            venue=record.venue,
            measurements=measurement_rows(page, record),
        )
    rest = [view for path, views in errata.items() if path not in shown for view in views]
    context["errata_elsewhere"] = Markup(notes_html(rest)) if rest else None
    if kind in ("flop", "fact"):
        context["formulas"] = formula_views(site, page, entry)
        context["disagreements"] = disagreement_notice(page, site.kb.formulas.get(entry.id, ()))
    context["front_description"] = front_matter_title(description(context))
    return context


def hardware_row_view(site: Site, page: Page, index: int, row: Any) -> dict[str, Any]:
    parameter = site.vocabulary.parameters.get(row.parameter) if site.vocabulary else None
    return {
        "anchor": f"hardware_parameters.{index}",
        "parameter": row.parameter,
        "parameter_description": parameter.description if parameter else "",
        "effect": page.inline(row.effect),
        "magnitude": page.inline(row.magnitude),
        "basis": row.basis,
        "values_for": [page.ref_link(ref, f"specs.{row.parameter}") for ref in row.values_for],
        "sources": page.citations(row.sources),
    }


def evidence_view(site: Site, page: Page, record_id: str) -> dict[str, Any]:
    evidence = site.kb.evidence
    if evidence is None:
        return {
            "status": NO_SOURCES,
            "standing": NO_SOURCES,
            "meaning": "",
            "own": [],
            "inherited": [],
            "simulated": [],
        }
    status = evidence.of(record_id)
    standing = evidence.standing(record_id)
    record = site.record(record_id)
    own = [
        {
            "label": figure_words(item.path, item.parameter),
            "href": "#" + fragment(debt_anchor(item.path)),
            "dependents": [page.link(other) for other in evidence.dependents.get(item, ()) if other in site.entries],
        }
        for item in status.own
    ]
    inherited = [
        {
            "figure": page.link(debt.item.record, debt_anchor(debt.item.path)),
            "label": figure_words(debt.item.path, debt.item.parameter),
            "via": [page.link(other) for other in debt.via[:-1] if other in site.entries],
            "claim": figure_words(debt.claim, None, record),
            "claim_href": "#" + fragment(debt_anchor(debt.claim, record)),
        }
        for debt in status.inherited
    ]
    simulated = [
        {
            "claim": figure_words(found.claim, None, record),
            "claim_href": "#" + fragment(debt_anchor(found.claim, record)),
            "measurement": page.link(found.source, found.measurement),
            "where": found.where,
        }
        for found in status.simulated
    ]
    return {
        "status": status.status,
        "standing": standing,
        "meaning": STANDING_MEANINGS[standing],
        "errata": len(status.errata),
        "own": own,
        "inherited": inherited,
        "simulated": simulated,
    }


def backlinks_view(site: Site, page: Page, record_id: str) -> list[dict[str, Any]]:
    """The records that link here, by kind then title, each with what its links do."""
    if site.graph is None or record_id not in site.graph:
        return []
    pred = site.graph.pred[record_id]
    sort_key = site.sort_keys
    found = []
    for source in sorted(
        (source for source in pred if source != record_id and source in sort_key), key=sort_key.__getitem__
    ):
        words = [ORIGIN_WORDS.get(origin, origin) for origin in pred[source]["origins"]]
        found.append({"link": page.link(source), "how": ", ".join(dict.fromkeys(words))})
    return found


def neighbourhood_data(
    site: Site, page: Page, record_id: str, limit: int = NEIGHBOURHOOD_LIMIT
) -> dict[str, Any] | None:
    """The record and the records it links to or from, at most `limit` of them (its own links first), as graph JSON."""
    graph = site.graph
    if graph is None or record_id not in graph:
        return None
    chosen: dict[str, None] = {record_id: None}
    for group in (graph.succ[record_id], graph.pred[record_id]):
        for other in sorted(group):
            if len(chosen) > limit:
                break
            if other in site.entries:
                chosen.setdefault(other, None)
    sort_key = site.sort_keys
    around = sorted((node for node in chosen if node != record_id), key=sort_key.__getitem__)
    positions = ring_positions(len(around))
    nodes = [{"id": record_id, "label": site.titles[record_id], "kind": site.kinds[record_id], "x": 0.0, "y": 0.0}]
    nodes += [
        {"id": node, "label": site.titles[node], "kind": site.kinds[node], "href": page.href(node), "x": x, "y": y}
        for node, (x, y) in zip(around, positions, strict=True)
    ]
    edges = []
    for node in chosen:
        for target in graph.succ[node]:
            if target in chosen and target != node:
                edges.append({"source": node, "target": target})
    edges.sort(key=lambda edge: (edge["source"], edge["target"]))
    linked = len((set(graph.succ[record_id]) | set(graph.pred[record_id])) - {record_id})
    return {"focus": record_id, "nodes": nodes, "edges": edges, "more": max(0, linked - (len(chosen) - 1))}


@functools.lru_cache(maxsize=128)
def ring_positions(count: int) -> list[tuple[float, float]]:
    """Where the neighbours of a record go around it: an ellipse wider than tall (labels are wide), every other
    node pushed out a little so that neighbouring labels do not overlap, starting at the top, clockwise."""
    if count == 0:
        return []
    width = max(150.0, 34.0 * count)
    height = max(90.0, 13.0 * count)
    found = []
    for index in range(count):
        angle = -math.pi / 2 + 2 * math.pi * index / count
        stretch = 1.0 if index % 2 == 0 or count < 6 else 1.22
        found.append((round(width * stretch * math.cos(angle), 1), round(height * stretch * math.sin(angle), 1)))
    return found


def neighbourhood_json(site: Site, page: Page, record_id: str) -> Markup | None:
    data = neighbourhood_data(site, page, record_id)
    if data is None or len(data["nodes"]) < 2:
        return None
    return json_for_script(data)


def render_records(site: Site, ids: Iterable[str]) -> dict[str, list[str]]:
    """Render these records' pages (and their charts, link previews and alias redirects); return the files of each."""
    written = site.result.written
    files = {}
    for record_id in ids:
        entry = site.entries[record_id]
        start = len(written)
        context = record_context(site, entry)
        site.render(f"record/{context['kind']}.md.j2", record_path(record_id), **context)
        site.write(preview_path(record_id), preview_script(site, record_id, context))
        for alias in redirected_aliases(site, record_id):
            site.write(redirect_path(alias), redirect_html(site, alias, record_id))
        files[record_id] = written[start:]
    return files

"""Render a compiled knowledge base into the docs folder that mkdocs builds: a markdown page per record and the index pages.

    from flopkb.site.render import render_docs
    result = render_docs(kb, "build/docs")   # kb from compile_knowledge_base(config, CHECK_STAGES)

Layout of the docs folder (each `.md` becomes `.html`, `use_directory_urls: false`):

| path | what |
| --- | --- |
| `index.md` | home: what the base holds, by kind and category |
| `kinds/<kind>.md`, `categories/<term>.md` | an index per kind and per category |
| `records/<id>.md` | one page per record |
| `accelerators/compare.md` | every accelerator side by side, all rooflines on one chart |
| `graph.md`, `graph.json` | the link graph of the whole base |
| `evidence.md` | every unverified figure and the records that rest on it |
| `codes.md` | the diagnostic codes |
| `charts/**.svg` | rooflines and formula sweeps, static SVG |

Pages are jinja2 templates (`site/templates/`, see `template_dirs`) that write
markdown: headings in markdown, so that mkdocs builds the table of contents
and search sections, and everything else as raw HTML blocks, which
python-markdown passes through. Record text reaches a page only through
`flopkb.site.sanitize` (prose as sanitised HTML, heading text as character
references) or jinja2's autoescape.

This module holds the per-page helpers (`Page`: relative URLs, wikilinks,
prose) and the record pages; formulas are in `render_formulas`, accelerators
and rooflines in `render_hardware`, index pages in `render_index`, the graph
page in `render_graph`. Every page costs O(its own size): no page walks the
whole base (backlinks and neighbourhoods are adjacency lookups, shared
indexes are built once).
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from flopkb.links.resolver import Resolver
from flopkb.load.models import is_url
from flopkb.site.mkdocs import SITE_ROOT
from flopkb.site.sanitize import inline_html, markdown_text, prose_html, safe_url

if TYPE_CHECKING:
    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase
    from flopkb.links.wikilinks import WikiLink

TEMPLATES = "templates"
KIND_ORDER = ("flop", "fact", "engine", "accelerator", "source")
KIND_TITLES = {
    "flop": "Flop classes",
    "fact": "Facts",
    "engine": "Engines",
    "accelerator": "Accelerators",
    "source": "Sources",
}
NEIGHBOURHOOD_LIMIT = 24
"""At most this many neighbours in a record's neighbourhood graph (its own links first, then backlinks)."""
WRITERS = 6
"""Threads that write the docs folder's files."""
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
STATUS_WORDS = {
    "verified": "verified",
    "own-debt": "has unverified figures",
    "inherited-debt": "rests on unverified figures",
}


# ---------------------------------------------------------------------------
# Templates


def template_dirs(root: Path | None = None, site_root: Path = SITE_ROOT) -> list[Path]:
    """Where page templates are looked up, first match wins: the knowledge base's `site/templates/`, then flopkb's own.

    A knowledge base overrides one template by putting a file of the same
    name in its own `site/templates/`; every other template comes from the
    defaults in flopkb's repository (`site/templates/`).
    """
    found: list[Path] = []
    for candidate in ([root / "site" / TEMPLATES] if root is not None else []) + [site_root / TEMPLATES]:
        resolved = candidate.resolve()
        if resolved.is_dir() and resolved not in found:
            found.append(resolved)
    return found


_CSS_WORD = re.compile(r"[^a-z0-9_-]+")


def css_word(value: object) -> str:
    """A term as a CSS class suffix: lower case, `[a-z0-9_-]` only."""
    return _CSS_WORD.sub("-", str(value).lower()).strip("-") or "other"


# The small inline pieces every page repeats many times (a link per backlink, a
# badge per row) are filters written in Python: a jinja2 macro call costs
# several times more, and on a base of 10,000 records that adds up.


def link_html(link: RecordLink) -> Markup:
    """`<a href>title</a>`, or the title alone (marked) when the link resolves to nothing."""
    if link.href:
        return Markup(f'<a href="{escape(link.href)}">{escape(link.title)}</a>')
    return Markup(f'<span class="flopkb-unresolved">{escape(link.title)}</span>')


def links_html(links: Iterable[RecordLink]) -> Markup:
    return Markup(", ".join([link_html(link) for link in links]))


@functools.lru_cache(maxsize=256)
def kind_chip_html(kind: str) -> Markup:
    return Markup(f'<span class="flopkb-kind flopkb-kind--{css_word(kind)}">{escape(kind)}</span>')


@functools.lru_cache(maxsize=256)
def badge_html(basis: str) -> Markup:
    return Markup(f'<span class="flopkb-badge flopkb-badge--{css_word(basis)}">{escape(basis)}</span>')


def heading_id(value: str) -> Markup:
    """The attribute list that gives a markdown heading its id: `{: #id }` (ids made here are safe)."""
    return Markup("{: #" + re.sub(r"[^A-Za-z0-9_.:-]", "-", value) + " }")


_ENVIRONMENTS: dict[tuple[Path, ...], tuple[tuple[tuple[str, int, int], ...], jinja2.Environment]] = {}


def _template_files(dirs: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    return tuple(
        sorted(
            (str(path), stat.st_mtime_ns, stat.st_size)
            for folder in dirs
            for path in folder.rglob("*")
            for stat in [path.stat()]
            if path.is_file()
        )
    )


def environment(dirs: Sequence[Path]) -> jinja2.Environment:
    """The environment for these template folders, kept for the process while no template file changes.

    Templates are compiled once; `flopkb serve` rebuilds with warm templates
    and gets a fresh environment when a template is edited. (jinja2's own
    auto_reload would check every template's file on every page instead.)
    """
    key = tuple(dirs)
    files = _template_files(dirs)
    found = _ENVIRONMENTS.get(key)
    if found is None or found[0] != files:
        found = _ENVIRONMENTS[key] = (files, make_environment(dirs))
    return found[1]


def make_environment(dirs: Sequence[Path]) -> jinja2.Environment:
    """The jinja2 environment of the page templates: autoescape on, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(d) for d in dirs]),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
    )
    env.filters["md"] = lambda value: Markup(markdown_text(str(value)))
    env.filters["link"] = link_html
    env.filters["links"] = links_html
    env.filters["kind_chip"] = kind_chip_html
    env.filters["badge"] = badge_html
    env.filters["css"] = css_word
    env.filters["heading_id"] = heading_id
    env.globals["KIND_TITLES"] = KIND_TITLES
    env.globals["STATUS_WORDS"] = STATUS_WORDS
    return env


def json_for_script(data: Any) -> Markup:
    """JSON for a `<script type="application/json">` element: `<`, `>` and `&` escaped, so no text can end the element.

    Keys stay in the order the data was built in (deterministic: it is built in a fixed order)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


def front_matter_title(title: str) -> Markup:
    """The page title for mkdocs' front matter: HTML-escaped (Material prints it unescaped), as a JSON string (valid YAML)."""
    return Markup(json.dumps(html.escape(" ".join(title.split()), quote=True)))


# ---------------------------------------------------------------------------
# The site and its pages


@dataclass(frozen=True, slots=True)
class RecordLink:
    id: str
    title: str
    kind: str
    href: str


@dataclass(frozen=True, slots=True)
class Citation:
    """A source as readers cite it: a source record's authors, year, title and venue, or a bare URL."""

    text: str
    href: str | None = None
    """The source record's page, when the source is a record."""
    url: str | None = None
    """Where to read it (http(s) only)."""
    authors: str | None = None
    year: int | None = None
    venue: str | None = None


@dataclass(slots=True)
class RenderResult:
    docs_dir: Path
    written: list[str] = field(default_factory=list)
    """Every file written, relative to docs_dir, in writing order."""
    nav: list[Any] = field(default_factory=list)


class Site:
    """One rendering of a compiled knowledge base: shared lookups, built once, and the docs folder being written."""

    def __init__(self, kb: KnowledgeBase, docs_dir: Path, env: jinja2.Environment) -> None:
        self.kb = kb
        self.docs_dir = Path(docs_dir)
        self.env = env
        self.resolver = Resolver.of(kb)
        self.config = kb.config
        self.entries: dict[str, Entry] = {
            record_id: entry for record_id, entry in kb.entries.items() if entry.record is not None
        }
        self.titles = {record_id: entry.record.display_title for record_id, entry in self.entries.items()}  # type: ignore[union-attr]
        self.kinds = {record_id: entry.record.kind for record_id, entry in self.entries.items()}  # type: ignore[union-attr]
        self.vocabulary = kb.vocabulary
        self.graph = kb.graph.graph if kb.graph is not None else None
        self.result = RenderResult(self.docs_dir)
        self._made: set[Path] = set()
        self._writer = ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix="flopkb-write")
        self._writes: list[Future[None]] = []
        self._templates: dict[str, jinja2.Template] = {}
        self.cache: dict[str, Any] = {}
        """Indexes that several pages share, built on first use (e.g. the formulas computed on each accelerator)."""
        self.category_paths = category_paths(self.vocabulary.categories if self.vocabulary else {}, self.entries)
        order = {kind: index for index, kind in enumerate(KIND_ORDER)}
        self.sort_keys = {
            record_id: (order.get(kind, len(order)), self.titles[record_id].lower(), record_id)
            for record_id, kind in self.kinds.items()
        }
        """Records in reading order: by kind, then title."""

    # -- files -------------------------------------------------------------

    def write(self, rel: str, text: str | bytes) -> None:
        """Write a file of the docs folder. Files are written by a few threads: creating a file is a system
        call that releases the GIL, and on slow file systems it costs more than rendering the page."""
        path = self.docs_dir / rel
        parent = path.parent
        if parent not in self._made:
            parent.mkdir(parents=True, exist_ok=True)
            self._made.add(parent)
        data = text.encode("utf-8") if isinstance(text, str) else text
        self._writes.append(self._writer.submit(_write_file, path, data))
        if len(self._writes) > 256:
            self._drain(128)
        self.result.written.append(rel)

    def _drain(self, keep: int = 0) -> None:
        while len(self._writes) > keep:
            self._writes.pop(0).result()  # re-raises a failed write

    def close(self) -> None:
        """Wait for every file to be written (raising the first failure) and stop the writers."""
        try:
            self._drain()
        finally:
            self._writer.shutdown(wait=True, cancel_futures=True)

    def template(self, name: str) -> jinja2.Template:
        found = self._templates.get(name)
        if found is None:
            found = self._templates[name] = self.env.get_template(name)
        return found

    def render(self, template: str, rel: str, **context: Any) -> None:
        self.write(rel, self.template(template).render(**context))

    def page(self, rel: str) -> Page:
        return Page(self, rel)

    # -- lookups -----------------------------------------------------------

    def record(self, record_id: str) -> Any:
        entry = self.entries.get(record_id)
        return entry.record if entry is not None else None

    def repo_file_url(self, path: str) -> str | None:
        repo = self.config.site.repo_url
        url = safe_url(repo.rstrip("/") + "/blob/HEAD/" + path) if repo else None
        return url if url and url.startswith(("http://", "https://")) else None


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def record_path(record_id: str) -> str:
    """The markdown path of a record's page in the docs folder."""
    return f"records/{record_id}.md"


def html_path(rel: str) -> str:
    return rel[:-3] + ".html" if rel.endswith(".md") else rel


def category_paths(categories: Iterable[str], entries: dict[str, Any]) -> dict[str, str]:
    """Category term -> its index page, with file names safe and distinct whatever the terms are."""
    used: set[str] = set()
    paths: dict[str, str] = {}
    for term in sorted(set(categories) | {getattr(e.record, "category", None) for e in entries.values()} - {None}):
        base = css_word(term)
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}-{n}"
        used.add(name)
        paths[term] = f"categories/{name}.md"
    return paths


class Page:
    """One page being written: relative URLs from it, and record text rendered for it."""

    __slots__ = ("rel", "root", "site")

    def __init__(self, site: Site, rel: str) -> None:
        self.site = site
        self.rel = rel
        self.root = "../" * rel.count("/")
        """The relative URL of the site's root from this page ("" or "../../")."""

    def url(self, rel: str, anchor: str | None = None) -> str:
        """The URL of another file of the docs folder (a `.md` path is its `.html`), relative to this page."""
        href = self.root + html_path(rel)
        return f"{href}#{_fragment(anchor)}" if anchor else href

    def href(self, record_id: str, anchor: str | None = None) -> str:
        return self.url(record_path(record_id), anchor)

    def link(self, record_id: str, anchor: str | None = None) -> RecordLink:
        site = self.site
        return RecordLink(
            record_id,
            site.titles.get(record_id, record_id),
            site.kinds.get(record_id, ""),
            self.href(record_id, anchor),
        )

    def ref_link(self, ref: str, anchor: str | None = None) -> RecordLink:
        """A typed ref as a link (unresolved refs, possible only when their codes are turned down, link nowhere)."""
        found = self.site.resolver.target(ref)
        if found is None or found not in self.site.entries:
            return RecordLink(ref, ref, "", "")
        return self.link(found, anchor)

    # -- record text -------------------------------------------------------

    def _wikilink(self, link: WikiLink) -> tuple[str | None, str]:
        site = self.site
        found = site.resolver.target(link.target)
        if found is None or found not in site.entries:
            return None, link.label or (link.target + (f"#{link.anchor}" if link.anchor else ""))
        label = link.label
        if not label:
            label = site.titles[found]
            if link.anchor:
                formula = next(
                    (f for f in getattr(site.entries[found].record, "formulas", ()) if f.id == link.anchor), None
                )
                if formula is not None:
                    label = f"{label}: {formula.title or formula.id}"
                measurement = next(
                    (m for m in getattr(site.entries[found].record, "measurements", ()) if m.id == link.anchor), None
                )
                if measurement is not None:
                    label = f"{label}, {measurement.where}"
        return self.href(found, link.anchor), label

    def prose(self, text: str | None) -> Markup:
        """A markdown field as sanitised HTML, its wikilinks working links."""
        return Markup(prose_html(text, self._wikilink)) if text else Markup("")

    def inline(self, text: str | None) -> Markup:
        """Like `prose`, without a lone paragraph's `<p>` (table cells)."""
        return Markup(inline_html(text, self._wikilink)) if text else Markup("")

    def citation(self, ref: str) -> Citation:
        if is_url(ref):
            return Citation(ref, url=safe_url(ref))
        site = self.site
        found = site.resolver.target(ref)
        record = site.record(found) if found else None
        if record is None or record.kind != "source":
            return Citation(
                site.titles.get(found, ref) if found else ref, href=self.href(found) if found in site.entries else None
            )
        return Citation(
            record.display_title,
            href=self.href(found),
            url=safe_url(record.url) if record.url else None,
            authors=author_list(record.authors),
            year=record.year,
            venue=record.venue,
        )

    def citations(self, refs: Iterable[str]) -> list[Citation]:
        return [self.citation(ref) for ref in refs]


def _fragment(anchor: str) -> str:
    from urllib.parse import quote

    return quote(anchor, safe="-._~:")


def author_list(authors: Sequence[str]) -> str | None:
    """`A`, `A and B`, `A, B and C`; more than six: the first three and "et al."."""
    names = [" ".join(name.split()) for name in authors if name.strip()]
    if not names:
        return None
    if len(names) > 6:
        return ", ".join(names[:3]) + " et al."
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ---------------------------------------------------------------------------
# Record pages


def record_context(site: Site, entry: Entry) -> dict[str, Any]:
    """Everything a record template needs, as plain values, links and sanitised HTML."""
    from flopkb.site.formulas import formula_views
    from flopkb.site.hardware import accelerator_context
    from flopkb.site.measurements import disagreement_notice, measurement_rows

    record = entry.record
    assert record is not None
    rel = record_path(entry.id)
    page = site.page(rel)
    title = record.display_title
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
        "tags": list(record.tags),
        "aliases": list(record.aliases),
        "notes": page.prose(record.notes),
        "sources": page.citations(record.sources),
        "evidence": evidence_view(site, page, entry.id),
        "backlinks": backlinks_view(site, page, entry.id),
        "backlinks_open": BACKLINKS_OPEN,
        "neighbourhood": neighbourhood_json(site, page, entry.id),
        "kind_index": page.url(f"kinds/{record.kind}.md"),
        "disagreements": [],
    }
    kind = record.kind
    if kind == "flop":
        category = record.category
        context.update(
            category=category,
            category_href=page.url(site.category_paths[category]) if category in site.category_paths else "",
            category_description=(site.vocabulary.categories.get(category, "") if site.vocabulary else ""),
            description=page.prose(record.description),
            scales_with=[{"factor": row.factor, "effect": page.inline(row.effect)} for row in record.scales_with],
            hardware_parameters=[
                hardware_row_view(site, page, index, row) for index, row in enumerate(record.hardware_parameters)
            ],
            affected_by_hardware=[page.ref_link(ref) for ref in record.affected_by_hardware],
            workarounds=[page.prose(text) for text in record.workarounds],
        )
    elif kind == "fact":
        context["statement"] = page.prose(record.statement)
    elif kind == "engine":
        context.update(
            description=page.prose(record.description),
            homepage=safe_url(record.homepage) if record.homepage else None,
            features=list(record.features),
        )
    elif kind == "accelerator":
        context.update(accelerator_context(site, page, entry))
    elif kind == "source":
        context.update(
            citation=page.citation(entry.id),
            url=safe_url(record.url) if record.url else None,
            authors=list(record.authors),
            year=record.year,
            venue=record.venue,
            measurements=measurement_rows(page, record),
        )
    if kind in ("flop", "fact"):
        context["formulas"] = formula_views(site, page, entry)
        context["disagreements"] = disagreement_notice(page, site.kb.formulas.get(entry.id, ()))
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


def debt_anchor(path: tuple[Any, ...], record: Any = None) -> str:
    """The anchor of a figure or claim on its record's page: `specs.<parameter>`, `hardware_parameters.<i>`, a formula id."""
    if path[0] == "formulas" and record is not None:
        formulas = getattr(record, "formulas", ())
        return formulas[path[1]].id if path[1] < len(formulas) else "Formulas"
    return ".".join(str(part) for part in path[:2])


def evidence_view(site: Site, page: Page, record_id: str) -> dict[str, Any]:
    evidence = site.kb.evidence
    if evidence is None:
        return {"status": "verified", "own": [], "inherited": [], "simulated": []}
    status = evidence.of(record_id)
    record = site.record(record_id)
    own = [
        {
            "label": item.label,
            "href": "#" + _fragment(debt_anchor(item.path)),
            "dependents": [page.link(other) for other in evidence.dependents.get(item, ()) if other in site.entries],
        }
        for item in status.own
    ]
    inherited = [
        {
            "figure": page.link(debt.item.record, debt_anchor(debt.item.path)),
            "label": debt.item.label,
            "via": [page.link(other) for other in debt.via[:-1] if other in site.entries],
            "claim": debt_anchor(debt.claim, record),
            "claim_href": "#" + _fragment(debt_anchor(debt.claim, record)),
        }
        for debt in status.inherited
    ]
    simulated = [
        {
            "claim": debt_anchor(found.claim, record),
            "claim_href": "#" + _fragment(debt_anchor(found.claim, record)),
            "measurement": page.link(found.source, found.measurement),
            "where": found.where,
        }
        for found in status.simulated
    ]
    return {"status": status.status, "own": own, "inherited": inherited, "simulated": simulated}


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
        for node, (x, y) in zip(around, positions)
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


def render_records(site: Site, ids: Iterable[str] | None = None) -> None:
    for record_id in sorted(site.entries) if ids is None else ids:
        entry = site.entries[record_id]
        context = record_context(site, entry)
        site.render(f"record/{entry.record.kind}.md.j2", record_path(record_id), **context)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------
# Record pages in several processes (large bases)

PARALLEL_FROM = 2000
"""Bases of at least this many records render their record pages in worker processes."""
MAX_RENDER_WORKERS = 4

_FORKED: tuple[KnowledgeBase, Path, jinja2.Environment] | None = None
"""What a forked worker renders from: set in the parent just before the fork, inherited by the workers."""


def _render_share(ids: list[str]) -> list[str]:
    """In a worker: render these records' pages (and their charts); return the files written."""
    assert _FORKED is not None
    kb, docs_dir, env = _FORKED
    site = Site(kb, docs_dir, env)
    try:
        render_records(site, ids)
    finally:
        site.close()
    return site.result.written


def render_workers(records: int) -> int:
    """How many worker processes render record pages: none below PARALLEL_FROM records or on one core."""
    import multiprocessing
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if records < PARALLEL_FROM or cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    return min(cores, MAX_RENDER_WORKERS)


# ---------------------------------------------------------------------------
# The whole docs folder


def render_docs(
    kb: KnowledgeBase,
    docs_dir: str | Path,
    *,
    template_root: Path | None = None,
    site_root: Path = SITE_ROOT,
    parallel: bool = True,
) -> RenderResult:
    """Write every page, chart and data file of the site into `docs_dir` (which should be empty) and return the nav.

    With `parallel` (the default), a base of PARALLEL_FROM records or more renders its record pages in
    worker processes (`render_workers`)."""
    from flopkb.site.graph import render_graph_page
    from flopkb.site.hardware import render_compare_page
    from flopkb.site.index import render_index_pages

    global _FORKED
    root = template_root if template_root is not None else kb.config.root
    env = environment(template_dirs(root, site_root))
    site = Site(kb, Path(docs_dir), env)
    site.docs_dir.mkdir(parents=True, exist_ok=True)
    workers = render_workers(len(site.entries)) if parallel else 0
    pool = shares = None
    if workers:
        # Record pages are independent of each other: a large base renders them in forked workers (which
        # inherit the compiled base) while this process writes the index pages. Forked before this process
        # starts its writer threads. Each page's bytes do not depend on which process wrote it.
        import multiprocessing

        ids = sorted(site.entries)
        _FORKED = (kb, site.docs_dir, env)
        pool = multiprocessing.get_context("fork").Pool(workers)
        shares = pool.map_async(_render_share, [ids[start::workers] for start in range(workers)])
    try:
        if pool is None:
            render_records(site)
        render_compare_page(site)
        render_graph_page(site)
        site.result.nav = render_index_pages(site)
        if pool is not None and shares is not None:
            for written in shares.get():
                site.result.written.extend(written)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
            _FORKED = None
        site.close()
    return site.result

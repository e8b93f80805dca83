"""The site's shared page types and helpers, below every renderer: the `Site` being written, a `Page`'s relative
URLs, wikilinks and prose, the link and badge filters, and the page templates' jinja2 environment.

Pages are jinja2 templates (`site/templates/`, see `template_dirs`) that write
markdown: headings in markdown, so that mkdocs builds the table of contents
and search sections, and everything else as raw HTML blocks, which
python-markdown passes through (mkdocs writes pages of that form without
python-markdown: `flopkb.site.incremental.prerendered`). Record text reaches a page only through
`flopkb.site.sanitize` (prose as sanitised HTML, heading text as character
references) or jinja2's autoescape.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from flopkb.links.debt import INHERITED_DEBT, OWN_DEBT, STANDING_WORDS
from flopkb.links.resolver import Resolver
from flopkb.load.models import is_url
from flopkb.site.incremental.state import PageKeys, link_files
from flopkb.site.publishing.mkdocs import SITE_ROOT
from flopkb.site.sandbox import Sandbox, template_failure
from flopkb.site.sanitize import inline_html, markdown_text, prose_html, safe_url

if TYPE_CHECKING:
    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase
    from flopkb.site.incremental.state import BuildState
    from flopkb.site.pages.last_changed import LastChange


TEMPLATES = "templates"
KIND_ORDER = ("flop", "fact", "engine", "accelerator", "source")
KIND_TITLES = {
    "flop": "Flop classes",
    "fact": "Facts",
    "engine": "Engines",
    "accelerator": "Accelerators",
    "source": "Sources",
}
WRITERS = 6
"""Threads that write the docs folder's files."""

STATUS_WORDS = {
    **STANDING_WORDS,
    OWN_DEBT: "has unverified figures",
    INHERITED_DEBT: "rests on unverified figures",
}
"""What a badge says: a record's standing (`flopkb.links.debt.STANDINGS`), or which of its figures are debt."""


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


_BREAK_AFTER = re.compile(r"(?<=[/-])(?=.)")


def breakable(value: object) -> Markup:
    """An id, path or URL that may wrap only after a `/` or `-` (`<wbr>` there): never inside a word."""
    return Markup("<wbr>").join(escape(part) for part in _BREAK_AFTER.split(str(value)))


def reader_title(record: Any) -> str:
    """The title readers see: the record's own, or else the spec's default, its id's last segment, made readable:
    hyphens and underscores as spaces, the first letter capitalised (`sd-batch-dilution-problem` -> "Sd batch
    dilution problem"); its words are the author's, nothing else is changed."""
    return titled(record.title, record.id)


def titled(title: str | None, record_id: str) -> str:
    """`reader_title` of a record with this title (None: untitled) and id."""
    if title:
        return str(title)
    words = " ".join(record_id.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ").split())
    return words[:1].upper() + words[1:]


def heading_id(value: str) -> Markup:
    """The attribute list that gives a markdown heading its id: `{: #id }` (ids made here are safe). Its `_` are
    escaped: python-markdown reads the heading's inline markup before attr_list reads the id, so a formula id
    like `_a_` would be emphasis and leave the heading without its id."""
    return Markup("{: #" + re.sub(r"[^A-Za-z0-9_.:-]", "-", value).replace("_", "\\_") + " }")


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
    """The jinja2 environment of the page templates: sandboxed (a base's templates are a pull request's files),
    autoescape on, strict about undefined names."""
    env = Sandbox(
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
    env.filters["breakable"] = breakable
    env.globals["KIND_TITLES"] = KIND_TITLES
    env.globals["STATUS_WORDS"] = STATUS_WORDS
    return env


def json_for_script(data: Any) -> Markup:
    """JSON as the text of an HTML element: `<`, `>` and `&` escaped, so no text can end the element or be read as a
    character reference. (Graph data is held in a hidden `<div>`, not a `<script type="application/json">`: Material's
    instant navigation runs every script of a page it swaps in as JavaScript, whatever its type.)

    Keys stay in the order the data was built in (deterministic: it is built in a fixed order)."""
    return Markup(escaped_json(data))


def escaped_json(data: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON whose `<`, `>` and `&` are escaped: inert inside an HTML element, and as a file that a host serves
    as HTML or that a browser sniffs (record titles are a pull request's text)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def front_matter_title(title: str) -> Markup:
    """The page title for mkdocs' front matter: HTML-escaped (Material prints it unescaped), as a JSON string."""
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
    digests: dict[str, str] = field(default_factory=dict)
    """The digest of every file of the docs folder, written or kept (see `file_digest`)."""
    records: dict[str, tuple[str | None, list[str]]] = field(default_factory=dict)
    """Per record: the key its page was rendered under (`flopkb.site.incremental.keys`) and the files of its page."""
    base: str = ""
    """The key every record page shares (`flopkb.site.incremental.keys.base_key`)."""
    rendered: list[str] = field(default_factory=list)
    """The records whose pages were rendered (not kept from the previous build), sorted."""
    pages: dict[str, str] = field(default_factory=dict)
    """Listing pages (kind and category indexes) -> the key they were rendered under (`Site.keep`)."""
    keys: PageKeys = field(default_factory=PageKeys)
    """Every record page's key, what it read, and every record's fingerprint
    (`flopkb.site.incremental.keys.page_keys`)."""


class Site:
    """One rendering of a compiled knowledge base: shared lookups, built once, and the docs folder being written."""

    def __init__(self, kb: KnowledgeBase, docs_dir: Path, env: jinja2.Environment) -> None:
        self.kb = kb
        self.docs_dir = Path(docs_dir)
        self.env = env
        self.resolver = Resolver.of(kb)
        self.config = kb.config
        # From the entries' summaries: the models of unchanged records stay unloaded (`Entry.deferred`).
        summaries = {record_id: entry.summary for record_id, entry in kb.entries.items()}
        self.entries: dict[str, Entry] = {
            record_id: kb.entries[record_id] for record_id, summary in summaries.items() if summary.kind is not None
        }
        self.titles = {record_id: titled(summaries[record_id].title, record_id) for record_id in self.entries}
        self.kinds = {record_id: str(summaries[record_id].kind) for record_id in self.entries}
        self.vocabulary = kb.vocabulary
        self.graph = kb.graph.graph if kb.graph is not None else None
        self.result = RenderResult(self.docs_dir)
        self._made: set[Path] = set()
        self._writer = ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix="flopkb-write")
        self._writes: list[Future[None]] = []
        self._templates: dict[str, jinja2.Template] = {}
        self.kept_from: tuple[BuildState, Path, bool] | None = None
        """The previous build's state and docs folder when it was rendered under the same base key, and whether
        kept files are hard-linked from there (`flopkb.site.render.render_docs`)."""
        self.changes: dict[str, LastChange] | None = None
        """Each record file's last change in git history (`flopkb.site.pages.last_changed`), None outside git: set by
        `flopkb.site.render.render_docs`, once per build."""
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
        self.result.digests[rel] = file_digest(data)
        self._writes.append(self._writer.submit(_write_file, path, data))
        if len(self._writes) > 256:
            self._drain(128)
        self.result.written.append(rel)

    def _drain(self, keep: int = 0) -> None:
        while len(self._writes) > keep:
            self._writes.pop(0).result()  # re-raises a failed write

    def flush(self) -> None:
        """Wait for every file written so far to be written (raising the first failure)."""
        self._drain()

    def close(self) -> None:
        """Wait for every file to be written (raising the first failure) and stop the writers."""
        try:
            self.flush()
        finally:
            self._writer.shutdown(wait=True, cancel_futures=True)

    def template(self, name: str) -> jinja2.Template:
        found = self._templates.get(name)
        if found is None:
            found = self._templates[name] = self.env.get_template(name)
        return found

    def render(self, template: str, rel: str, **context: Any) -> None:
        try:
            text = self.template(template).render(**context)
        except Exception as error:  # any: `{{ 1 // 0 }}` in a base's template is the template's failure
            raise template_failure(error, template) from error
        self.write(rel, text)

    def keep(self, key: str, *rels: str) -> bool:
        """Keep the previous build's files `rels` when they were all rendered under `key` (True); else the caller
        renders them all.

        For pages whose key (what they show of every record they list) costs far less than rendering them. Either
        way their key is recorded for the next build."""
        kept = self.kept_from is not None and all(self.kept_from[0].pages.get(rel) == key for rel in rels)
        self.result.pages.update(dict.fromkeys(rels, key))
        if not kept:
            return False
        assert self.kept_from is not None
        previous, docs, link = self.kept_from
        if link:
            link_files(docs, self.docs_dir, rels)
        self.result.digests.update((rel, previous.docs[rel]) for rel in rels)
        return True

    def page(self, rel: str) -> Page:
        return Page(self, rel)

    # -- lookups -----------------------------------------------------------

    def record(self, record_id: str) -> Any:
        entry = self.entries.get(record_id)
        return entry.record if entry is not None else None

    def accelerator_style(self, record_id: str | None) -> int | None:
        """The chart style (colour and dash) of an accelerator, the same on every chart of the site: its place among
        the base's accelerators by id (ids are in every page's key); None for anything else."""
        styles: dict[str, int] | None = self.cache.get("accelerator styles")
        if styles is None:
            ids = sorted(record_id for record_id, kind in self.kinds.items() if kind == "accelerator")
            styles = self.cache["accelerator styles"] = {record_id: place for place, record_id in enumerate(ids)}
        return styles.get(record_id) if record_id is not None else None

    def repo_file_url(self, path: str, action: str = "blob") -> str | None:
        """A file's page in the repository (`repo_url`), or its editor with `action="edit"` (GitHub's and GitLab's
        URL form); None without a repository URL."""
        repo = self.config.site.repo_url
        url = safe_url(f"{repo.rstrip('/')}/{action}/HEAD/{path}") if repo else None
        return url if url and url.startswith(("http://", "https://")) else None

    def repo_commit_url(self, sha: str) -> str | None:
        """A commit's page in the repository (`repo_url`, GitHub's and GitLab's URL form); None without one."""
        repo = self.config.site.repo_url
        url = safe_url(f"{repo.rstrip('/')}/commit/{sha}") if repo else None
        return url if url and url.startswith(("http://", "https://")) else None


def file_digest(data: bytes) -> str:
    """What a build compares to tell a changed file of the docs folder from a kept one."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def record_path(record_id: str) -> str:
    """The markdown path of a record's page in the docs folder."""
    return f"records/{record_id}.md"


def html_path(rel: str) -> str:
    return rel[:-3] + ".html" if rel.endswith(".md") else rel


TAGS_INDEX = "tags/index.md"


def tag_path(tag: str) -> str:
    """A tag's page in the docs folder, from the tag alone (so a page linking to it depends on nothing else): the
    tag itself when it is a safe file name, else its safe form and a digest of it."""
    word = css_word(tag)
    if word != tag or word == "index":
        word = f"{word}-{hashlib.blake2b(tag.encode(), digest_size=4).hexdigest()}"
    return f"tags/{word}.md"


def category_paths(categories: Iterable[str], entries: dict[str, Any]) -> dict[str, str]:
    """Category term -> its index page, with file names safe and distinct whatever the terms are."""
    used: set[str] = set()
    paths: dict[str, str] = {}
    written = {entry.summary.category for entry in entries.values()}
    for term in sorted(set(categories) | {category for category in written if isinstance(category, str)}):
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
        return f"{href}#{fragment(anchor)}" if anchor else href

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

    def _href_for(self, target: str, anchor: str | None) -> str | None:
        """Where a wikilink leads from this page; None when it resolves to no record."""
        site = self.site
        found = site.resolver.target(target)
        return self.href(found, anchor) if found is not None and found in site.entries else None

    def _label_for(self, target: str, anchor: str | None) -> str | None:
        """What a wikilink written without a label shows: its record's title, and the formula or measurement."""
        site = self.site
        found = site.resolver.target(target)
        if found is None or found not in site.entries:
            return None
        label = site.titles[found]
        if anchor:
            record = site.entries[found].record
            formula = next((f for f in getattr(record, "formulas", ()) if f.id == anchor), None)
            if formula is not None:
                label = f"{label}: {formula.title or formula.id}"
            measurement = next((m for m in getattr(record, "measurements", ()) if m.id == anchor), None)
            if measurement is not None:
                label = f"{label}, {measurement.where}"
        return label

    def prose(self, text: str | None) -> Markup:
        """A markdown field as sanitised HTML, its wikilinks working links."""
        return Markup(prose_html(text, self._href_for, self._label_for)) if text else Markup("")

    def inline(self, text: str | None) -> Markup:
        """Like `prose`, without a lone paragraph's `<p>` (table cells)."""
        return Markup(inline_html(text, self._href_for, self._label_for)) if text else Markup("")

    def citation(self, ref: str) -> Citation:
        if is_url(ref):
            return Citation(ref, url=safe_url(ref))
        site = self.site
        found = site.resolver.target(ref)
        record = site.record(found) if found else None
        if found is None or record is None or record.kind != "source":
            return Citation(
                site.titles.get(found, ref) if found else ref, href=self.href(found) if found in site.entries else None
            )
        return Citation(
            site.titles[found],
            href=self.href(found),
            url=safe_url(record.url) if record.url else None,
            authors=author_list(record.authors),
            year=record.year,
            venue=record.venue,
        )

    def citations(self, refs: Iterable[str]) -> list[Citation]:
        return [self.citation(ref) for ref in refs]


def fragment(anchor: str) -> str:
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


def figure_words(path: tuple[Any, ...], parameter: str | None = None, record: Any = None) -> str:
    """What readers call a figure or a claim (not its data path): `memory_bandwidth spec`, `hardware row 1
    (memory_bandwidth)`, a formula's id."""
    if path[0] == "specs":
        return f"{path[1]} spec"
    if path[0] == "hardware_parameters" and len(path) > 1 and isinstance(path[1], int):
        return f"hardware row {path[1] + 1}" + (f" ({parameter})" if parameter else "")
    return debt_anchor(path, record)


def debt_anchor(path: tuple[Any, ...], record: Any = None) -> str:
    """A figure's or claim's anchor on its page: `specs.<parameter>`, `hardware_parameters.<i>`, a formula id."""
    if path[0] == "formulas" and record is not None:
        formulas = getattr(record, "formulas", ())
        return formulas[path[1]].id if path[1] < len(formulas) else "Formulas"
    return ".".join(str(part) for part in path[:2])

"""The keys under which record pages are rendered: a page whose key is the previous build's is not rendered again.

A record page shows its own record and, of other records, what its links,
backlinks, neighbourhood graph, formulas and evidence reach. Its key is
made of everything it can read:

- the base key (`base_key`): flopkb's code and versions, the vocabulary
  (both in `flopkb.pipeline.shards.cache_key`), the page templates, the
  site settings, every id, kind and alias (`Resolver.signature`: what a link
  resolves to), and the category pages;
- the record's own file (its content digest), its last change in git
  history (`flopkb.site.pages.last_changed`: the date and commit its page
  shows), and its formulas' results (`_computed`): what it shows of every
  record its formulas compute with, through chains of formula refs (values,
  the spec figures used, claims), rather than those records' content (the
  `dependency_key`, `flopkb.links.memo`), so that an accelerator's edit
  renders again only the pages whose values it changes;
- every record it links to or is linked from, by any kind of link, with the
  origins of the links, and that record's *face* (`face`): what a page shows
  of the records it links to or from (kind, title, the names of its formulas
  and measurements in link labels, a source's citation, its own links for
  the neighbourhood graph); on an accelerator page, also every record whose
  formulas are evaluated on it (every record with formulas that computes
  with it), with its content digest and its formulas' results (the values
  shown);
- its evidence status as computed (own and inherited debt), and the content
  digest of every record that status names (the records resting on its
  figures, the records a debt reaches it through).

A record whose digest or dependency key is not known (loaded without the
load cache, or on a cycle of formula refs) has no key (None): its page is
always rendered. Index pages, the compare page and the graph page show the
whole base and are always rendered; the mkdocs stage then rebuilds only the
pages whose markdown changed (`flopkb.site.incremental.partial`).

Keys are computed again only where they can have changed (`page_keys`).
What a record shows of itself to the pages that read it is its
*fingerprint*: its content digest and its dependency key; the state keeps it
with the record's last change (`_printed`), so a commit that leaves a record's
content as it was still counts as a change of it. Given the previous
build's keys, the records each key read (`reads`) and every fingerprint, a
page's key can differ only if it read a record whose fingerprint changed, or
if a changed record came to be read by it: by linking to it or from it, by
computing with it (a formula evaluated on an accelerator, a figure its claims
rest on: both within what the changed record's dependency key reaches,
`flopkb.links.memo.reached`). A page reads most records (its links and
backlinks) by their face alone, and a changed record's face is often the same
(a prose edit, an accelerator's figures): then the pages that read no more of
it than its face (`beyond`: the records a key read their digest or results
of) keep their keys, and so do its neighbours in the link graph, whose links
with it are part of its face. So only the keys of the changed records and of
those reached that way are computed; the others are the previous build's
(`tests/site/test_keys.py` checks that this equals computing every key).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from flopkb.formulas.expr import Expr
from flopkb.formulas.regime import Condition
from flopkb.links.memo import dependency_key, reached
from flopkb.load.models import SourceRecord, formulas_of, measurements_of
from flopkb.pipeline.shards import cache_key
from flopkb.site.incremental.state import BuildState, PageKeys
from flopkb.site.pages.last_changed import last_change

if TYPE_CHECKING:  # not imported to run: `flopkb diff` reads faces without the site's templates and sanitizer
    from flopkb.site.pages.common import Site


def base_key(site: Site, template_dirs: Sequence[Path]) -> str:
    """What every record page depends on besides records (see the module)."""
    key = hashlib.blake2b(digest_size=16)
    key.update(cache_key(site.config, site.vocabulary))
    key.update(site.resolver.signature)
    key.update(repr((site.config.site, sorted(site.category_paths.items()))).encode())
    for folder in template_dirs:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            key.update(str(path.relative_to(folder)).encode() + b"\0")
            key.update(path.read_bytes())
    return key.hexdigest()


def page_keys(site: Site, base: str, previous: BuildState | None = None) -> PageKeys:
    """The key of every record page, computing only those that can differ from `previous`'s (see the module)."""
    same_base = previous is not None and previous.render_base == base
    ids = sorted(site.kb.entries)
    found = PageKeys(prints={record_id: _printed(site, record_id) for record_id in ids})
    kept_faces = previous.faces if previous is not None and same_base else {}
    found.faces = site.cache["faces"] = {
        record_id: _face(site, record_id, kept_faces.get(record_id)) for record_id in ids
    }
    todo: Sequence[str] = sorted(site.entries)
    if previous is not None and same_base:
        affected = _affected(site, found, previous)
        if affected is not None:
            for record_id in todo:
                if record_id not in affected:
                    found.keys[record_id] = previous.records[record_id][0]
                    found.reads[record_id] = previous.reads[record_id]
                    if record_id in previous.beyond:
                        found.beyond[record_id] = previous.beyond[record_id]
            todo = sorted(affected)
    for record_id in todo:
        key, reads, beyond = record_key(site, record_id, base)
        found.keys[record_id] = key
        found.reads[record_id] = sorted(reads)
        if beyond:
            found.beyond[record_id] = sorted(beyond)
    found.computed = len(todo)
    return found


def _affected(site: Site, found: PageKeys, previous: BuildState) -> set[str] | None:
    """The record pages whose keys can differ from `previous`'s, or None when that is not known (compute them all)."""
    prints = found.prints
    changed = {
        record_id for record_id, mine in prints.items() if mine is None or previous.prints.get(record_id) != mine
    }
    changed.update(previous.prints.keys() - prints.keys())
    # A changed record that shows the same face: the pages that read no more of it than its face keep their keys.
    same_face = {
        record_id
        for record_id in changed
        if prints.get(record_id) is not None
        and record_id in previous.faces
        and found.faces[record_id][1] == previous.faces[record_id][1]
    }
    readers: dict[str, list[str]] = {}
    for reader, reads in previous.reads.items():
        beyond = previous.beyond.get(reader, ())
        for record_id in reads:
            if record_id in changed and (record_id not in same_face or record_id in beyond):
                readers.setdefault(record_id, []).append(reader)
    affected = set(changed)
    graph = site.graph
    for record_id in changed:
        affected.update(readers.get(record_id, ()))
        if graph is not None and record_id in graph and record_id not in same_face:
            affected.update(graph.succ[record_id], graph.pred[record_id])
        if record_id in prints:
            computes_with = reached(site.kb, record_id)
            if computes_with is None:
                return None
            affected.update(computes_with)
    # A key that was not known (a record computing on an accelerator had no dependency key) may be known now.
    affected.update(record_id for record_id, (key, _files) in previous.records.items() if key is None)
    affected &= site.entries.keys()
    kept = site.entries.keys() - affected
    if not (kept <= previous.records.keys() and kept <= previous.reads.keys()):
        return None
    return affected


def _face(site: Site, record_id: str, kept: tuple[str, str] | None) -> tuple[str, str]:
    """(content digest, face) of a record: the previous build's while its content is the same (see `face`)."""
    entry = site.kb.entries[record_id]
    digest = entry.digest.hex() if entry.digest is not None else ""
    if kept is not None and digest and kept[0] == digest:
        return kept
    return digest, _shown(site, record_id)


def face(site: Site, record_id: str) -> str:
    """A record's face (see `_shown`), as `page_keys` found it."""
    faces: dict[str, tuple[str, str]] = site.cache.get("faces", {})
    return faces[record_id][1] if record_id in faces else _shown(site, record_id)


def _shown(site: Site, record_id: str) -> str:
    """What a page shows of a record it links to or is linked from, as a digest: its kind and title, the names
    of its formulas and measurements (the labels of links to them), a source's citation, and its links (the
    neighbourhood graph draws the links among a page's neighbours). It depends on the record's content, and on
    what its links resolve to (the base key), alone."""
    entry = site.kb.entries[record_id]
    record = entry.record
    shown: list[object] = [entry.summary, site.kb.edges_of(record_id)]
    if record is None:
        shown.append(entry.digest)
    else:
        shown.append([(formula.id, formula.title) for formula in formulas_of(record)])
        shown.append([(measurement.id, measurement.where) for measurement in measurements_of(record)])
        if isinstance(record, SourceRecord):
            shown.append((record.url, tuple(record.authors), record.year, record.venue))
    return hashlib.blake2b(repr(shown).encode(), digest_size=16).hexdigest()


def _formulas_reaching(site: Site) -> dict[str, set[str]] | None:
    """Record id -> the records with formulas whose dependency keys reach it, or None when some record's key is not
    known. A formula is evaluated on accelerators it computes with, so this holds every record whose formulas an
    accelerator page shows the values of (`flopkb.site.pages.hardware.formulas_on`), without evaluating any formula."""
    if "formulas_reaching" not in site.cache:
        site.cache["formulas_reaching"] = _reverse_reach(site)
    reaching: dict[str, set[str]] | None = site.cache["formulas_reaching"]
    return reaching


def _reverse_reach(site: Site) -> dict[str, set[str]] | None:
    found: dict[str, set[str]] = {}
    for record_id, entry in site.kb.entries.items():
        if not entry.summary.formula_ids:
            continue
        computes_with = reached(site.kb, record_id)
        if computes_with is None:
            return None
        for other in computes_with:
            found.setdefault(other, set()).add(record_id)
    return found


def fingerprint(site: Site, record_id: str) -> str | None:
    """A record's content digest and dependency key, as a digest (None if not known), computed once per rendering:
    what changes when anything its own page shows of itself, or an accelerator page of its values, can change."""
    found: dict[str, str | None] = site.cache.setdefault("fingerprints", {})
    if record_id not in found:
        entry = site.kb.entries.get(record_id)
        key = dependency_key(site.kb, record_id) if entry is not None and entry.digest is not None else None
        found[record_id] = None if key is None else hashlib.blake2b(repr(key).encode(), digest_size=16).hexdigest()
    return found[record_id]


def _computed(site: Site, record_id: str) -> bytes:
    """What a record's own page, and the accelerator pages that list its values, show of it and of what it computes
    with: its content digest and its formulas' results (values, the spec figures they used, claims, problems), not
    its dependency key. The results change only with the dependency key, so the record's fingerprint changes too and
    the keys that read it are computed again (`_affected`); but an edit of an accelerator that leaves a record's
    results as they were (a spec its formulas do not read) leaves those pages as they were: not rendered again."""
    entry = site.kb.entries[record_id]
    assert entry.digest is not None  # a record without one has no fingerprint, and no key
    key = hashlib.blake2b(entry.digest, digest_size=16)
    for result in site.kb.formulas.get(record_id, ()):
        for part in fields(result):
            value = getattr(result, part.name)
            if isinstance(value, Expr | Condition):  # parsed from their source, and their sets' order is not stable
                value = value.source
            key.update(repr(value).encode())
    return key.digest()


def _last_change(site: Site, record_id: str) -> str:
    """The record file's last change in git history as its page shows it (`flopkb.site.pages.last_changed`)."""
    entry = site.kb.entries.get(record_id)
    return repr(last_change(site.changes, entry.path) if entry is not None else None)


def _printed(site: Site, record_id: str) -> str | None:
    """What the next build compares to tell a changed record (`_affected`): its fingerprint and its last change, so
    that a commit of a record, which leaves its content as it was, renders its page again."""
    own = fingerprint(site, record_id)
    if own is None:
        return None
    return hashlib.blake2b((own + _last_change(site, record_id)).encode(), digest_size=16).hexdigest()


def record_key(site: Site, record_id: str, base: str) -> tuple[str | None, set[str], set[str]]:
    """The key of a record's page, or None when what it reads is not known; the other records it read; and those of
    them it read more of than their face (see the module)."""
    kb = site.kb
    entries = kb.entries
    neighbours: set[str] = set()
    named: set[str] = set()
    own = fingerprint(site, record_id)
    if own is None:
        return None, neighbours, neighbours
    key = hashlib.blake2b(base.encode(), digest_size=16)
    key.update(_computed(site, record_id))
    key.update(_last_change(site, record_id).encode())
    graph = site.graph
    if graph is not None and record_id in graph:
        succ, pred = graph.succ[record_id], graph.pred[record_id]
        neighbours.update(succ, pred)
        key.update(repr([(other, succ.get(other), pred.get(other)) for other in sorted(neighbours)]).encode())
    computing: set[str] = set()
    if site.kinds.get(record_id) == "accelerator":
        users = _formulas_reaching(site)
        if users is None:
            return None, neighbours, neighbours
        computing.update(users.get(record_id, ()))
    if kb.evidence is not None:
        status = kb.evidence.of(record_id)
        key.update(repr(status).encode())
        for item in status.own:
            dependents = kb.evidence.dependents.get(item, ())
            key.update(repr(dependents).encode())
            named.update(dependents)
        for debt in status.inherited:
            named.update((debt.item.record, *debt.via))
    reads = neighbours | computing | named
    reads.discard(record_id)
    beyond = reads & (computing | named)
    for other in sorted(reads):
        found = entries.get(other)
        key.update(other.encode() + b"\0")
        if found is None:
            continue
        if found.digest is None:
            return None, reads, reads
        if other in computing:
            if fingerprint(site, other) is None:
                return None, reads, reads
            key.update(_computed(site, other))
        elif other in named:
            key.update(found.digest)
        if other in neighbours:
            key.update(face(site, other).encode())
    return key.hexdigest(), reads, beyond

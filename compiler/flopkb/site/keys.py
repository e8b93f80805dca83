"""The keys under which record pages are rendered: a page whose key is the previous build's is not rendered again.

A record page shows its own record and, of other records, what its links,
backlinks, neighbourhood graph, formulas and evidence reach. Its key is
made of everything it can read:

- the base key (`base_key`): flopkb's code and versions, the vocabulary
  (both in `flopkb.pipeline.cache.cache_key`), the page templates, the
  site settings, every id, kind and alias (`Resolver.signature`: what a link
  resolves to), and the category pages;
- the record's own file (its content digest) and `dependency_key`: every
  record its formulas and evidence compute with, through chains of formula
  refs (`flopkb.links.memo`);
- every record it links to or is linked from, by any kind of link, with the
  origins of the links, that record's content digest and its dependency
  key (titles, kinds, formula results and links among neighbours come from
  there); on an accelerator page, also every record whose formulas are
  evaluated on it;
- its evidence status as computed (own and inherited debt), and the content
  digest of every record that status names (the records resting on its
  figures, the records a debt reaches it through).

A record whose digest or dependency key is not known (loaded without the
load cache, or on a cycle of formula refs) has no key (None): its page is
always rendered. Index pages, the compare page and the graph page show the
whole base and are always rendered; the mkdocs stage then rebuilds only the
pages whose markdown changed (`flopkb.site.partial`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

from flopkb.links.memo import dependency_key
from flopkb.pipeline.cache import cache_key
from flopkb.site.hardware import formulas_on
from flopkb.site.pages import Site


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


def record_key(site: Site, record_id: str, base: str) -> str | None:
    """The key of a record's page, or None when what it reads is not known (see the module)."""
    kb = site.kb
    entries = kb.entries
    entry = entries[record_id]
    computes = _computes(site)
    own = computes(record_id)
    if entry.digest is None or own is None:
        return None
    key = hashlib.blake2b(base.encode(), digest_size=16)
    key.update(entry.digest)
    key.update(own)
    graph = site.graph
    neighbours: set[str] = set()
    if graph is not None and record_id in graph:
        succ, pred = graph.succ[record_id], graph.pred[record_id]
        neighbours.update(succ, pred)
        key.update(repr([(other, succ.get(other), pred.get(other)) for other in sorted(neighbours)]).encode())
    neighbours.update(found for found, _formula, _title in formulas_on(site).get(record_id, ()))
    named: set[str] = set()
    if kb.evidence is not None:
        status = kb.evidence.of(record_id)
        key.update(repr(status).encode())
        for item in status.own:
            dependents = kb.evidence.dependents.get(item, ())
            key.update(repr(dependents).encode())
            named.update(dependents)
        for debt in status.inherited:
            named.update((debt.item.record, *debt.via))
    for other in sorted(neighbours | named):
        found = entries.get(other)
        key.update(other.encode() + b"\0")
        if found is None:
            continue
        if found.digest is None:
            return None
        key.update(found.digest)
        if other in neighbours:
            theirs = computes(other)
            if theirs is None:
                return None
            key.update(theirs)
    return key.hexdigest()


def _computes(site: Site) -> Callable[[str], bytes | None]:
    """A record's dependency key as a digest (None when it has none), each computed once per rendering."""
    found: dict[str, bytes | None] | None = site.cache.get("dependency_digests")
    if found is None:
        found = site.cache["dependency_digests"] = {}
    kb = site.kb

    def computes(record_id: str) -> bytes | None:
        if record_id not in found:
            key = dependency_key(kb, record_id)
            found[record_id] = None if key is None else hashlib.blake2b(repr(key).encode(), digest_size=16).digest()
        return found[record_id]

    return computes

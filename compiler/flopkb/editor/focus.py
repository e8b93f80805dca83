"""The edited buffer first: its file's diagnostics from the pipeline's stages run over it and the few records they
read, against the last checked base.

A keystroke changes one buffer. What the checks report on its file depends
on that file, on the records its links reach (what it computes with, its
anchors, the candidates of an ambiguous link, and through formula refs what
those compute with), on one record that links to it (orphans) and on the
records that claim its aliases. `focused_check` runs the same stages as a
full check (`flopkb.pipeline.compile.run_stages`) over a base of those
records alone, in the whole base's order and with the whole base's resolver,
and keeps the edited file's diagnostics: the same functions over fewer
records, not a second checker (`tests/editor/test_lsp_focus.py` holds them
equal to a full check's). Where the file's diagnostics could depend on more,
it answers None and the full check alone tells: the edit changes what
resolves where (the record's kind or aliases), the file is new or not a
record, a record it computes with is not linked under the current resolver,
or other records rest on its figures (an `unverified-basis` hint counts
them).

Not covered: a base whose formulas together exceed the base's limit of
values (`flopkb.formulas.evaluate.BASE_VALUE_LIMIT`), where which record is
refused depends on every record; the full check that follows corrects it.
"""

from __future__ import annotations

from collections.abc import Iterable

from flopkb.config import Config
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase, Stage
from flopkb.links.cached import RESOLVED, link_all
from flopkb.links.debt import SPEC
from flopkb.links.resolver import Resolver
from flopkb.load.validate import expected_id
from flopkb.pipeline.compile import knowledge_base_of, load_entry, run_stages


def focused_check(base: KnowledgeBase, config: Config, rel: str, stages: Iterable[Stage]) -> KnowledgeBase | None:
    """A base of the file at `rel` (as read through `config.files`) and the records its checks read (as in `base`),
    checked, with the diagnostics of that file alone; or None when they cannot be told without a full check (see the
    module). The caller releases it (`KnowledgeBase.release`)."""
    record_id = expected_id(rel, config.records)
    old = base.entries.get(record_id)
    if old is None or old.path != rel or base.resolver is None:
        return None
    entry, diagnostics = load_entry(config, rel, base.vocabulary)
    if entry.summary[:2] != old.summary[:2]:
        return None
    everything = dict(base.entries)
    everything[record_id] = entry
    resolver = base.resolver.with_entries(everything)
    wanted = _read_by(base, entry, resolver)
    if wanted is None:
        return None
    kb = knowledge_base_of(config, base.vocabulary, {key: everything[key] for key in everything if key in wanted}, [])
    kb.diagnostics.extend(diagnostics)
    kb.resolver = resolver
    run_stages(kb, stages)
    evidence = kb.evidence.records.get(record_id) if kb.evidence is not None else None
    if evidence is None or any(item.what == SPEC for item in evidence.own):
        kb.release()
        return None
    kb.diagnostics = [diagnostic for diagnostic in kb.diagnostics if diagnostic.path == rel]
    return kb


def _read_by(base: KnowledgeBase, entry: Entry, resolver: Resolver) -> set[str] | None:
    """The ids of the records the stages read to check `entry` (itself included), or None when unknown.

    Every record taken in brings what it computes with (its computing references, `flopkb.links.memo`), so that
    the stages' keyed results of each record are those of a full check.
    """
    wanted = {entry.id}
    for link in link_all({entry.id: entry}, resolver, []).built.get(entry.id, []):
        wanted.update([link.resolved] if link.resolved is not None else resolver.resolve(link.target).candidates)
    for alias in entry.summary.aliases:  # who else claims it: the record of that id, the alias's first owner
        if alias in resolver.ids:
            wanted.add(alias)
        if alias in resolver.aliases:
            wanted.add(resolver.aliases[alias])
    referencer = _referencer(base, entry.id, resolver.signature)
    if referencer is not None:
        wanted.add(referencer)
    unread = [key for key in wanted if key != entry.id]
    while unread:
        other = base.entries[unread.pop()]
        if other.source is None:
            continue
        kept = other.derived.get(RESOLVED)
        if kept is None or kept[0] != resolver.signature:
            return None
        for _, _, resolved in kept[3]:
            if resolved is not None and resolved not in wanted:
                wanted.add(resolved)
                unread.append(resolved)
    return wanted


def _referencer(base: KnowledgeBase, record_id: str, signature: bytes) -> str | None:
    """A record that links to `record_id` in `base` (what tells it is no orphan), or None when none does.

    Found in what the link stage kept of each file (`RESOLVED`), stopping at the first: the base's whole edges
    (`KnowledgeBase.edges`) cost a keystroke up to 0.3 s the first time a new base was asked for them.
    """
    if base.referenced is not None and record_id not in base.referenced:
        return None
    for other, entry in base.entries.items():
        kept = entry.derived.get(RESOLVED)
        if other != record_id and kept is not None and kept[0] == signature and record_id in kept[1]:
            return other
    edges = base.edges.items()
    linking = (other for other, found in edges if other != record_id and record_id in {e[0] for e in found})
    return next(linking, None)

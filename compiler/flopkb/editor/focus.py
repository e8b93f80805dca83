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

The base may also be loaded only, its stages not yet run: a server's first
check, whose opened buffers are told before the stages run over the whole
base (`flopkb.editor.checker`). What the link stage would keep of each file
is then found by extracting its links (`resolution_now`, kept in a dict of
the caller's, never in the entries the stage reads next), and the record
that links to the file by walking the files in order until one does.

Not covered: a base whose formulas together exceed the base's limit of
values (`flopkb.formulas.evaluate.BASE_VALUE_LIMIT`), where which record is
refused depends on every record; the full check that follows corrects it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flopkb.config import Config
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase, Stage
from flopkb.links.cached import RESOLVED, link_all, resolution_now
from flopkb.links.debt import SPEC
from flopkb.links.reads import computing_targets, first_referencer, records_read
from flopkb.links.resolver import Resolver
from flopkb.load.validate import expected_id
from flopkb.pipeline.compile import knowledge_base_of, load_entry, run_stages
from flopkb.report.diagnostics import Diagnostic


def focused_check(
    base: KnowledgeBase,
    config: Config,
    rel: str,
    stages: Iterable[Stage],
    resolutions: dict[str, tuple[Any, ...]] | None = None,
) -> KnowledgeBase | None:
    """A base of the file at `rel` (as read through `config.files`) and the records its checks read (as in `base`),
    checked, with the diagnostics of that file alone; or None when they cannot be told without a full check (see the
    module). The caller releases it (`KnowledgeBase.release`).

    `base`: the latest full check; or, with `resolutions`, a base loaded whose stages have not run (the files'
    resolutions found are kept there, for the next file checked against the same base; its resolver is built and
    kept on it, as the link stage would)."""
    record_id = expected_id(rel, config.records)
    old = base.entries.get(record_id)
    if resolutions is not None and old is not None:
        Resolver.of(base)
    if old is None or old.path != rel or base.resolver is None:
        return None
    entry, diagnostics = load_entry(config, rel, base.vocabulary)
    if entry.summary[:2] != old.summary[:2]:
        return None
    everything = dict(base.entries)
    everything[record_id] = entry
    resolver = base.resolver.with_entries(everything)
    wanted = _read_by(base, entry, resolver, resolutions)
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


def told_first(
    base: KnowledgeBase, config: Config, files: list[str], stages: Iterable[Stage]
) -> tuple[set[str], list[Diagnostic]]:
    """The files of `files` (read through `config.files`) whose diagnostics a base only loaded tells, each checked
    first against it (`focused_check`, the files' resolutions shared), and their diagnostics."""
    resolutions: dict[str, tuple[Any, ...]] = {}
    told: set[str] = set()
    found: list[Diagnostic] = []
    for rel in files:
        kb = focused_check(base, config, rel, stages, resolutions)
        if kb is not None:
            told.add(rel)
            found.extend(kb.diagnostics)
            kb.release()
    return told, found


def differing(base: KnowledgeBase, records: str, read: dict[str, str], newer: dict[str, str]) -> set[str] | None:
    """The files that a check of the buffers `newer` (texts by root-relative path) reads otherwise than the check of
    the buffers `read`, which loaded `base` (under the records folder `records`), did: a buffer whose text changed, or
    one added with another text than the record file loaded (a document opened as it is on disk is not one). None
    when not known: a buffer closed (its file is read from disk again)."""
    found = set()
    for rel in read.keys() | newer.keys():
        before, now = read.get(rel), newer.get(rel)
        if now is None:
            return None
        if before is not None:
            if before != now:
                found.add(rel)
            continue
        entry = base.entries.get(expected_id(rel, records))
        if entry is None or entry.path != rel or entry.source is None or entry.source.text != now:
            found.add(rel)
    return found


def _read_by(
    base: KnowledgeBase, entry: Entry, resolver: Resolver, resolutions: dict[str, tuple[Any, ...]] | None
) -> set[str] | None:
    """The ids of the records the stages read to check `entry` (itself included), or None when unknown: those of
    `flopkb.links.reads`, and every record its links reach and every candidate of an ambiguous one.

    The other records' links are known by what the link stage kept of each file (`RESOLVED`), or for a base whose
    stages have not run by what is found now (`_resolution`); `entry`'s by its links as edited, since `base` holds
    the file as it was. The record that links to it is looked for there alone: one whose links were not kept (a base
    checked without the load cache) would leave what it computes with unknown, and the answer None, all the same;
    the base's whole edges would tell it at up to 0.3 s the first time a new base is asked for them.
    """
    links = link_all({entry.id: entry}, resolver, []).built.get(entry.id, [])
    reached: set[str] = set()
    for link in links:
        reached.update([link.resolved] if link.resolved is not None else resolver.resolve(link.target).candidates)

    def reaches(record_id: str) -> tuple[str, ...] | None:
        found = _resolution(record_id, base.entries[record_id], resolver, resolutions)
        return None if found is None else found[1]

    def computes_with(record_id: str) -> list[str] | None:
        if record_id == entry.id:
            return computing_targets(links)
        other = base.entries[record_id]
        if other.source is None:
            return []
        found = _resolution(record_id, other, resolver, resolutions)
        # [3]: its computing references as (origin, target, resolved), the links `computing_targets` picks
        return None if found is None else [resolved for _, _, resolved in found[3] if resolved is not None]

    return records_read(
        [entry],
        resolver,
        base.referenced,
        lambda record_id: first_referencer(record_id, base.entries, reaches),
        computes_with,
        reached,
    )


def _resolution(
    record_id: str, entry: Entry, resolver: Resolver, resolutions: dict[str, tuple[Any, ...]] | None
) -> tuple[Any, ...] | None:
    """What the link stage keeps of a file's links (`RESOLVED`) under `resolver`: as it kept it; or, for a base whose
    stages have not run (`resolutions` given), found now when it kept none that holds (at 10,000 records, 40 µs a
    file). None when it is not known."""
    kept = entry.derived.get(RESOLVED)
    if kept is not None and kept[0] == resolver.signature:
        return kept
    if resolutions is None or entry.source is None:
        return None
    found = resolutions.get(record_id)
    if found is None:
        found = resolutions[record_id] = resolution_now(record_id, entry.source, resolver)
    return found

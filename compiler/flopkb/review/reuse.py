"""The second side of a diff from the first, when the change is prose alone: only the edited records checked again.

When every record file the head commit changes differs from its base version in its prose alone (`prose_edits`),
the base side is compiled as a cold check compiles it (`lean_side`: no load cache, nothing kept per file), and the
head side is the base side with those records put in (`second_side`): the stages run over the edited records and
the few records their checks read (what they compute with, through chains of formula refs; a record that links to
each, which tells it is no orphan; the claimants of its aliases: `flopkb.links.reads`), with the whole base's
resolver, as `flopkb.editor.focus` does for one edited buffer; everything else is the base side's.

What other records read of a record, and why a prose edit leaves it:

- the resolver reads ids, kinds and aliases (no file is added or removed; the summary is equal);
- links to it read its kind and anchors, its formula and measurement ids (the summary);
- orphans read which records some other record links to: the edited record's prose links name the same targets;
- evidence and formulas read its figures, formulas, measurements and references (its data outside markdown fields:
  equal, `flopkb.links.extract.prose_masked`), and the positions of its unverified figures, which only the
  `unverified-basis` warnings at its own file show (made here with the base side's count of the records resting on
  each figure; another record's inherited debt names the figure by record, path and parameter, which is what a
  `DebtItem` compares by).

The edited records' own diagnostics, links, evidence and formula results are computed again. Where a change is not
prose alone (a vocabulary change; a record file added, removed or renamed, or one that is not a valid record on either
side), both sides go through the load cache as before (`flopkb.review.sides`); where it is but the edited records'
checks could depend on more (one borrows from a cycle of formula refs, where which formula reports the cycle depends
on the record evaluated first; a base over its limit of values, where which records are refused does too; a record
that another file of the same id shadows), the head is compiled by itself. Either way the report is the one two
sides compiled apart give, and the head made here equals the head compiled by itself
(`tests/review/test_diff_reuse.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from flopkb.config import Config
from flopkb.formulas.results import FormulaResults
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.debt import DebtItem, Evidence
from flopkb.links.evidence import find_disagreements, unverified_basis
from flopkb.links.extract import PROSE, extract, prose_masked
from flopkb.links.graph import LinkGraph
from flopkb.links.memo import dependency_key, keys_from_links
from flopkb.links.reads import computing_targets, first_referencer, records_read
from flopkb.links.resolver import Resolver
from flopkb.load.sources import RECORD_SUFFIXES, GitTree
from flopkb.load.vocabulary import Vocabulary
from flopkb.pipeline.compile import (
    compile_knowledge_base,
    knowledge_base_of,
    load_entries,
    load_entry,
    load_vocabulary,
    run_stages,
    stamp_severities,
)
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.diagnostics import Diagnostic

_REGULAR = ("100644", "100755")


@dataclass(frozen=True, slots=True)
class ProseEdits:
    """The record files a commit changed in their prose alone: each one's head entry and load diagnostics, by id."""

    vocabulary: Vocabulary
    edited: dict[str, tuple[Entry, list[Diagnostic]]]


def prose_edits(config: Config, before: GitTree, after: GitTree) -> ProseEdits | None:
    """The changes from `before` to `after` (listed after it) when every record file they touch is edited in its
    prose alone, else None (see the module). Reads and parses the changed files of both commits."""
    if after.changed is None:
        return None
    vocabulary_path = config.vocabulary_path.relative_to(config.root).as_posix()
    folder = f"{config.records.rstrip('/')}/"
    changed = sorted(rel for rel in after.changed if rel.startswith(folder) and rel.endswith(RECORD_SUFFIXES))
    if vocabulary_path in after.changed or any(not _readable_name(rel) for rel in changed):
        return None
    vocabulary, _ = load_vocabulary(replace(config, files=before))
    if vocabulary is None:
        return None
    old_config, new_config = replace(config, files=before), replace(config, files=after)
    edited: dict[str, tuple[Entry, list[Diagnostic]]] = {}
    for rel in changed:
        was, now = before.blob(rel), after.blob(rel)
        if was is None or now is None or was[0] != now[0] or now[0] not in _REGULAR:
            return None  # added, removed, or no longer a regular file
        old, _ = load_entry(old_config, rel, vocabulary)
        new, diagnostics = load_entry(new_config, rel, vocabulary)
        if not _prose_alone(old, new):
            return None
        new.digest = after.digest(rel)
        if new.digest is None:
            return None  # a SHA-256 repository: dependency keys need digests
        edited[new.id] = (new, diagnostics)
    return ProseEdits(vocabulary, edited)


def _readable_name(rel: str) -> bool:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _prose_alone(old: Entry, new: Entry) -> bool:
    """Whether two versions of a record file differ in their prose alone: both valid records of the same summary,
    equal data outside markdown fields, prose links to the same targets."""
    if old.record is None or new.record is None or old.source is None or new.source is None:
        return False
    if old.summary != new.summary or prose_masked(old.source.data) != prose_masked(new.source.data):
        return False
    return _prose_targets(old) == _prose_targets(new)


def _prose_targets(entry: Entry) -> set[str]:
    assert entry.source is not None
    return {link.target for link in extract(entry.id, entry.source) if link.origin == PROSE}


def lean_side(config: Config, tree: GitTree) -> KnowledgeBase:
    """A commit's base compiled as a cold check compiles it (no load cache), then given each entry's digest (its
    blob's object id) and dependency keys read from its links, for the comparison."""
    kb = compile_knowledge_base(replace(config, files=tree), CHECK_STAGES, load_entries)
    for entry in kb.entries.values():
        entry.digest = tree.digest(entry.path)
    keys_from_links(kb)
    return kb


def second_side(config: Config, base: KnowledgeBase, edits: ProseEdits) -> KnowledgeBase | None:
    """The head side: `base` (a `lean_side`) with the edited records in, checked again with the records their checks
    read; None when that cannot be told so (see the module)."""
    if base.values_refused or base.resolver is None or base.evidence is None or not isinstance(base.formulas, dict):
        return None
    entries = dict(base.entries)
    paths = set()
    for record_id, (entry, _) in edits.edited.items():
        old = entries.get(record_id)
        if old is None or old.path != entry.path or old.digest is None:
            return None  # another file of the same id came first: it is the record
        if dependency_key(base, record_id) is None:
            return None  # it borrows from a cycle of formula refs: which formula reports it depends on the order
        entries[record_id] = entry
        paths.add(entry.path)
    resolver = base.resolver.with_entries(entries)
    links = dict(base.links)
    for record_id, (entry, _) in edits.edited.items():
        assert entry.source is not None
        links[record_id] = extract(record_id, entry.source, resolver.target)

    def reaches(record_id: str) -> list[str | None]:
        return [link.resolved for link in links[record_id]]

    wanted = records_read(
        [entry for entry, _ in edits.edited.values()],
        resolver,
        base.referenced,
        lambda record_id: first_referencer(record_id, links, reaches),
        lambda record_id: computing_targets(links.get(record_id, ())),
    )
    if wanted is None:
        return None
    checked = _checked(config, edits, entries, wanted, resolver)
    assert checked.evidence is not None
    head = KnowledgeBase(config, base.vocabulary, entries)
    head.resolver = resolver
    head.links = {record_id: found for record_id, found in links.items() if found}
    head.referenced = base.referenced
    head.graph = LinkGraph.build(head)
    formulas = dict(base.formulas)
    for record_id in edits.edited:
        if record_id in checked.formulas:
            formulas[record_id] = checked.formulas[record_id]
    head.formulas = formulas
    head.evidence = _evidence(base.evidence, checked.evidence, edits, formulas)
    diagnostics = [diagnostic for diagnostic in base.diagnostics if diagnostic.path not in paths]
    diagnostics += [d for d in checked.diagnostics if d.path in paths and d.code != "unverified-basis"]
    for record_id in edits.edited:
        for item in checked.evidence.of(record_id).own:
            diagnostics.append(unverified_basis(item, len(base.evidence.dependents.get(item, ()))))
    head.diagnostics = stamp_severities(diagnostics, config)
    keys_from_links(head, base, edits.edited)
    checked.release()
    return head


def _checked(
    config: Config, edits: ProseEdits, entries: dict[str, Entry], wanted: set[str], resolver: Resolver
) -> KnowledgeBase:
    """The stages run over the edited records and the records their checks read, in the base's order, with the whole
    base's resolver (entries copied: the stages keep nothing in them)."""
    fresh = {
        record_id: Entry(entry.id, entry.path, entry.source, entry.record)
        for record_id, entry in entries.items()
        if record_id in wanted
    }
    loaded = [diagnostic for _, diagnostics in edits.edited.values() for diagnostic in diagnostics]
    kb = knowledge_base_of(config, edits.vocabulary, fresh, loaded)
    kb.resolver = resolver
    return run_stages(kb, CHECK_STAGES)


def _evidence(base: Evidence, checked: Evidence, edits: ProseEdits, formulas: FormulaResults) -> Evidence:
    """The base side's evidence with the edited records' own: their figures are the same (by record, path and
    parameter), at the positions the head gives them."""
    records = dict(base.records)
    fresh: dict[DebtItem, DebtItem] = {}
    for record_id in edits.edited:
        records[record_id] = checked.of(record_id)
        fresh.update((item, item) for item in records[record_id].own)
    debt = tuple(fresh.get(item, item) for item in base.debt)
    dependents = {fresh.get(item, item): users for item, users in base.dependents.items()}
    return Evidence(records, debt, dependents, lambda: find_disagreements(formulas))

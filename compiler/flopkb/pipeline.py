"""The compile pipeline: files → sources → records → knowledge base → diagnostics.

`compile_knowledge_base` is the one entry point that `check`, `build`,
`serve` and `eval` share. It loads and checks everything before anything is
written, and never raises on bad records: every problem is a diagnostic.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from flopkb.config import Config
from flopkb.diagnostics import Diagnostic, make
from flopkb.loader import Source, decode, parse
from flopkb.models import Record, id_problem
from flopkb.validate import expected_id, validate_record
from flopkb.vocabulary import Vocabulary, VocabularyError, vocabulary_from_data

RECORD_SUFFIXES = (".yaml", ".yml")


@dataclass(slots=True)
class Entry:
    """One record file: its id (from its path), its source and its model, either absent when it failed."""

    id: str
    path: str
    source: Source | None
    record: Record | None


@dataclass(slots=True)
class KnowledgeBase:
    config: Config
    vocabulary: Vocabulary | None
    entries: dict[str, Entry]
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def records(self) -> Iterator[Record]:
        return (entry.record for entry in self.entries.values() if entry.record is not None)


Stage = Callable[[KnowledgeBase], Iterable[Diagnostic]]


def record_files(config: Config) -> list[str]:
    """Paths (relative to the root, '/'-separated, sorted) of every record file."""
    base = config.records_path
    found = [path for path in base.rglob("*") if path.suffix in RECORD_SUFFIXES and path.is_file()]
    return sorted(path.relative_to(config.root).as_posix() for path in found)


def load_vocabulary(config: Config) -> tuple[Vocabulary | None, list[Diagnostic]]:
    path = config.vocabulary_path
    rel = path.relative_to(config.root).as_posix()
    source, diagnostics = _read(config.root, rel)
    if source is None:
        return None, diagnostics
    try:
        return vocabulary_from_data(source.data), diagnostics
    except VocabularyError as error:
        line, column = source.position(error.path)
        return None, [*diagnostics, make("invalid-value", rel, line, column, str(error))]


def load_entry(config: Config, rel: str, vocabulary: Vocabulary | None) -> tuple[Entry, list[Diagnostic]]:
    """Read, parse and validate one record file."""
    record_id = expected_id(rel, config.records)
    source, diagnostics = _read(config.root, rel)
    record = None
    if id_problem(record_id):
        diagnostics.append(make("invalid-id", rel, 1, 1, f"the file's path gives the id '{record_id}': {id_problem(record_id)}", "rename the file"))
    elif source is not None and vocabulary is not None:
        record, problems = validate_record(source, vocabulary, record_id)
        diagnostics.extend(problems)
    return Entry(record_id, rel, source, record), diagnostics


def _read(root: Path, rel: str) -> tuple[Source | None, list[Diagnostic]]:
    try:
        raw = (root / rel).read_bytes()
    except OSError as error:
        return None, [make("encoding", rel, 1, 1, f"the file cannot be read: {error.strerror}")]
    text = decode(raw, rel)
    if isinstance(text, Diagnostic):
        return None, [text]
    return parse(text, rel)


@contextmanager
def _bulk_allocation() -> Iterator[None]:
    """Loading keeps everything it allocates; the cyclic collector would only rescan it, 2-4 times over."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_knowledge_base(config: Config) -> KnowledgeBase:
    vocabulary, diagnostics = load_vocabulary(config)
    entries: dict[str, Entry] = {}
    with _bulk_allocation():
        for rel in record_files(config):
            entry, problems = load_entry(config, rel, vocabulary)
            diagnostics.extend(problems)
            if entry.id in entries:
                diagnostics.append(make("duplicate-id", rel, 1, 1, f"'{entry.id}' is also the id of {entries[entry.id].path}", "keep one of the two files"))
                continue
            entries[entry.id] = entry
    kb = KnowledgeBase(config, vocabulary, entries, diagnostics)
    kb.diagnostics.extend(_alias_diagnostics(kb))
    return kb


def _alias_diagnostics(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    claimed = {record_id: record_id for record_id in kb.entries}
    for entry in kb.entries.values():
        if entry.record is None or entry.source is None:
            continue
        for index, alias in enumerate(entry.record.aliases):
            owner = claimed.setdefault(alias, entry.id)
            if owner != entry.id:
                line, column = entry.source.position(("aliases", index))
                yield make("duplicate-id", entry.path, line, column, f"the alias '{alias}' is already the id or an alias of {owner}", "remove the alias")


def stamp_severities(diagnostics: Iterable[Diagnostic], config: Config) -> list[Diagnostic]:
    """Apply the configured severity of each code, drop those turned off, and sort."""
    stamped = []
    for diagnostic in diagnostics:
        severity = config.severity_of(diagnostic.code)
        if severity is not None:
            stamped.append(diagnostic if severity == diagnostic.severity else replace(diagnostic, severity=severity))
    return sorted(set(stamped))


def compile_knowledge_base(config: Config, stages: Iterable[Stage] = ()) -> KnowledgeBase:
    """Load every record, run the checking stages, and return the knowledge base with its sorted diagnostics."""
    kb = load_knowledge_base(config)
    for stage in stages:
        kb.diagnostics.extend(stage(kb))
    kb.diagnostics = stamp_severities(kb.diagnostics, config)
    return kb

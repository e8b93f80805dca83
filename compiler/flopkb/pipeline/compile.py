"""The compile pipeline: files → sources → records → knowledge base → diagnostics.

`compile_knowledge_base` is the one entry point that `check`, `build`,
`serve` and `eval` share. It loads and checks everything before anything is
written, and never raises on bad records: every problem is a diagnostic.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from flopkb.collector import uncollected
from flopkb.config import Config
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase, Stage
from flopkb.load.cores import idle_cores
from flopkb.load.files import Unreadable, decode
from flopkb.load.indented import indented_fields
from flopkb.load.models import id_like, id_problem
from flopkb.load.source import Source, parse
from flopkb.load.sources import FileSource, witness
from flopkb.load.validate import expected_id, validate_record
from flopkb.load.vocabulary import Vocabulary, VocabularyError, vocabulary_from_data
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, internal_error, make

PARALLEL_FROM_FILES = 2000
MAX_WORKERS = 4
CHUNK = 256
"""Files a worker parses per task: fewer, larger tasks cost less to hand out and return; smaller ones start the
main process sooner."""
IDLE_FOR_PARALLEL = 0.5
"""Parse in worker processes only when at least this many cores (besides this process's) have been idle of late
(`flopkb.load.cores`)."""


def record_files(config: Config) -> tuple[list[str], list[Diagnostic]]:
    """Paths (relative to the root, '/'-separated, sorted) of every record file, and why others cannot be records.

    A folder that cannot be read and a name that is not UTF-8 (whose path
    could not be written in a UTF-8 report: it is shown with backslash
    escapes) are diagnostics, never silently skipped.
    """
    found: list[str] = []
    problems: list[Diagnostic] = []
    paths, unreadable = config.files.walk(config.records)
    for rel, why in unreadable:
        message = f"the folder cannot be read: {why}; its records are not checked"
        problems.append(make("not-a-record", _shown_path(rel), 1, 1, message))
    for rel in paths:
        shown = _shown_path(rel)
        if shown == rel:
            found.append(rel)
        else:
            problems.append(make("encoding", shown, 1, 1, "the file's name is not UTF-8", _RENAME))
    return found, problems


_RENAME = "rename the file: its name's bytes that are not UTF-8 are shown as \\x escapes"


def _shown_path(path: str) -> str:
    """`path` as valid text: the bytes of a name that is not UTF-8 as backslash escapes (`x\\xff.yaml`)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", errors="backslashreplace")
    return path


def load_vocabulary(config: Config) -> tuple[Vocabulary | None, list[Diagnostic]]:
    rel = config.vocabulary_path.relative_to(config.root).as_posix()
    if not config.files.exists(rel):
        message = f"there is no {rel}: records' terms are checked against it, so no record was validated"
        return None, [make("not-a-record", rel, 1, 1, message, f"restore {rel} (git checkout {rel})")]
    source, diagnostics = read_source(config.files, rel)
    if source is None:
        return None, diagnostics
    try:
        return vocabulary_from_data(source.data), diagnostics
    except VocabularyError as error:
        line, column = source.position(error.path)
        return None, [*diagnostics, make("invalid-value", rel, line, column, str(error))]


def vocabulary_unit_problems(config: Config, vocabulary: Vocabulary) -> list[Diagnostic]:
    """A parameter's unit that does not read, at that unit in the vocabulary file: no spec of it could be checked."""
    from flopkb.formulas.specs import unit_problems

    problems = list(unit_problems(vocabulary))
    if not problems:
        return []
    rel = config.vocabulary_path.relative_to(config.root).as_posix()
    source, _ = read_source(config.files, rel)
    found = []
    for name, error in problems:
        line, column = source.position(("parameters", name, "unit")) if source is not None else (1, 1)
        message = f"parameters.{name}.unit: {error.message}; no accelerator's {name} is checked until it reads"
        found.append(make("invalid-value", rel, line, column, message, error.hint))
    return found


def load_entry(config: Config, rel: str, vocabulary: Vocabulary | None) -> tuple[Entry, list[Diagnostic]]:
    """Read, parse and validate one record file."""
    source, diagnostics = read_source(config.files, rel)
    return validate_entry(config, rel, source, diagnostics, vocabulary)


def read_source(files: FileSource, rel: str, witnessed: bool = False) -> tuple[Source | None, list[Diagnostic]]:
    """Read and parse one file: the part of loading that needs no other file. With `witnessed`, the source keeps what
    reading told of its bytes (`Source.witness`)."""
    try:
        return _read_source(files, rel, witnessed)
    except Exception as error:  # flopkb's bug, reported on the file: the other files are still read
        return None, [internal_error(rel, error, "reading the file")]


def _read_source(files: FileSource, rel: str, witnessed: bool) -> tuple[Source | None, list[Diagnostic]]:
    status = None
    try:
        if witnessed:
            raw, status = files.read_stat(rel)
        else:
            raw = files.read(rel)
    except Unreadable as problem:
        return None, [make("not-a-record", rel, 1, 1, str(problem))]
    text = decode(raw, rel)
    if isinstance(text, Diagnostic):
        return None, [text]
    source, diagnostics = parse(text, rel)
    if witnessed and source is not None:
        source.witness = witness(raw, status)
    return source, diagnostics


def validate_entry(
    config: Config, rel: str, source: Source | None, diagnostics: list[Diagnostic], vocabulary: Vocabulary | None
) -> tuple[Entry, list[Diagnostic]]:
    """Turn a parsed file into an entry with its record model, adding the schema problems."""
    record_id = expected_id(rel, config.records)
    try:
        return _validate_entry(rel, record_id, source, diagnostics, vocabulary)
    except Exception as error:  # flopkb's bug, reported on the file: the other files are still validated
        return Entry(record_id, rel, source, None), [*diagnostics, internal_error(rel, error, "validating the file")]


def _validate_entry(
    rel: str, record_id: str, source: Source | None, diagnostics: list[Diagnostic], vocabulary: Vocabulary | None
) -> tuple[Entry, list[Diagnostic]]:
    record = None
    problem = id_problem(record_id)
    if problem:
        like = id_like(record_id)
        stem, dot, extension = rel.rpartition(".") if "." in rel.rsplit("/", 1)[-1] else (rel, "", "")
        renamed = f"{stem[: len(stem) - len(record_id)]}{like}{dot}{extension}"  # the id is the stem's tail
        message = f"the file's path gives the id '{cut(record_id)}': {problem}"
        diagnostics.append(
            make("invalid-id", rel, 1, 1, message, f"rename the file to {renamed}" if like else "rename the file")
        )
    elif source is not None and vocabulary is not None:
        record, problems, source = validate_record(source, vocabulary, record_id)
        diagnostics.extend(problems)
        if record is not None:
            diagnostics.extend(indented_fields(rel, source.text, record.kind))
    return Entry(record_id, rel, source, record), diagnostics


_worker_files: FileSource | None = None
"""The source a parse worker reads from (`_start_worker`)."""
_worker_witnessed = False


def _start_worker(pickled: bytes, witnessed: bool) -> None:
    global _worker_files, _worker_witnessed
    _worker_files, _worker_witnessed = pickle.loads(pickled), witnessed


def _parse_in_worker(rel: str) -> tuple[Source | None, list[Diagnostic]]:
    assert _worker_files is not None
    return read_source(_worker_files, rel, _worker_witnessed)


def read_sources(
    source: FileSource, files: list[str], witnessed: bool = False
) -> Iterator[tuple[Source | None, list[Diagnostic]]]:
    """Parse every file, in order (`read_source`); a large base is parsed by one worker process per core, when cores
    are idle.

    Workers return plain data (text, dicts, diagnostics), which pickles fast;
    models are built in this process, as pydantic models pickle slowly. Each
    worker gets the source once, pickled (so that it reads as a copy in
    another process should: a `GitTree`'s copy reads blob by blob), not with
    every chunk of paths (a `GitTree` lists every blob of its commit).
    Sending the data back still costs CPU, which only idle cores repay: when
    other jobs keep them busy (`flopkb.load.cores`), files are parsed here.
    """
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(files) < PARALLEL_FROM_FILES or workers < 2 or idle_cores() < IDLE_FOR_PARALLEL:
        yield from (read_source(source, rel, witnessed) for rel in files)
        return
    context = multiprocessing.get_context(start_method())
    with context.Pool(workers, initializer=_start_worker, initargs=(pickle.dumps(source), witnessed)) as pool:
        yield from pool.imap(_parse_in_worker, files, chunksize=CHUNK)


def start_method() -> str:
    """How parse workers start: the platform's default (spawn on macOS and Windows, forkserver from Python 3.14).

    Where that default is fork (Linux before Python 3.14), fork it is: it
    starts a worker in milliseconds, and the parse workers run no threads.
    """
    return multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_context().get_start_method()


EntryLoader = Callable[[Config, list[str], Vocabulary | None], Iterable[tuple[Entry, list[Diagnostic]]]]
"""Loads the entries of the given files, in their order: `load_entries`, or a cache in front of it
(`flopkb.pipeline.cache`)."""


def load_entries(
    config: Config, files: list[str], vocabulary: Vocabulary | None, *, witnessed: bool = False
) -> Iterator[tuple[Entry, list[Diagnostic]]]:
    """Parse and validate every file, in order; with `witnessed`, each source keeps what reading told of its bytes
    (`Source.witness`: the load cache stores what was loaded under it)."""
    for rel, (source, parse_problems) in zip(files, read_sources(config.files, files, witnessed), strict=True):
        yield validate_entry(config, rel, source, parse_problems, vocabulary)


def load_knowledge_base(config: Config, load: EntryLoader = load_entries) -> KnowledgeBase:
    vocabulary, diagnostics = load_vocabulary(config)
    if vocabulary is not None:
        diagnostics += vocabulary_unit_problems(config, vocabulary)
    files, problems = record_files(config)
    diagnostics.extend(problems)
    entries: dict[str, Entry] = {}
    with uncollected(freeze=True):  # loading keeps all it allocates: a collection would rescan it, 2-4 times over
        for entry, problems in load(config, files, vocabulary):
            diagnostics.extend(problems)
            if entry.id in entries:
                diagnostics.append(
                    make(
                        "duplicate-id",
                        entry.path,
                        1,
                        1,
                        f"'{entry.id}' is also the id of {entries[entry.id].path}",
                        "keep one of the two files",
                    )
                )
                continue
            entries[entry.id] = entry
    return knowledge_base_of(config, vocabulary, entries, diagnostics)


def knowledge_base_of(
    config: Config, vocabulary: Vocabulary | None, entries: dict[str, Entry], diagnostics: list[Diagnostic]
) -> KnowledgeBase:
    """The knowledge base of loaded entries (in the order of their files) and their load diagnostics, with those of
    aliases that two entries claim."""
    kb = KnowledgeBase(config, vocabulary, entries, diagnostics)
    kb.diagnostics.extend(_alias_diagnostics(kb))
    return kb


def _alias_diagnostics(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    claimed = {record_id: record_id for record_id in kb.entries}
    for entry in kb.entries.values():
        summary = entry.summary  # not the model: a cached entry's model is loaded only when needed
        if summary.kind is None or entry.source is None:
            continue
        for index, alias in enumerate(summary.aliases):
            owner = claimed.setdefault(alias, entry.id)
            if owner != entry.id:
                line, column = entry.source.position(("aliases", index))
                yield make(
                    "duplicate-id",
                    entry.path,
                    line,
                    column,
                    f"the alias '{cut(alias)}' is already the id or an alias of {owner}",
                    "remove the alias",
                )


def stamp_severities(diagnostics: Iterable[Diagnostic], config: Config) -> list[Diagnostic]:
    """Apply the configured severity of each code, drop those turned off, and sort."""
    stamped = []
    for diagnostic in diagnostics:
        severity = config.severity_of(diagnostic.code)
        if severity is not None:
            stamped.append(diagnostic if severity == diagnostic.severity else replace(diagnostic, severity=severity))
    return sorted(set(stamped))


def compile_knowledge_base(
    config: Config, stages: Iterable[Stage] = (), load: EntryLoader = load_entries
) -> KnowledgeBase:
    """Load every record, run the checking stages, and return the knowledge base with its sorted diagnostics."""
    return run_stages(load_knowledge_base(config, load), stages)


def run_stages(kb: KnowledgeBase, stages: Iterable[Stage]) -> KnowledgeBase:
    """Run the checking stages over a loaded base, and sort its diagnostics with their configured severities."""
    for stage in stages:
        kb.diagnostics.extend(run_stage(stage, kb))
    kb.diagnostics = stamp_severities(kb.diagnostics, kb.config)
    return kb


def run_stage(stage: Stage, kb: KnowledgeBase) -> list[Diagnostic]:
    """The diagnostics of one stage; when it fails, those it gave before, and an `internal-error` for the failure."""
    found: list[Diagnostic] = []
    try:
        found.extend(stage(kb))
    except Exception as error:  # flopkb's bug: the other stages still run and report
        name = getattr(stage, "__name__", "a stage").removeprefix("check_")
        found.append(internal_error(kb.config.records, error, f"checking {name}"))
    return found

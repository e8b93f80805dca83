"""The journal of `flopkb mv`: a move written down in full before its first write, so that it is never half made.

The journal (`.flopkb-mv.json` at the root of the base) lists every file the move touches with its bytes
before and after (None: the file does not exist on that side). It is written atomically before the first
file is; the files are then replaced one by one, each only if it still holds its bytes before; the journal
is removed last. A move that was killed leaves its journal, and the next writing command (`mv`, `fmt`,
`new`) finishes it (`flopkb mv --undo` rolls it back instead); `check` reports it as `unfinished-move`.

A file that holds neither its bytes before nor after was edited by somebody else since: it is never
overwritten, and the journal stays until the author has looked.

The journal is read like any file of the base, as hostile input: only paths of record files inside the
records folder are accepted.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flopkb.atomic import WriteError, create_atomically, replace_if_unchanged
from flopkb.config import Config
from flopkb.load.files import Unreadable, read_bytes
from flopkb.report.diagnostics import Diagnostic, make

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase

JOURNAL_NAME = ".flopkb-mv.json"
_FORMAT = 1
_RECORD_SUFFIXES = (".yaml", ".yml")


class JournalError(Exception):
    """The journal cannot be carried out without overwriting somebody's edit, or cannot be read."""


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    """Root-relative, '/'-separated."""
    before: bytes | None
    after: bytes | None


@dataclass(frozen=True, slots=True)
class Journal:
    old: str
    new: str
    changes: tuple[FileChange, ...]
    """Writes first (in path order), removals last."""

    @property
    def command(self) -> str:
        return f"flopkb mv {self.old} {self.new}"


def journal_path(config: Config) -> Path:
    return config.root / JOURNAL_NAME


def begin(config: Config, journal: Journal) -> None:
    """Write the journal, durably, before the first file of the move is written."""
    entries = [
        {"path": change.path, "before": _text(change.before), "after": _text(change.after)}
        for change in journal.changes
    ]
    data = {"format": _FORMAT, "old": journal.old, "new": journal.new, "files": entries}
    path = journal_path(config)
    if path.exists() or path.is_symlink():
        raise JournalError(f"{JOURNAL_NAME}: an unfinished move is in the way; finish it first")
    create_atomically(path, json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    _sync(path)


def finish(config: Config, journal: Journal) -> None:
    """Make every change of `journal` that is not made yet, then remove the journal."""
    _carry_out(config, [(change.path, change.before, change.after) for change in journal.changes])
    _remove_empty_folders(config, journal)
    journal_path(config).unlink(missing_ok=True)


def undo(config: Config, journal: Journal) -> list[str]:
    """Put back every file of `journal` that the move wrote as it was before, then remove the journal.

    A file that holds neither its bytes after the move nor before was saved by somebody since: it keeps that
    save; the paths of those files are returned.
    """
    steps = [(change.path, change.after, change.before) for change in reversed(journal.changes)]
    kept = _carry_out(config, sorted(steps, key=lambda step: step[2] is None), strict=False)
    _remove_empty_folders(config, journal)
    journal_path(config).unlink(missing_ok=True)
    return kept


def pending(config: Config) -> Journal | None:
    """The journal of an unfinished move, or None; `JournalError` when it is there but cannot be used."""
    path = journal_path(config)
    if not path.exists() and not path.is_symlink():
        return None
    try:
        data = json.loads(read_bytes(str(path)).decode("utf-8", "surrogateescape"))
        changes = tuple(_change(config, entry) for entry in data["files"])
        if data["format"] != _FORMAT or not isinstance(data["old"], str) or not isinstance(data["new"], str):
            raise ValueError("unknown format")
    except (Unreadable, ValueError, KeyError, TypeError) as error:
        raise JournalError(
            f"{JOURNAL_NAME} is not a journal flopkb can use ({error}); look at the records it names and remove it"
        ) from error
    return Journal(data["old"], data["new"], changes)


def check_unfinished_move(kb: KnowledgeBase) -> Iterable[Diagnostic]:
    """The `unfinished-move` stage: a journal left by a `flopkb mv` that was killed."""
    try:
        journal = pending(kb.config)
    except JournalError as error:
        return [make("unfinished-move", JOURNAL_NAME, 1, 1, str(error))]
    if journal is None:
        return []
    return [
        make(
            "unfinished-move",
            JOURNAL_NAME,
            1,
            1,
            f"`{journal.command}` was interrupted: some records may be moved and some not",
            "`flopkb mv --finish` finishes it (so does the next `mv`, `fmt` or `new`); `flopkb mv --undo` undoes it",
        )
    ]


def _carry_out(
    config: Config, steps: list[tuple[str, bytes | None, bytes | None]], *, strict: bool = True
) -> list[str]:
    """Bring each file from `source` to `target` bytes (None: absent), skipping those already there; the paths of
    files that hold neither, left alone (`JournalError` at the first of them, if `strict`)."""
    kept = []
    for path, source, target in steps:
        file = config.root / path
        current = _current(file)
        if current == target:
            continue
        if current != source:
            if strict:
                raise JournalError(f"{path} was edited since the move began; it was left as it is")
            kept.append(path)
            continue
        if target is None:
            file.unlink()
        elif source is None:
            file.parent.mkdir(parents=True, exist_ok=True)
            create_atomically(file, target)
        else:
            replace_if_unchanged(file, source, target, config.root)
    return kept


def _current(file: Path) -> bytes | None:
    if not file.exists() and not file.is_symlink():
        return None
    try:
        return read_bytes(str(file))
    except Unreadable as error:
        raise WriteError(f"{file}: {error}") from error


def _change(config: Config, entry: dict[str, Any]) -> FileChange:
    path = entry["path"]
    if not isinstance(path, str) or not path.endswith(_RECORD_SUFFIXES) or ".." in path.split("/"):
        raise ValueError(f"'{path}' is not a record file")
    records = config.records_path.resolve()
    if records not in (config.root / path).resolve().parents:
        raise ValueError(f"'{path}' is not inside {config.records}/")
    return FileChange(path, _bytes(entry["before"]), _bytes(entry["after"]))


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def _bytes(text: object) -> bytes | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError("a file's content is not text")
    return text.encode("utf-8", "surrogateescape")


def _sync(path: Path) -> None:
    """Flush the journal and its folder entry to disk, so that a power cut cannot reorder it after the writes."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _remove_empty_folders(config: Config, journal: Journal) -> None:
    """Remove the folders under records/ that the move (or its undoing) left empty."""
    stop = config.records_path.resolve()
    for change in journal.changes:
        folder = (config.root / change.path).parent.resolve()
        while folder != stop and stop in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent

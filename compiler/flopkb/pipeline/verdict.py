"""The last check's diagnostics, stored beside the load cache, for `flopkb lsp` to show before it has checked.

A warm check of 10,000 records takes about a second, and the language server
imports its protocol library besides (0.6 s). So `flopkb check` (in the
detached writer that stores its load cache, `flopkb.pipeline.background`) and
the server (when it stops) store the diagnostics of their last check of the
files on disk, as the report has them, in `check/verdict.json` of the base's
cache folder; a server that starts pushes them at once when they still hold,
then checks (`flopkb.editor.checker`).

They hold while nothing a check reads has changed: flopkb's code and the
versions it runs on (`flopkb.pipeline.keys.code_key`), the settings that
shape its diagnostics, the listing of the records folder, the stat of every
record file and of the vocabulary, and no unfinished move's journal. A
record's stat is the one the check's load cache kept it under (what that run
loaded is what a file of that stat holds: `flopkb.pipeline.cache`), not the
disk's taken again: whether it still is the file's, and whether the check's
files are still the folder's, is told when the diagnostics are used; a file
the check read from an editor's buffer holds the buffer's bytes; the
vocabulary, read afresh by every check, is unchanged since before the check
began. A check whose diagnostics lie elsewhere (an unreadable folder, a name
that is not UTF-8, an unfinished move) stores nothing.

The file is sealed as the cache's shards are (`flopkb.sealed`) and read as
records are (`flopkb.load.files.read_bytes`): one that is damaged, not
sealed by this user's flopkb, of other code or settings, or out of date
counts as absent.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flopkb.atomic import write_atomically
from flopkb.config import Config
from flopkb.links.journal import journal_path
from flopkb.load.files import Unreadable, read_bytes
from flopkb.load.sources import WorkTree
from flopkb.pipeline.cache_lock import Busy, hold
from flopkb.pipeline.keys import code_key
from flopkb.pipeline.stats import CACHE_FOLDER, Stat, stat_of, trusted_stat, untrusted_since
from flopkb.report.codes import Severity
from flopkb.report.diagnostics import Diagnostic
from flopkb.report.hints import Suggestion
from flopkb.sealed import NotOwnFolder, seal, unseal

if TYPE_CHECKING:
    from flopkb.pipeline.cache import FileCache

VERDICT_NAME = "verdict.json"
MAX_VERDICT_BYTES = 1 << 28
_FORMAT = 2
_SEAL_PURPOSE = b"flopkb-verdict"


def store(
    config: Config,
    cache: FileCache,
    diagnostics: Sequence[Diagnostic],
    began: int,
    buffers: Mapping[str, bytes] | None = None,
) -> None:
    """Store `diagnostics`, of a check of `config`'s base that began at `began` (`time.time_ns`) and loaded through
    `cache` (saved: its stats are this check's), with the files at `buffers` read from these bytes; nothing when they
    cannot be told to hold for the files on disk (what is stored stays: it holds only for what it was stored for).
    Run while the cache's lock is held (`FileCache.save`).
    """
    listing = _listing(config, cache.stats(), began, buffers or {})
    if cache.folder is None or listing is None or not all(d.path in listing for d in diagnostics):
        return
    try:
        data = {
            "format": _FORMAT,
            "code": code_key().hex(),
            "settings": _settings(config),
            "files": listing,
            "diagnostics": [
                [d.path, d.line, d.column, d.code, d.message, _hint_data(d.hint), d.severity.value] for d in diagnostics
            ],
        }
        write_atomically(
            cache.folder / VERDICT_NAME, seal(_SEAL_PURPOSE, json.dumps(data, separators=(",", ":")).encode())
        )
    except OSError:
        return  # a cache folder that cannot be written: the next server checks first


def stored_path(config: Config) -> Path | None:
    """Where the diagnostics of `config`'s base are stored (None: it has no cache folder)."""
    cache = config.cache_path
    return None if cache is None else cache / CACHE_FOLDER / VERDICT_NAME


def stored(config: Config) -> list[Diagnostic] | None:
    """The stored diagnostics of `config`'s base, when they hold for its files as they are now; else None."""
    path = stored_path(config)
    if path is None:
        return None
    folder = path.parent
    try:
        lock = hold(folder, exclusive=False)  # once the last command's detached writer is done
    except NotOwnFolder:
        return None
    except (Busy, OSError):
        lock = None
    try:
        sealed = read_bytes(str(path), limit=MAX_VERDICT_BYTES)
    except Unreadable:
        return None
    finally:
        if lock is not None:
            os.close(lock)
    content = unseal(_SEAL_PURPOSE, sealed)
    if content is None:
        return None
    try:
        return _holding(config, json.loads(bytes(content)))
    except (ValueError, TypeError, KeyError, AttributeError):  # sealed, yet of another format
        return None


def _holding(config: Config, data: dict[str, Any]) -> list[Diagnostic] | None:
    """The diagnostics of `data`, when what they were stored for is what is on disk now."""
    if (data["format"], data["code"], data["settings"]) != (_FORMAT, code_key().hex(), _settings(config)):
        return None
    if os.path.lexists(journal_path(config)):
        return None
    listing: dict[str, list[int]] = data["files"]
    files = WorkTree(config.root, (config.records, config.schema))
    paths, unreadable = files.walk(config.records)
    if unreadable or len(paths) + 1 != len(listing) or listing.get(_vocabulary_rel(config)) != _vocabulary(config):
        return None
    for rel in paths:
        try:
            status = files.stat(rel)
        except OSError:
            return None
        if status is None or listing.get(rel) != list(stat_of(status)):
            return None
    found = []
    for path, line, column, code, message, hint, severity in data["diagnostics"]:
        if not (isinstance(path, str) and isinstance(message, str)):
            raise TypeError("a diagnostic of another format")
        found.append(Diagnostic(path, int(line), int(column), str(code), message, _hint_of(hint), Severity(severity)))
    return found


def _hint_data(hint: str | None) -> str | list[Any] | None:
    """A hint as stored: a `Suggestion` with what it replaces (the editor's quick fixes), else its text."""
    if isinstance(hint, Suggestion):
        return [str(hint), hint.written, list(hint.offered), hint.before]
    return hint


def _hint_of(data: object) -> str | None:
    if isinstance(data, list):
        text, written, offered, before = data
        if not all(isinstance(part, str) for part in (text, written, before, *offered)):
            raise TypeError("a hint of another format")
        return Suggestion(text, written, offered, before)
    if not isinstance(data, str | None):
        raise TypeError("a hint of another format")
    return data


def _listing(
    config: Config, stats: Mapping[str, Stat | None], began: int, buffers: Mapping[str, bytes]
) -> dict[str, list[int]] | None:
    """Every record file of the check and the vocabulary, with the stat they hold what the check read under; None when
    that cannot be told.

    A record's stat is the one the load cache kept it under (`stats`): whether it is still the file's, and whether the
    check's files are still the disk's, is told when the diagnostics are used (`_holding`), not here again.
    """
    if os.path.lexists(journal_path(config)):
        return None
    files = WorkTree(config.root, (config.records, config.schema))
    now = untrusted_since()
    listing: dict[str, list[int]] = {}
    for rel, stat in stats.items():
        buffer = buffers.get(rel)
        held = stat if buffer is None else _held(files, rel, now, buffer)
        if held is None:
            return None
        listing[rel] = list(held)
    vocabulary = _vocabulary_rel(config)
    held = _held(files, vocabulary, untrusted_since(began), buffers.get(vocabulary))
    if held is None:
        return None
    listing[vocabulary] = list(held)
    return listing


def _held(files: WorkTree, rel: str, before: int, buffer: bytes | None) -> Stat | None:
    """The stat of the file at `rel` when unchanged since `before` (nanoseconds), and holding `buffer`'s bytes when
    given (read after the stat); else None."""
    try:
        status = files.stat(rel)
        held = trusted_stat(status, before)
        if held is None or (buffer is not None and files.read(rel) != buffer):
            return None
    except (OSError, Unreadable):
        return None
    return held


def _vocabulary(config: Config) -> list[int] | None:
    try:
        status = os.stat(config.vocabulary_path)
    except OSError:
        return None
    return list(stat_of(status))


def _vocabulary_rel(config: Config) -> str:
    return config.vocabulary_path.relative_to(config.root).as_posix()


def _settings(config: Config) -> str:
    """The digest of the settings a check's diagnostics depend on."""
    shaped = repr((str(config.root), config.records, config.schema, sorted(config.severity.items())))
    return hashlib.blake2b(shaped.encode(), digest_size=16).hexdigest()

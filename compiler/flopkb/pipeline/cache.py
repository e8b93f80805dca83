"""The incremental check: what loading one file produced, kept on disk and keyed by the file's content.

Loading (parse + validate) is the per-file part of the pipeline and most of a
cold check's time. The cache stores, for every record file, the digest of its
bytes (its git blob id, `flopkb.load.sources.content_digest`: a file read
from a commit is not hashed again), its parsed data and record model (one
pickle per file, unpickled only when a stage asks for them), what the rest of
the base needs to know of it without them (`pipeline.RecordSummary`: kind,
aliases, formula ids), its load diagnostics and what stages derived from it,
as pickles in the `check/` folder of the base's cache folder
(`Config.cache_path`: the user's cache folder, outside the base, unless
`cache_dir` says otherwise).

The next run does not read a file whose stat (size, modification and change
times in nanoseconds, inode) is the one stored: it takes the stored result.
A file whose stat differs is read and hashed (unless its source knows the
digest: a git blob's is its object id), and loaded again only when its
digest differs too (a `git checkout` or `touch` changes the stat, not the
content: the digest remains the key of truth). As git does with its index, a
stat taken within `RACY_SECONDS` of the file's last change is not trusted
(a second write within the same timestamp tick would keep it): such a file
is hashed on the next run, until its stat is old enough.

A cached entry is the same as a fresh one: its `Source` is the file's text and
the stored data, and finds positions on demand, as a freshly parsed one does;
but its text, data and model are only read (text from the file, checked
against the digest) when something asks for them (`Source.deferred`,
`Entry.deferred`). Stages keep per-file work in the cache: what they put in
`entry.derived` (picklable, computed from that file, or keyed by the
`entry.digest` of every file it depends on: see `flopkb.links.memo`) is stored with
the file and comes back while the file is unchanged. So a run after editing
one file parses and validates that file alone, and the stages that span files
(links, graph, evidence, specs, formulas) redo only what depends on it.

Files are spread over `SHARDS` pickles by a hash of their path, so that a run
that changed one file rewrites one small shard, not the whole cache. Each
shard carries the cache key; a shard whose key differs is thrown away,
silently: the key covers the cache format, the Python and pydantic versions,
the flopkb version and the digest of flopkb's own code, the records folder
setting, and the vocabulary. Shards are written atomically (a temporary file,
then a rename), so a crash or a parallel run never leaves half a shard behind.

A shard is code once unpickled, so none is unpickled unless this user's
flopkb wrote it (`flopkb.sealed`): its head (the key, the entries, and the
blake2b digest of every pickled model and derived dict) carries a seal made
with the user's key, checked before anything is unpickled; each model and
derived dict is checked against its digest when first used. Shards are read
as records are (`flopkb.load.files.read_bytes`: regular files only, at most
`MAX_SHARD_BYTES`). A shard that fails (unsealed, damaged, truncated, not a
file) or a blob that fails its digest is dropped and its files loaded again:
the verdict is the one `--no-cache` gives, and `notes` says what was dropped.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from flopkb.atomic import sweep_temporaries, write_atomically
from flopkb.collector import uncollected
from flopkb.config import Config
from flopkb.kb.entry import Entry
from flopkb.load.files import Unreadable, decode
from flopkb.load.models import Record
from flopkb.load.source import Source
from flopkb.load.sources import Prefetched, content_digest
from flopkb.load.validate import expected_id
from flopkb.load.vocabulary import Vocabulary
from flopkb.pipeline import background
from flopkb.pipeline.cache_lock import WAIT_SECONDS, Busy, hold
from flopkb.pipeline.compile import load_entries, load_entry
from flopkb.pipeline.shards import (
    PICKLED,
    SHARDS,
    Damaged,
    Loaded,
    Model,
    Pickled,
    cache_key,
    model_pickler,
    read_shard,
    shard_bytes,
    shard_name,
    shard_of,
    with_blobs,
)
from flopkb.pipeline.stats import CACHE_FOLDER, Stat, trusted_read, trusted_stat, untrusted_since
from flopkb.report.diagnostics import Diagnostic
from flopkb.sealed import NoKey, NotOwnFolder, own_folder, user_key

_PROTOCOL = pickle.HIGHEST_PROTOCOL


class FileCache:
    """An `EntryLoader` (see `flopkb.pipeline.compile`) that loads only the files that changed since the last run.

    One instance can serve many runs (as `check --watch` does): the stored
    results are read from disk once and then kept in memory. `save` writes
    back the shards that a run changed.
    """

    def __init__(
        self, config: Config, *, answer_first: bool = False, on_parse: Callable[[], None] = lambda: None
    ) -> None:
        """With `answer_first`, for a command that saves once it has answered (`check`): a run that finds nothing
        stored loads every file as `--no-cache` does, and `save` stores what they loaded (what stages derive from them
        is stored by the next run). The first check of a fresh clone then costs what `--no-cache` costs.

        `on_parse` is called as each run is about to parse the files it could not take from the cache: what the run
        reads and stats before that is done.
        """
        self._answer_first = answer_first
        self._on_parse = on_parse
        self._unstored: tuple[Config, list[tuple[Entry, list[Diagnostic]]], int] | None = None
        """The config and loads of an answer-first run, stored by `save`, and `untrusted_since` when they began."""
        self.notes: list[str] = []
        """What was wrong with the cache (a damaged shard, a missing key), in words for the user: never a verdict."""
        cache = config.cache_path
        self.folder = cache / CACHE_FOLDER if cache is not None else None
        try:
            user_key()
            if self.folder is not None and os.path.lexists(self.folder):  # else made by the first `hold`
                own_folder(self.folder)
        except (NoKey, NotOwnFolder) as error:
            self.notes.append(f"the cache is off: {error}")
            self.folder = None
        self._key: bytes | None = None
        self._loaded: dict[str, Loaded] = {}
        self._files: list[str] = []
        """The files of the last run."""
        self._entries: dict[str, Entry] = {}
        self._dirty: set[int] = set()
        """The shards to write."""
        self._dropped: set[str] = set()
        """The files whose stored blobs failed their digest: not stored again as they are."""
        self._derived: dict[str, dict[str, Any]] = {}
        """What each entry of the last run started with as `derived`: what stages changed is told from it."""

    def __call__(
        self, config: Config, files: list[str], vocabulary: Vocabulary | None
    ) -> list[tuple[Entry, list[Diagnostic]]]:
        key = cache_key(config, vocabulary)
        if key != self._key:
            self._key = key
            self._loaded, self._dirty = self._read(key)
        self._files = files
        trusted_before = untrusted_since()
        if self._answer_first and not self._loaded and self.folder is not None:
            self._on_parse()
            results = list(load_entries(config, files, vocabulary, witnessed=True))
            self._unstored = (config, results, trusted_before)
            return results
        kept: dict[str, Loaded] = {}
        read: dict[str, tuple[bytes, Stat | None]] = {}
        raws: dict[str, bytes] = {}
        stale: list[str] = []
        for rel in files:
            stored = self._loaded.get(rel)
            digest = config.files.digest(rel)
            if digest is not None:  # a blob: its stat would tell no more than its digest, so it is stored without one
                if stored is not None and stored.digest == digest:
                    kept[rel] = stored  # a blob seen before (in another commit, or as a file of the work tree)
                else:
                    stale.append(rel)
                    read[rel] = (digest, None)
                continue
            try:
                status = config.files.stat(rel)
            except OSError:
                stale.append(rel)  # loading the file reports why
                continue
            stat = None if status is None else (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
            if stored is not None and stat is not None and stored.stat == stat:
                kept[rel] = stored
                continue
            raw = _read_bytes(config, rel)
            if raw is None:
                stale.append(rel)
                continue
            digest = content_digest(raw)
            trusted = trusted_stat(status, trusted_before)
            if stored is not None and stored.digest == digest:
                if stored.stat != trusted:
                    stored = stored._replace(stat=trusted)
                    self._dirty.add(shard_of(rel))
                kept[rel] = stored
            else:
                stale.append(rel)
                read[rel] = (digest, trusted)
                raws[rel] = raw
        prefetched = replace(config, files=Prefetched(config.files, raws))
        self._on_parse()
        fresh = dict(zip(stale, load_entries(prefetched, stale, vocabulary), strict=True))
        results = []
        loaded: dict[str, Loaded] = {}
        self._derived = {}
        for rel in files:
            if rel in fresh:
                entry, diagnostics = fresh[rel]
                if rel in read:  # else unreadable
                    entry.digest, trusted = read[rel]
                    model = (entry.source.data, entry.record) if entry.source is not None else None
                    loaded[rel] = Loaded(
                        entry.digest,
                        trusted,
                        entry.summary,
                        tuple(diagnostics),
                        model,
                        self._derived.setdefault(rel, entry.derived),
                        (b"", b""),
                        entry.source.omitted or None if entry.source is not None else None,
                    )
            else:
                stored = kept[rel]
                if not isinstance(stored.derived, dict):  # unpickled once: the next runs share its values
                    unpickled = self._unpickled(rel, stored.derived, stored.digests[1]) or {}
                    stored = stored._replace(derived=unpickled, digests=(stored.digests[0], b""))
                assert isinstance(stored.derived, dict)
                loaded[rel] = stored
                derived = self._derived[rel] = stored.derived
                entry, diagnostics = self._rebuild(config, vocabulary, rel, stored, derived), list(stored.diagnostics)
            results.append((entry, diagnostics))
        self._dirty.update(map(shard_of, stale))
        self._dirty.update(map(shard_of, self._loaded.keys() - loaded.keys()))
        self._loaded = loaded
        self._entries = {entry.path: entry for entry, _ in results}
        return results

    def save(self, *, after_exit: bool = False, then: Callable[[], None] | None = None) -> None:
        """Write the shards that the last run (or what stages derived since) changed, then run `then` (what is stored
        beside them: `flopkb.pipeline.verdict`); with `after_exit`, in a detached process
        (`flopkb.pipeline.background`) when it can be, so that the command ends now.

        The writer holds the cache's lock (`flopkb.pipeline.cache_lock`) until written, so that the next run waits for
        it. A cache folder that cannot be written, or derived data that cannot be pickled, is skipped: the next run
        loads again.
        """
        self.keep_derived()
        if self._unstored is not None:
            self._dirty.update(range(SHARDS))
        for rel in self._dropped:
            self._loaded.pop(rel, None)
        self._dropped.clear()
        if not (self._dirty or then) or self._key is None or self.folder is None:
            return
        try:  # a command that is done does not wait: another flopkb writing now stores what this run would
            lock = hold(self.folder, exclusive=True, wait=0.0 if after_exit else WAIT_SECONDS)
        except (Busy, OSError):
            return
        try:
            if not (after_exit and background.after_exit(functools.partial(self._store, then, keep=False))):
                self._store(then)
        finally:
            if lock is not None:
                os.close(lock)  # a detached writer holds its copy of the lock until it has written

    def settle(self) -> None:
        """Keep, in memory, what an answer-first run loaded and what its stages derived, with each file's digest and
        stat, as a run that was not answer-first keeps them: the next run loads only what changed (`flopkb lsp`, once
        its first diagnostics are out). `save` writes them."""
        if self._unstored is None:
            return
        config, results, trusted_before = self._unstored
        self._unstored = None
        self._loaded = dict(_loads_to_store(config, results, trusted_before, keep_derived=True))
        self._derived = {
            rel: loaded.derived for rel, loaded in self._loaded.items() if isinstance(loaded.derived, dict)
        }
        self._entries = {rel: entry for entry, _ in results if (rel := entry.path) in self._loaded}
        for rel, entry in self._entries.items():
            entry.digest = self._loaded[rel].digest
        self._dirty.update(range(SHARDS))

    def _store(self, then: Callable[[], None] | None, keep: bool = True) -> None:
        """Write the shards, with the loads of an answer-first run (`keep`: see `_write`); then `then`. Uncollected: all
        is kept to the end, and a collection would scan the base (a detached writer's pages, shared, copied)."""
        with uncollected():
            if self._unstored is not None:
                config, results, trusted_before = self._unstored
                self._unstored = None
                self._loaded = dict(_loads_to_store(config, results, trusted_before, keep_derived=False))
            if self._dirty:
                self._write(keep)
            if then is not None:
                then()

    def stats(self) -> dict[str, Stat | None]:
        """The stat that each file of the last run is kept under once `save` stored it (None: not trusted, or not
        stored): a file whose stat is still this one holds what that run loaded."""
        return {rel: None if (loaded := self._loaded.get(rel)) is None else loaded.stat for rel in self._files}

    def _write(self, keep: bool = True) -> None:
        """Write the shards to write; unless `keep` is false (a detached writer, which ends then), keep each model
        pickled in memory, for the next `save`."""
        key, folder = self._key, self.folder
        assert key is not None and folder is not None
        sweep_temporaries(folder, recursive=False)  # of a writer killed meanwhile: a detached one ends with its machine
        by_shard: dict[int, list[tuple[str, Loaded]]] = {shard: [] for shard in self._dirty}
        for rel, loaded in self._loaded.items():
            if (files := by_shard.get(shard_of(rel))) is not None:
                files.append((rel, loaded))
        pickled = model_pickler()
        try:
            for shard, files in by_shard.items():  # a shard at a time: its pickles, unless kept, are then let go
                content = self._content(files, pickled, keep)
                path = folder / shard_name(shard)
                if content:
                    write_atomically(path, shard_bytes(key, content))
                else:
                    path.unlink(missing_ok=True)
                self._dirty.discard(shard)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            return

    def _content(
        self, files: list[tuple[str, Loaded]], pickled: Callable[[Model], bytes], keep: bool
    ) -> dict[str, Loaded]:
        """What a shard stores of `files`, pickled to write out of band; any whose derived data cannot be, left out."""
        content: dict[str, Loaded] = {}
        for rel, loaded in files:
            model, derived, (model_digest, derived_digest) = loaded.model, loaded.derived, loaded.digests
            if model is not None and not isinstance(model, PICKLED):
                model = pickled(model)
                model_digest = _digest(model)
                if keep:  # not the derived data: the next run would unpickle every file of every shard written
                    self._loaded[rel] = with_blobs(loaded, model, derived, (model_digest, loaded.digests[1]))
            if isinstance(derived, dict) and derived:  # an empty one is stored as it is, in the shard's head
                try:
                    derived = pickle.dumps(derived, protocol=_PROTOCOL)
                except (pickle.PicklingError, TypeError, AttributeError):
                    continue
                derived_digest = _digest(derived)
            content[rel] = with_blobs(
                loaded,
                pickle.PickleBuffer(model) if isinstance(model, PICKLED) else model,
                pickle.PickleBuffer(derived) if isinstance(derived, PICKLED) else derived,
                (model_digest, derived_digest),
            )
        return content

    def keep_derived(self) -> None:
        """Keep, in memory, what stages derived in the last run, for the next run (`save` also writes it to disk):
        `flopkb diff` compiles its second side after the first without writing the cache."""
        for rel, entry in self._entries.items():
            stored = self._loaded.get(rel)
            if stored is not None and _changed(entry.derived, self._derived[rel]):
                self._derived[rel] = derived = dict(entry.derived)
                self._loaded[rel] = with_blobs(stored, stored.model, derived, (stored.digests[0], b""))
                self._dirty.add(shard_of(rel))

    def _read(self, key: bytes) -> tuple[dict[str, Loaded], set[int]]:
        """The stored results under `key`, and the shards on disk that hold none (to rewrite or remove)."""
        loaded: dict[str, Loaded] = {}
        unusable: set[int] = set()
        failed = []
        if self.folder is None:
            return loaded, unusable
        with self._reading():
            for shard in range(SHARDS):
                path = self.folder / shard_name(shard)
                try:
                    content = read_shard(path, key)
                except Damaged as error:
                    failed.append(f"{path.name} ({error})")
                    content = None
                if content is None:
                    unusable.add(shard)
                loaded.update(content or {})
        if failed:
            listed = ", ".join(failed[:3]) + (", ..." if len(failed) > 3 else "")
            self.notes.append(
                f"{len(failed)} of the cache's shards in {self.folder} failed their check (not sealed by this user's"
                f" flopkb, or damaged) and were dropped, their files loaded again: {listed}"
            )
        return loaded, unusable

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Hold the cache's shared lock while its shards are read, once a writer (the last command's, detached) is
        done; when there is no lock to be had, read what is on disk (each shard is whole)."""
        assert self.folder is not None
        try:
            lock = hold(self.folder, exclusive=False)
        except Busy as busy:
            self.notes.append(f"the cache was read while another flopkb wrote it: {busy}")
            lock = None
        except OSError:
            lock = None
        try:
            yield
        finally:
            if lock is not None:
                os.close(lock)

    def _damaged(self, rel: str, what: str) -> None:
        """A stored blob of `rel` failed its digest: say so, and drop the file from the cache on `save` (the next run
        loads it again, and stores it whole)."""
        self.notes.append(f"the cache of {rel} failed its check ({what}) and was dropped: the file was loaded again")
        self._dropped.add(rel)
        self._dirty.add(shard_of(rel))

    def _unpickled(self, rel: str, blob: Pickled, digest: bytes) -> Any:
        """The object pickled in `blob`, or None (and a note) when the blob is not the one its digest names."""
        if _digest(blob) != digest:
            self._damaged(rel, "a stored blob differs from its digest")
            return None
        try:
            return pickle.loads(blob)
        except Exception as error:  # sealed and whole, yet unreadable: pickled by other code (a class that changed)
            self._damaged(rel, f"{type(error).__name__}")
            return None

    def _rebuild(
        self, config: Config, vocabulary: Vocabulary | None, rel: str, stored: Loaded, derived: dict[str, Any]
    ) -> Entry:
        """The entry of an unchanged file: its text, data and model are read when first asked for; its source is the
        last run's, with the positions found in it, when that run read the same bytes."""
        later = _Later(self, config, vocabulary, rel, stored)
        previous = self._entries.get(rel)
        source = (
            None
            if stored.model is None
            else previous.source
            if previous is not None and previous.digest == stored.digest and previous.source is not None
            else Source.deferred(rel, later, stored.omitted)
        )
        return Entry.deferred(
            expected_id(rel, config.records), rel, source, later, stored.summary, stored.digest, dict(derived)
        )


def _loads_to_store(
    config: Config, results: list[tuple[Entry, list[Diagnostic]]], read_before: int, *, keep_derived: bool
) -> Iterator[tuple[str, Loaded]]:
    """What an answer-first run loaded, to store: keyed by the digest of the bytes each file's text was decoded from
    and the stat they were read under (`Source.witness`), when that stat proves them (unchanged since `read_before`,
    `untrusted_since` the run began); else by the digest of its bytes as read now, and only where they still decode to
    the text that was loaded (a file saved since is loaded again by the next run). With what its stages derived from
    each file when `keep_derived` (else the next run derives it again). Its stages kept nothing keyed by other files
    (`flopkb.links.memo`: no entry had a digest)."""
    trusted_before = untrusted_since()
    for entry, diagnostics in results:
        source = entry.source
        if source is None:
            continue  # a file that did not parse costs little to load again
        witness = source.witness
        stat = None if witness is None else trusted_read(witness.stat, read_before)
        if witness is not None and stat is not None:  # a file of this stat holds the bytes read: no need to read it
            digest = witness.digest(source.text)
        else:  # a stat too recent to prove the bytes read (or none): the file's stat now may
            try:
                status = config.files.stat(entry.path)
            except OSError:
                continue
            raw = _read_bytes(config, entry.path)
            if raw is None or decode(raw, entry.path) != source.text:
                continue
            digest, stat = content_digest(raw), trusted_stat(status, trusted_before)
        model = (source.data, entry.record)
        loaded = Loaded(
            digest,
            stat,
            entry.summary,
            tuple(diagnostics),
            model,
            entry.derived if keep_derived else {},
            (b"", b""),
            source.omitted or None,
        )
        yield entry.path, loaded


def _read_bytes(config: Config, rel: str) -> bytes | None:
    try:
        return config.files.read(rel)
    except Unreadable:
        return None  # loading the file reports why


def _digest(raw: bytes | Pickled) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


class _Later:
    """What a deferred source and entry ask for (`Source.deferred`, `Entry.deferred`): an unchanged file's text, data
    and model.

    The data and model are unpickled from the stored pickle when first asked for, once checked against its digest (else
    the file is loaded again). The text is read from the file and checked against its digest: were the file changed (or
    removed) since the start of the run, its stored data has no text, and it is empty (positions in it are 1:1 for
    this run; the next run loads the new content).
    """

    __slots__ = ("_cache", "_config", "_digest", "_model", "_model_digest", "_rel", "_vocabulary")

    def __init__(
        self, cache: FileCache, config: Config, vocabulary: Vocabulary | None, rel: str, stored: Loaded
    ) -> None:
        self._cache, self._config, self._vocabulary, self._rel = cache, config, vocabulary, rel
        self._digest, self._model, self._model_digest = stored.digest, stored.model, stored.digests[0]

    def text(self) -> str:
        raw = _read_bytes(self._config, self._rel)
        if raw is None or content_digest(raw) != self._digest:
            return ""
        text = decode(raw, self._rel)
        return text if isinstance(text, str) else ""

    def data(self) -> dict[str, Any]:
        return self._get()[0]

    def record(self) -> Record | None:
        return None if self._model is None else self._get()[1]

    def _get(self) -> Model:
        model = self._model
        if isinstance(model, PICKLED):
            model = self._cache._unpickled(self._rel, model, self._model_digest)
            if not (isinstance(model, tuple) and len(model) == 2):
                entry, _ = load_entry(self._config, self._rel, self._vocabulary)
                model = (entry.source.data if entry.source is not None else {}, entry.record)
            self._model = model
        assert model is not None, "a file without a source has no model to read"
        return model


def _changed(derived: dict[str, Any], stored: dict[str, Any]) -> bool:
    """Whether a stage added or replaced something (values are compared by identity: they may be large).

    A file loaded in this run keeps its entry's own dict (its shard is rewritten anyway): whatever stages put in it
    is kept already, and a diff's first side does not copy 10,000 of them.
    """
    return derived is not stored and (
        derived.keys() != stored.keys() or any(derived[name] is not stored[name] for name in derived)
    )

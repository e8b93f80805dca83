"""The incremental check: what loading one file produced, kept on disk and keyed by the file's content.

Loading (parse + validate) is the per-file part of the pipeline and most of a
cold check's time. The cache stores, for every record file, the blake2b
digest of its bytes, its parsed data, its record model and its load
diagnostics, as pickles under the configured cache folder
(`build/cache/check/`). The next run still reads every file (reading and
hashing 10,000 small files is a fraction of a second), takes the stored result
of every file whose digest is unchanged and loads only the others. Stages that
span files (links, graph, formulas) always re-run on the whole knowledge base.

A cached entry is the same as a fresh one: its `Source` is rebuilt from the
file's text and the stored data, and finds positions on demand, as a freshly
parsed one does. Stages can keep per-file work in the cache too: what they put
in `entry.derived` (picklable, computed from that file, or keyed by the
`entry.digest` of every file it depends on) is stored with the file and comes
back while the file is unchanged.

Files are spread over `SHARDS` pickles by a hash of their path, so that a run
that changed one file rewrites one small shard, not the whole cache. Each
shard carries the cache key; a shard whose key differs is thrown away,
silently: the key covers the cache format, the Python and pydantic versions,
the flopkb version and the digest of flopkb's own code, the records folder
setting, and the vocabulary. A shard that cannot be read (truncated, corrupt,
from elsewhere) is ignored, and its files loaded again. Shards are written
atomically (a temporary file, then a rename), so a crash or a parallel run
never leaves half a shard behind. The cache is local build output and is
unpickled: never put a cache from an untrusted source there.
"""

from __future__ import annotations

import gc
import hashlib
import pickle
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pydantic

import flopkb
from flopkb.atomic import write_atomically
from flopkb.config import Config
from flopkb.diagnostics import Diagnostic
from flopkb.loader import Source, decode
from flopkb.models import Record
from flopkb.pipeline import Entry, load_entries
from flopkb.validate import expected_id
from flopkb.vocabulary import Vocabulary

CACHE_FOLDER = "check"
SHARDS = 64
FORMAT = 2
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_PACKAGE = Path(flopkb.__file__).parent


@dataclass(frozen=True, slots=True)
class _Loaded:
    """What loading one file produced: enough to rebuild its entry without parsing it."""

    digest: bytes
    data: dict[str, object] | None
    record: Record | None
    diagnostics: tuple[Diagnostic, ...]
    derived: dict[str, Any]
    """`Entry.derived`: what later stages computed from the file."""


_MISSING = _Loaded(b"", None, None, (), {})


class FileCache:
    """An `EntryLoader` (see `flopkb.pipeline`) that loads only the files that changed since the last run.

    One instance can serve many runs (as `check --watch` does): the stored
    results are read from disk once and then kept in memory. `save` writes
    back the shards that a run changed.
    """

    def __init__(self, config: Config) -> None:
        self.folder = config.root / config.cache_dir / CACHE_FOLDER
        self._key: bytes | None = None
        self._loaded: dict[str, _Loaded] = {}
        self._entries: dict[str, Entry] = {}
        self._dirty: set[int] = set()
        """The shards to write."""

    def __call__(self, config: Config, files: list[str], vocabulary: Vocabulary | None) -> list[tuple[Entry, list[Diagnostic]]]:
        key = cache_key(config, vocabulary)
        if key != self._key:
            self._key = key
            self._loaded, self._dirty = self._read(key)
        root = str(config.root)
        contents = {rel: raw for rel in files if (raw := _read_bytes(f"{root}/{rel}")) is not None}
        digests = {rel: _digest(raw) for rel, raw in contents.items()}
        stale = [rel for rel in files if rel not in digests or self._loaded.get(rel, _MISSING).digest != digests[rel]]
        fresh = dict(zip(stale, load_entries(config, stale, vocabulary)))
        results = []
        loaded: dict[str, _Loaded] = {}
        for rel in files:
            if rel in fresh:
                entry, diagnostics = fresh[rel]
                if rel in digests:  # an unreadable file is not stored
                    entry.digest = digests[rel]
                    loaded[rel] = _Loaded(entry.digest, entry.source.data if entry.source else None, entry.record, tuple(diagnostics), {})
            else:
                stored = loaded[rel] = self._loaded[rel]
                entry, diagnostics = _rebuild(config, rel, contents[rel], stored), list(stored.diagnostics)
            results.append((entry, diagnostics))
        self._dirty.update(map(shard_of, stale))
        self._dirty.update(map(shard_of, self._loaded.keys() - loaded.keys()))
        self._loaded = loaded
        self._entries = {entry.path: entry for entry, _ in results}
        return results

    def save(self) -> None:
        """Write the shards that the last run (or what stages derived since) changed.

        A cache folder that cannot be written, or derived data that cannot be pickled, is skipped: the next run loads again.
        """
        self._keep_derived()
        if not self._dirty or self._key is None:
            return
        by_shard: dict[int, dict[str, _Loaded]] = {shard: {} for shard in self._dirty}
        for rel, loaded in self._loaded.items():
            if shard_of(rel) in by_shard:
                by_shard[shard_of(rel)][rel] = loaded
        enabled = gc.isenabled()
        gc.disable()  # pickling allocates a little per model, which the collector would rescan many times
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for shard, content in by_shard.items():
                path = self.folder / _shard_name(shard)
                if content:
                    write_atomically(path, pickle.dumps(self._key, protocol=_PROTOCOL) + pickle.dumps(content, protocol=_PROTOCOL))
                else:
                    path.unlink(missing_ok=True)
                self._dirty.discard(shard)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            return
        finally:
            if enabled:
                gc.enable()

    def _keep_derived(self) -> None:
        for rel, entry in self._entries.items():
            stored = self._loaded.get(rel)
            if stored is not None and _changed(entry.derived, stored.derived):
                self._loaded[rel] = replace(stored, derived=dict(entry.derived))
                self._dirty.add(shard_of(rel))

    def _read(self, key: bytes) -> tuple[dict[str, _Loaded], set[int]]:
        """The stored results under `key`, and the shards on disk that hold none (to rewrite or remove)."""
        loaded: dict[str, _Loaded] = {}
        unusable = set()
        for shard in range(SHARDS):
            path = self.folder / _shard_name(shard)
            content = _read_shard(path, key)
            if content is None:
                unusable.add(shard)
            loaded.update(content or {})
        return loaded, unusable


def shard_of(rel: str) -> int:
    """The shard that stores the file at `rel`: stable across runs and machines."""
    return zlib.crc32(rel.encode()) % SHARDS


def _shard_name(shard: int) -> str:
    return f"{shard:02d}.pickle"


def _read_shard(path: Path, key: bytes) -> dict[str, _Loaded] | None:
    """What a shard stores: empty when it does not exist, None when it exists but cannot be used."""
    try:
        with path.open("rb") as stream:
            if pickle.load(stream) != key:
                return None
            loaded = pickle.load(stream)
    except FileNotFoundError:
        return {}
    # A cache is only ever a shortcut: whatever is wrong with a shard (truncated, corrupt,
    # written by other code), the answer is to load its files.
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(loaded, dict) or not all(isinstance(item, _Loaded) for item in loaded.values()):
        return None
    return loaded


def cache_key(config: Config, vocabulary: Vocabulary | None) -> bytes:
    """What every stored result depends on besides its file: code, versions, settings and vocabulary."""
    key = hashlib.blake2b(digest_size=20)
    for part in (str(FORMAT), str(SHARDS), sys.version, pydantic.VERSION, flopkb.__version__, config.records, repr(vocabulary)):
        key.update(part.encode())
        key.update(b"\0")
    for path in _code_files():
        key.update(path.read_bytes())
    return key.digest()


def _code_files() -> Iterator[Path]:
    """flopkb's own code and data: a changed compiler must not reuse results of the old one."""
    return (path for path in sorted(_PACKAGE.rglob("*")) if path.suffix in (".py", ".txt") and path.is_file())


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as stream:  # not pathlib: its overhead is a third of the time on 10,000 small files
            return stream.read()
    except OSError:
        return None  # loading the file reports why


def _digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


def _rebuild(config: Config, rel: str, raw: bytes, stored: _Loaded) -> Entry:
    source = None
    if stored.data is not None:
        text = decode(raw, rel)
        assert isinstance(text, str), "a file with stored data decoded before"
        source = Source(rel, text, stored.data)
    return Entry(expected_id(rel, config.records), rel, source, stored.record, stored.digest, dict(stored.derived))


def _changed(derived: dict[str, Any], stored: dict[str, Any]) -> bool:
    """Whether a stage added or replaced something (values are compared by identity: they may be large)."""
    return derived.keys() != stored.keys() or any(derived[name] is not stored[name] for name in derived)

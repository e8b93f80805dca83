"""The load cache's shards: what one file's load keeps (`Loaded`) and the file format that holds many of them.

A shard file is a sealed head (`flopkb.sealed`: the cache key, a header, the
pickled entries), then the blobs of the pickled models and derived data,
written out of band and read back as views into the file's bytes. See
`flopkb.pipeline.cache` for how shards are used.
"""

from __future__ import annotations

import copyreg
import hashlib
import io
import os
import pickle
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from flopkb.config import Config
from flopkb.kb.entry import RecordSummary
from flopkb.load.files import Unreadable, read_bytes
from flopkb.load.models import Record, model_classes
from flopkb.load.omitted import Omitted
from flopkb.load.vocabulary import Vocabulary
from flopkb.pipeline.keys import code_key
from flopkb.pipeline.stats import Stat
from flopkb.report.diagnostics import Diagnostic
from flopkb.sealed import seal, unseal

SHARDS = 64
FORMAT = 6
"""The version of what a shard holds: a change of it makes every stored shard's key differ."""
MAX_SHARD_BYTES = 1 << 28
"""A larger shard is not read (10,000 records of about 4 KB take 1 MB a shard)."""
_SEAL_PURPOSE = b"flopkb-shard"
_HEAD_LENGTH = 8
_PROTOCOL = pickle.HIGHEST_PROTOCOL

Model = tuple[dict[str, Any], Record | None]
"""A file's parsed data and its record model (None when it did not validate)."""


class Loaded(NamedTuple):
    """What loading one file produced: enough to rebuild its entry without reading or parsing it.

    A named tuple, not a dataclass: 10,000 of them are unpickled on every run, and a tuple unpickles fastest.
    """

    digest: bytes
    stat: Stat | None
    """The file's stat when it was read, if old enough to be trusted; None: hash the file again next time."""
    summary: RecordSummary
    diagnostics: tuple[Diagnostic, ...]
    model: Pickled | Model | None
    """The pickled `Model` (as stored), or the model itself (loaded by this process); None when the file did not
    parse."""
    derived: Pickled | dict[str, Any]
    """`Entry.derived`, what later stages computed from the file: pickled (as stored), or as a stage left it in this
    process.

    Pickled apart from the rest, so that rewriting a shard costs little for the files whose derived data is as stored
    (once unpickled, it stays so in the process that holds the cache: `FileCache._write`).
    """
    digests: tuple[bytes, bytes]
    """The digests of the pickled `model` and `derived` (b"" for one not pickled), checked before it is unpickled."""
    omitted: Omitted | None = None
    """What validation left out of the file (`Source.omitted`: list items its data is without, fields the schema told
    wrong); None for nothing, as for most files."""


def with_blobs(
    loaded: Loaded, model: Pickled | Model | None, derived: Pickled | dict[str, Any], digests: tuple[bytes, bytes]
) -> Loaded:
    """`loaded` with another model and derived data: `_replace` without its generic (and, 30,000 times, slow) path."""
    return Loaded(
        loaded.digest, loaded.stat, loaded.summary, loaded.diagnostics, model, derived, digests, loaded.omitted
    )


def shard_of(rel: str) -> int:
    """The shard that stores the file at `rel`: stable across runs and machines."""
    return zlib.crc32(rel.encode()) % SHARDS


def shard_name(shard: int) -> str:
    return f"{shard:02d}.pickle"


def model_pickler() -> Callable[[Model], bytes]:
    """A function that pickles a `Model` a call, as `pickle.dumps` would, in two thirds of its time: with one pickler
    for every call (not one a call), which names no model class (pickle finds each class it names by importing its
    module: 3 µs a class and call, once per file for the record's class and for each of its parts')."""
    stream = io.BytesIO()
    pickler = _ModelPickler(stream, protocol=_PROTOCOL)

    def dumps(model: Model) -> bytes:
        stream.seek(0)
        stream.truncate()
        pickler.clear_memo()
        pickler.dump(model)
        return stream.getvalue()

    return dumps


def _model(name: str, values: dict[str, Any], fields_set: set[str]) -> BaseModel:
    """A model pickled by `model_pickler` (what pydantic's `__setstate__` does, the class found by name)."""
    model = _MODEL_CLASSES[name].__new__(_MODEL_CLASSES[name])
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", fields_set)
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def _reduce_model(model: BaseModel) -> Any:
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.__reduce_ex__(_PROTOCOL)  # none has either (extra fields are forbidden): as pickle would
    return _model, (type(model).__name__, model.__dict__, model.__pydantic_fields_set__)


_MODEL_CLASSES = {model.__name__: model for model in model_classes()}


class _Reducers(dict[type, Callable[[Any], Any]]):
    """The models' reduction, and `copyreg`'s for everything else (a pickler's own table replaces it)."""

    def __missing__(self, kind: type) -> Callable[[Any], Any]:
        return copyreg.dispatch_table[kind]


class _ModelPickler(pickle.Pickler):
    dispatch_table = _Reducers.fromkeys(_MODEL_CLASSES.values(), _reduce_model)


def _fields(named: tuple[Any, ...]) -> tuple[type, tuple[Any, ...]]:
    return type(named), tuple(named)


class _EntriesPickler(pickle.Pickler):
    """Pickles a shard's entries, each named tuple by its fields: pickle's own way asks each for them in Python, a
    third slower to write and to read."""

    dispatch_table = _Reducers.fromkeys((Loaded, RecordSummary), _fields)


Pickled = bytes | memoryview | pickle.PickleBuffer
"""How a pickled model or derived dict is held: bytes, a view into the shard file it was read from, or (only while a
shard is written) the buffer that pickles it out of band."""
PICKLED = (bytes, memoryview, pickle.PickleBuffer)


class Damaged(Exception):
    """Why a shard cannot be used, in a few words."""


def shard_bytes(key: bytes, content: dict[str, Loaded]) -> bytes:
    """A shard file: the sealed head (the key, a header with the length of the entries' pickle and of each blob, the
    entries), then the blobs.

    The pickled models and derived data (most of the bytes), given as
    `PickleBuffer`s, are written out of band (pickle protocol 5), after the
    head, and read back as views into the file's bytes: never copied, and
    unpickled only when asked for (after their digest, kept in the sealed
    entries, is checked).
    """
    blobs: list[pickle.PickleBuffer] = []
    stream = io.BytesIO()
    _EntriesPickler(stream, protocol=5, buffer_callback=blobs.append).dump(content)
    entries = stream.getvalue()
    views = [blob.raw() for blob in blobs]
    header = pickle.dumps((len(entries), [view.nbytes for view in views]), protocol=_PROTOCOL)
    head = seal(_SEAL_PURPOSE, b"".join([key, header, entries]))
    return b"".join([len(head).to_bytes(_HEAD_LENGTH, "little"), head, *views])


def read_shard(path: Path, key: bytes) -> dict[str, Loaded] | None:
    """What a shard stores: empty when it does not exist, None when it is of another key (another flopkb, another
    vocabulary); `Damaged` when it cannot be used."""
    try:
        raw = read_bytes(str(path), limit=MAX_SHARD_BYTES)
    except Unreadable as error:
        if not os.path.lexists(path):
            return {}
        raise Damaged(str(error).removeprefix("the file ").replace("record", "cache")) from error
    view = memoryview(raw)
    size = int.from_bytes(view[:_HEAD_LENGTH], "little")
    head = unseal(_SEAL_PURPOSE, view[_HEAD_LENGTH : _HEAD_LENGTH + size])
    if len(raw) < _HEAD_LENGTH or head is None:
        raise Damaged("not sealed by this user's flopkb, or damaged")
    if head[: len(key)] != key:
        return None
    # A sealed head was written by this user's flopkb: what could still fail is a bug, or a format change that the
    # key did not catch. The answer is the same as for a damaged shard: load its files.
    try:
        stream = io.BytesIO(head[len(key) :])
        entries_size, lengths = pickle.load(stream)
        start = len(key) + stream.tell()
        blobs, offset = [], _HEAD_LENGTH + size
        for length in lengths:
            blobs.append(view[offset : offset + length])
            offset += length
        if offset != len(raw):
            raise Damaged("its blobs are not the length its head says")
        loaded = pickle.loads(head[start : start + entries_size], buffers=blobs)
    except Damaged:
        raise
    except Exception as error:
        raise Damaged(type(error).__name__) from error
    if not isinstance(loaded, dict) or not all(isinstance(item, Loaded) for item in loaded.values()):
        raise Damaged("it holds something else than entries")
    return loaded


def cache_key(config: Config, vocabulary: Vocabulary | None) -> bytes:
    """What every stored result depends on besides its file: code, versions, the cache's format, settings and
    vocabulary."""
    key = hashlib.blake2b(code_key(), digest_size=20)
    for part in (str(FORMAT), str(SHARDS), config.records, repr(vocabulary)):
        key.update(part.encode())
        key.update(b"\0")
    return key.digest()

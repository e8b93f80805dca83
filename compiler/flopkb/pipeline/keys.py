"""What a check's stored results depend on besides the base's files: flopkb's code and the versions it runs on
(`code_key`), and for the load cache, the settings and vocabulary that files are loaded with (`cache_key`)."""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pydantic

import flopkb
from flopkb.config import Config
from flopkb.load.vocabulary import Vocabulary
from flopkb.pipeline.shards import SHARDS

FORMAT = 5
"""The load cache's format."""
_PACKAGE = Path(flopkb.__file__).parent


def cache_key(config: Config, vocabulary: Vocabulary | None) -> bytes:
    """What every stored result depends on besides its file: code, versions, settings and vocabulary."""
    key = hashlib.blake2b(code_key(), digest_size=20)
    for part in (config.records, repr(vocabulary)):
        key.update(part.encode())
        key.update(b"\0")
    return key.digest()


@functools.cache
def code_key() -> bytes:
    """The code that computes what is stored: the cache's format, the Python, pydantic and flopkb versions, and the
    digest of flopkb's code."""
    key = hashlib.blake2b(digest_size=20)
    for part in (str(FORMAT), str(SHARDS), sys.version, pydantic.VERSION, flopkb.__version__):
        key.update(part.encode())
        key.update(b"\0")
    key.update(_code_digest())
    return key.digest()


@functools.cache
def _code_digest() -> bytes:
    """The digest of flopkb's code, once a process: the code it runs is the code it imported (a server checks on
    every keystroke, and hashing every module each time cost tens of milliseconds)."""
    digest = hashlib.blake2b(digest_size=20)
    for path in _code_files():
        digest.update(path.read_bytes())
    return digest.digest()


def _code_files() -> Iterator[Path]:
    """flopkb's own code and data: a changed compiler must not reuse results of the old one."""
    return (path for path in sorted(_PACKAGE.rglob("*")) if path.suffix in (".py", ".txt", ".j2") and path.is_file())

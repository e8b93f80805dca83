"""flopkb's code and the versions it runs on (`code_key`): what every result a check stores depends on besides the
base's files (the load cache, `flopkb.pipeline.shards.cache_key`; the stored diagnostics, `flopkb.pipeline.verdict`).

Light to import: `flopkb lsp` tells whether the stored diagnostics hold before it imports the pipeline.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

from pydantic.version import VERSION as PYDANTIC_VERSION

import flopkb

_PACKAGE = Path(flopkb.__file__).parent


def code_key() -> bytes:
    """The Python, pydantic and flopkb versions, and the digest of flopkb's code."""
    key = hashlib.blake2b(digest_size=20)
    for part in (sys.version, PYDANTIC_VERSION, flopkb.__version__):
        key.update(part.encode())
        key.update(b"\0")
    key.update(_code_digest())
    return key.digest()


@functools.cache
def _code_digest() -> bytes:
    """The digest of flopkb's code, once a process: the code it runs is the code it imported (a
    server checks on every keystroke, and hashing every module each time cost tens of milliseconds)."""
    digest = hashlib.blake2b(digest_size=20)
    for path in _code_files():
        digest.update(path.read_bytes())
    return digest.digest()


def _code_files() -> Iterator[Path]:
    """flopkb's own code and data: a changed compiler must not reuse results of the old one."""
    return (path for path in sorted(_PACKAGE.rglob("*")) if path.suffix in (".py", ".txt", ".j2") and path.is_file())

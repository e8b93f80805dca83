"""Files that only this user's flopkb wrote: a per-user key kept outside every repository, and a seal made with it.

flopkb keeps two caches that hold code once read back: the load cache's
pickles (`flopkb.pipeline.cache`) and jinja2's compiled templates
(`flopkb.site.publishing.template_cache`). Whoever can put such a file where flopkb
reads it runs code as the user: a pull request that commits a cache folder,
a setting that points the cache at a committed one. So every one of those
files is sealed: it starts with a keyed blake2b digest of its content, made
with a random key that flopkb created for this user in the user's cache
folder (`$XDG_CACHE_HOME/flopkb/key`, else `~/.cache/flopkb/key`; mode 0600,
never inside a knowledge base). A file is used only when its seal is the one
the key gives (`unseal`), checked before a byte of it is unpickled. A file
from a clone, another machine or another user has no valid seal: it is
ignored, and what it held is computed again.

The key is refused (no cache: every file is loaded again) when it is not a
regular file of 32 bytes, owned by the user and readable by no one else.

The folders a cache writes into (`own_folder`) must be real folders, never
symlinks: `cache_dir` may lie inside the base, whose files are a pull
request's, and a committed `<cache_dir>/check -> /elsewhere` would send the
cache's files, its lock file and the removal of its stale files there. Such a
cache is off for the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from functools import cache
from pathlib import Path

from flopkb.load.files import Unreadable, read_bytes

KEY_BYTES = 32
SEAL_BYTES = 32
KEY_NAME = "key"


class NoKey(Exception):
    """The user's key cannot be made or trusted: nothing sealed can be written or read (caches are off)."""


class NotOwnFolder(OSError):
    """A cache's folder is a symlink, or not a folder: nothing is written through it (that cache is off)."""


def cache_home() -> Path | None:
    """The user's cache folder for flopkb: `$XDG_CACHE_HOME/flopkb`, else `~/.cache/flopkb`; None without a home."""
    given = os.environ.get("XDG_CACHE_HOME", "")
    if given and os.path.isabs(given):  # the XDG rule: a relative value is ignored
        return Path(given) / "flopkb"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "flopkb" if os.path.isabs(home) else None


def base_cache_folder(root: Path) -> Path | None:
    """The cache folder of the knowledge base at `root`, in the user's cache folder, keyed by the base's real path."""
    home = cache_home()
    if home is None:
        return None
    digest = hashlib.blake2b(os.fsencode(root.resolve()), digest_size=10).hexdigest()
    return home / "bases" / f"{root.resolve().name[:40]}-{digest}"


def own_folder(folder: Path) -> Path:
    """`folder`, a cache's, made with its parents when missing; `NotOwnFolder` when it is there as a symlink (to a
    folder or not) or as anything but a folder, `OSError` when it cannot be made. A real folder below the cache folder
    (resolved by `flopkb.config`) lies where its path says."""
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        if not stat.S_ISDIR(folder.lstat().st_mode):
            raise NotOwnFolder(f"{folder} is a symlink or a file, not a folder; nothing is cached there") from None
    return folder


def seal(purpose: bytes, content: bytes) -> bytes:
    """`content` with its seal before it: what `unseal` accepts, with the same `purpose`, for this user alone."""
    return _mac(purpose, content) + content


def unseal(purpose: bytes, sealed: bytes | memoryview) -> memoryview | None:
    """The content of a sealed file, or None when its seal is not this user's key's (or there is no key)."""
    view = memoryview(sealed)
    if len(view) < SEAL_BYTES:
        return None
    try:
        expected = _mac(purpose, view[SEAL_BYTES:])
    except NoKey:
        return None
    return view[SEAL_BYTES:] if hmac.compare_digest(expected, view[:SEAL_BYTES]) else None


def _mac(purpose: bytes, content: bytes | memoryview) -> bytes:
    return hashlib.blake2b(content, key=user_key(), person=purpose[:16], digest_size=SEAL_BYTES).digest()


def user_key() -> bytes:
    """The user's key: read from the user's cache folder, made there (0600) the first time; `NoKey` if it cannot be."""
    home = cache_home()
    if home is None:
        raise NoKey("no home folder to keep the cache key in")
    return _key_in(home)


@cache
def _key_in(home: Path) -> bytes:
    path = home / KEY_NAME
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=home, prefix=".key-", suffix=".tmp")  # 0600
        try:
            os.write(handle, secrets.token_bytes(KEY_BYTES))
            os.fsync(handle)
            os.close(handle)
            with contextlib.suppress(FileExistsError):  # never replace a key another run made meanwhile: read it
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
        return _read_key(path)
    except OSError as error:
        raise NoKey(f"cannot make the cache key {path}: {error.strerror or error}") from error


def _read_key(path: Path) -> bytes:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise NoKey(f"cannot read the cache key {path}: {error.strerror}") from error
    if not stat.S_ISREG(status.st_mode) or status.st_mode & 0o077 or status.st_uid != os.getuid():
        raise NoKey(f"the cache key {path} is not a private file of this user (mode 0600): caches are off")
    try:
        key = read_bytes(str(path), limit=KEY_BYTES)
    except Unreadable as error:
        raise NoKey(f"the cache key {path}: {error}") from error
    if len(key) != KEY_BYTES:
        raise NoKey(f"the cache key {path} is not {KEY_BYTES} bytes: caches are off")
    return key

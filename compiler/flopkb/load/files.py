"""Reading a record file: only regular files, and never more than the size limit allows; its bytes as text (`decode`).

A FIFO named like a record would block `open()` until some writer came; a
symlink to `/dev/zero` or `/dev/urandom` never ends. The file is therefore
opened without blocking, refused unless `fstat` says it is a regular file,
and read at most one byte past the limit, so that nothing larger is ever
allocated. A file of /proc (`/proc/self/environ`) says it is a regular file
of 0 bytes, and is refused when it reads as more.

A record file may be a symlink (a pull request's, like every file of the
base): one that leads out of the folder it is in (the records', the vocabulary's),
or into the base's `.git`, is refused unread, or its bytes
(`~/.docker/config.json`, a CI machine's files, a key file or `.npmrc` that
a CI step wrote into the checkout, the token actions/checkout keeps in
`.git/config`) would come back in diagnostics, in the CI log. The file is opened with `O_NOFOLLOW` first, so
that the realpath is only asked for files that are symlinks: no cost per file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from flopkb.load.positions import LineIndex
from flopkb.report.diagnostics import Diagnostic, make

MAX_FILE_BYTES = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_A_LINK = (errno.ELOOP, errno.EMLINK)
"""What `open` with `O_NOFOLLOW` fails with on a symlink (Linux, macOS: ELOOP; FreeBSD: EMLINK)."""


class Unreadable(Exception):
    """Why a file cannot be a record, in words for a diagnostic."""


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path`, or `Unreadable` (also for more than `limit` bytes)."""
    return read_stat(path, limit)[0]


def read_in_base(root: str, rel: str, folders: Iterable[str]) -> bytes:
    """The bytes of the file `rel` of the base at `root`, or `Unreadable` (`read_stat_in_base`)."""
    return read_stat_in_base(root, rel, folders)[0]


def read_stat_in_base(root: str, rel: str, folders: Iterable[str]) -> tuple[bytes, os.stat_result]:
    """`read_stat` of the file `rel` of the base at `root`; `Unreadable` also for a symlink that leads out of the one of
    `folders` (root-relative: the records', the vocabulary's) that `rel` is in, or into the base's `.git`."""
    folder = next((folder for folder in folders if rel.startswith(f"{folder.rstrip('/')}/")), "")
    return read_stat(f"{root}/{rel}", within=(root, folder))  # not pathlib: half the cost of 10,000 reads


def read_stat(
    path: str, limit: int = MAX_FILE_BYTES, within: tuple[str, str] | None = None
) -> tuple[bytes, os.stat_result]:
    """`read_bytes`, with the stat of the file they were read from: `fstat` of the open file, taken before the read.
    `within`: the base and the folder of it that a symlink at `path` must lead into."""
    try:
        fd = _open(path, within)
    except OSError as error:
        raise Unreadable(f"the file cannot be read: {error.strerror}") from error
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise Unreadable(f"{_kind(status.st_mode)} is not a record file; records are regular files")
        # One read of the size fstat gave, plus a byte to see the end; more only for a file that grew meanwhile.
        chunks = [os.read(fd, min(status.st_size, limit) + 1)]
        read = len(chunks[0])
        while chunks[-1] and read <= limit:
            chunks.append(os.read(fd, limit + 1 - read))
            read += len(chunks[-1])
        raw = b"".join(chunks)
        if raw and not status.st_size and not os.fstat(fd).st_size:  # still "empty": not a file that grew meanwhile
            raise Unreadable(
                "a file the system makes up as it is read (/proc) is not a record file; records are regular files"
            )
    except OSError as error:
        raise Unreadable(f"the file cannot be read: {error.strerror}") from error
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise Unreadable(f"the file has more than {limit:,} bytes; records are limited to {limit:,}")
    return raw, status


def _open(path: str, within: tuple[str, str] | None) -> int:
    """A descriptor of the file at `path`; `Unreadable` when it is a symlink that leads out of the folder `within`
    names, or into its base's `.git`. Where there is no `O_NOFOLLOW` (Windows, whose git checks symlinks out as text
    files) a link is followed."""
    if within is not None:
        try:
            return os.open(path, _OPEN_FLAGS | _NO_FOLLOW)
        except OSError as error:
            if error.errno not in _A_LINK:
                raise
        root, folder = within
        if lands_inside(path, os.path.join(root, ".git")):
            raise Unreadable("a symlink into .git is not a record file")
        if not lands_inside(path, os.path.join(root, folder)):
            out_of = f"{folder}/" if folder else "the knowledge base"
            raise Unreadable(f"a symlink that leads out of {out_of} is not a record file; copy the file in")
    return os.open(path, _OPEN_FLAGS)


def lands_inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether `path`, every symlink on its way followed, lies in `folder` (whose own symlinks are followed too)."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def decode(raw: bytes, path: str) -> str | Diagnostic:
    """UTF-8 text without its BOM, or an `encoding` diagnostic at the first bad byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        before = raw[: err.start].decode("utf-8", errors="replace").removeprefix("\ufeff")
        line, column = LineIndex(before).position(len(before))
        byte = raw[err.start]
        message = f"the file is not UTF-8: byte 0x{byte:02x} is invalid here"
        return make("encoding", path, line, column, message, f"re-save the file as UTF-8{_read_as(byte)}")
    return text.removeprefix("\ufeff")


_NEW_RECORD = "`flopkb new <kind> <id>` writes a new record with every field to fill in"


def no_mapping(path: str, line: int, column: int, *, empty: bool) -> Diagnostic:
    """The `not-a-record` of a file that is `empty`, or whose top level is no mapping (at `line`:`column`)."""
    if empty:
        message, hint = "the file is empty", f"write a record in it, or delete it: {_NEW_RECORD}"
    else:
        message = "the top level is not a mapping"
        hint = f"write the record's fields as `key: value` lines at the top level; {_NEW_RECORD}"
    return make("not-a-record", path, line, column, f"{message}; a record is a mapping of fields", hint)


def _read_as(byte: int) -> str:
    """What `byte` most likely is, in the encoding an editor most likely saved the file in (`: 0xe9 is é in
    Latin-1`), or nothing for a byte that is no letter there."""
    for encoding, name in (("latin-1", "Latin-1"), ("cp1252", "Windows-1252")):
        try:
            letter = bytes([byte]).decode(encoding)
        except UnicodeDecodeError:
            continue
        if letter.isprintable():
            return f": 0x{byte:02x} is {letter} in {name}"
    return ""

"""Write a file so that readers see the old content or the new, never a part of it, and never over a save.

Every write goes to a temporary file beside its target (`.<name>.<pid>-<random>.tmp`), renamed over the
target at the end. A replacement first checks that the target still holds the bytes the command read
(`replace_if_unchanged`): an author's save made meanwhile is left alone. A record without a write bit is
never replaced; a symlinked record is written through, the link kept, when the file it points to lies inside
the knowledge base (and is left alone otherwise). `write_atomically`, for flopkb's own files, never follows a
link: it replaces the link itself. A temporary file is removed when the
write fails or the process is interrupted (`interruptible` turns SIGTERM and SIGHUP into an exception), and
`sweep_temporaries` removes those of runs that were killed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from flopkb.load.files import Unreadable, lands_inside, read_bytes

_TEMPORARY = re.compile(r"\..+\.(?:(?P<pid>\d+)-)?[a-z0-9_]{8}\.tmp")
"""The name of a temporary file of this module (`.a.yaml.123-abcd1234.tmp`) or of earlier versions, without the
pid (`.a.yaml.abcd1234.tmp`)."""
_UNOWNED_AGE_SECONDS = 600.0
"""A temporary file without a pid is swept when it is older than this: its run cannot still be writing it."""


class WriteError(OSError):
    """A file cannot be written; the message is one line for the user (path and reason). An `OSError`, so that
    callers that give up quietly on any failure to write (the cache) still do."""


class LeftAlone(WriteError):
    """The file was not replaced, by choice: the message says why."""


class Changed(LeftAlone):
    """The file no longer holds what the command read: somebody saved it meanwhile."""


class ReadOnly(LeftAlone):
    """The file has no write permission."""


class LinkedOutside(LeftAlone):
    """The file is a symlink to a file outside the knowledge base."""


def write_atomically(path: Path, data: bytes) -> None:
    """Replace (or create) `path` with `data`: a temporary file in the same folder, renamed over it.

    An existing file keeps its permissions; a new one gets the usual ones (0666 less the umask), not the
    0600 of a temporary file. A symlink is replaced, never followed.
    """
    _replace(path, path, data, expected=None)


def replace_if_unchanged(path: Path, expected: bytes, data: bytes, within: Path) -> None:
    """Replace the record at `path` with `data` only if it still holds `expected` (`Changed` otherwise, the file
    untouched). A symlink is written through when the file it points to is inside the folder `within`."""
    target = path
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not lands_inside(target, within):
            raise LinkedOutside(f"{path}: it is a symlink to a file outside the knowledge base; left as it is")
    _replace(path, target, data, expected=expected)


def create_atomically(path: Path, data: bytes) -> None:
    """Create `path` holding `data`, whole or not at all; `FileExistsError` when a file (or link) is there."""
    mode = 0o666 & ~_umask()
    temporary = _write_temporary(path, data, mode)
    try:
        os.link(temporary, path)  # fails when `path` exists, atomically: no check-then-create window
    except FileExistsError:
        raise
    except OSError as error:
        raise _write_error(path, error) from error
    finally:
        Path(temporary).unlink(missing_ok=True)


def _replace(path: Path, target: Path, data: bytes, expected: bytes | None) -> None:
    """Replace `target` (`path`, or the file its link points to) with `data`, if it holds `expected` when given."""
    try:
        status: os.stat_result | None = None if target.is_symlink() else target.stat()  # a link is replaced as new
    except FileNotFoundError:
        status = None
    except OSError as error:
        raise _write_error(path, error) from error
    if expected is not None and status is None:
        raise Changed(f"{path}: it was removed since it was read; left as it is")
    if status is not None and not status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ReadOnly(f"{path}: the file is read-only; left as it is")
    mode = status.st_mode & 0o7777 if status is not None else 0o666 & ~_umask()
    temporary = _write_temporary(target, data, mode)
    try:
        if expected is not None and _current(target) != expected:
            raise Changed(f"{path}: it changed since it was read (saved meanwhile?); left as it is")
        os.replace(temporary, target)
    except LeftAlone:
        raise
    except OSError as error:
        raise _write_error(path, error) from error
    finally:
        Path(temporary).unlink(missing_ok=True)


def _current(path: Path) -> bytes | None:
    try:
        return read_bytes(str(path))
    except Unreadable:
        return None


def _write_temporary(target: Path, data: bytes, mode: int) -> str:
    """A temporary file beside `target` holding `data` with permissions `mode`; removed again if this fails."""
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp")
    except OSError as error:
        raise _write_error(target, error) from error
    try:
        try:
            written = memoryview(data)
            while written:
                written = written[os.write(handle, written) :]
        finally:
            os.close(handle)
        os.chmod(temporary, mode)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _write_error(target, error) from error
        raise
    return temporary


def _write_error(path: Path, error: OSError) -> WriteError:
    reason = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only"}.get(
        error.errno or 0, error.strerror or str(error)
    )
    return WriteError(f"{path}: cannot write: {reason}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sweep_temporaries(folder: Path, *, recursive: bool = True) -> list[Path]:
    """Remove the temporary files left in `folder` (and below, if `recursive`) by runs that were killed.

    A file named with a pid is a dead run's when that process is gone, or when it is older than the
    process now holding the pid; one without a pid (earlier versions) when it is older than ten minutes.
    """
    removed = []
    now = time.time()
    for parent, folders, names in os.walk(folder):
        if not recursive:
            folders.clear()
        for name in names:
            match = _TEMPORARY.fullmatch(name)
            if match is None:
                continue
            path = Path(parent) / name
            try:
                modified = path.lstat().st_mtime
            except OSError:
                continue
            pid = match["pid"]
            dead = _is_dead(int(pid), modified) if pid else now - modified > _UNOWNED_AGE_SECONDS
            if dead:
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(path)
    return sorted(removed)


def _is_dead(pid: int, modified: float) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's live process
        return False
    started = _start_time(pid)
    return started is not None and modified < started


def _start_time(pid: int) -> float | None:
    """When process `pid` started (epoch seconds), where /proc tells it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return time.time() - uptime + int(fields[19]) / ticks


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP raise `KeyboardInterrupt`, so that writes in progress clean up behind them."""

    def interrupt(number: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(signal.Signals(number).name)

    previous = {}
    for number in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if number is not None:
            with contextlib.suppress(ValueError):  # not the main thread: signals stay as they are
                previous[number] = signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)

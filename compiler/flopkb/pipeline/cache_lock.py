"""One writer of the load cache at a time, and readers that wait for it to finish.

The cache's shards are each written atomically, so a reader never sees half
a shard; but a run that reads while another writes may see some shards of
the old run and some of the new. More to the point, `flopkb check` writes
its cache after it has answered (`flopkb.pipeline.background`): a command run
right after it must wait for that write to end, or it would load every file
again. So a writer holds an exclusive `flock` on the cache folder's
`.lock` file while it writes, and a reader takes a shared one before it reads
(and lets it go once read).

Waiting is bounded (`WAIT_SECONDS`): a writer that hangs (a stopped process)
costs the reader the cache, never the answer. The lock file is opened as
records are (no symlink followed, never blocking on a FIFO, a regular file
only): a cache folder that a setting points into the repository may hold a
committed `.lock`, which is only ever locked, never read. Where there is no
`flock` (Windows), there is no lock: a run then reads what is on disk.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from flopkb.sealed import own_folder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"
WAIT_SECONDS = 60.0
"""How long a reader or a writer waits for the lock; a cache of 10,000 records is written in about a second."""
_POLL_SECONDS = 0.01
_OPEN_FLAGS = (
    os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


class Busy(Exception):
    """The lock was not had within the time allowed; the message says so in words for a note."""


def hold(folder: Path, exclusive: bool, wait: float = WAIT_SECONDS) -> int | None:
    """A descriptor of `folder`'s lock file (made, with the folder, when missing), locked shared or exclusive: closing
    its last copy lets the lock go. None where there are no locks; `Busy` after `wait` seconds, `OSError` when the
    lock file cannot be had (a link, a folder); `NotOwnFolder` when `folder` is a symlink (`flopkb.sealed`)."""
    own_folder(folder)
    if fcntl is None:
        return None
    fd = os.open(folder / LOCK_NAME, _OPEN_FLAGS, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{folder / LOCK_NAME} is not a regular file")
        _acquire(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, wait)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _acquire(fd: int, mode: int, wait: float) -> None:
    assert fcntl is not None
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise Busy(f"another flopkb kept the cache locked for over {wait:.0f} s") from None
            time.sleep(_POLL_SECONDS)

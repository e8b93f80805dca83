"""Where the load cache keeps its files, and when it trusts a file's stat to tell the file's content.

A file whose stat (size, modification and change times in nanoseconds,
inode) is the one kept holds what was loaded under it (`flopkb.pipeline.cache`);
but as git does with its index, a stat taken within `RACY_SECONDS` of the
file's last change is not trusted (a second write within the same timestamp
tick would keep it). The stored diagnostics of the last check
(`flopkb.pipeline.verdict`) hold by the same rule; this module imports
nothing heavy, so that `flopkb lsp` tells whether they hold before it
imports the pipeline.
"""

from __future__ import annotations

import os
import time

CACHE_FOLDER = "check"
"""The load cache's folder, in the base's cache folder (`Config.cache_path`)."""
RACY_SECONDS = 2
"""A file changed this recently when it was read has its stat kept as untrusted."""

Stat = tuple[int, int, int, int]
"""(size, mtime_ns, ctime_ns, inode) of a file."""


def untrusted_since(read: int | None = None) -> int:
    """A file changed since this time (in nanoseconds) has a stat not to be trusted when read now, or at `read` (see
    the module)."""
    return (time.time_ns() if read is None else read) - RACY_SECONDS * 1_000_000_000


def stat_of(status: os.stat_result) -> Stat:
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def trusted_stat(status: os.stat_result | None, trusted_before: int) -> Stat | None:
    """The stat to store of a file: None when it changed too recently to be trusted."""
    if status is None or max(status.st_mtime_ns, status.st_ctime_ns) >= trusted_before:
        return None
    return stat_of(status)


def trusted_read(stat: Stat | None, trusted_before: int) -> Stat | None:
    """`trusted_stat` of a stat kept as a `Stat`."""
    return None if stat is None or max(stat[1], stat[2]) >= trusted_before else stat

"""Work left after a command has answered, done by a detached process so that the command can end.

`flopkb check` answers, then writes its load cache for the next run: about a
second at 10,000 records that the author (or a script) would wait for,
although nothing of the answer depends on it. `after_exit` hands such work to
a grandchild process in a session of its own (as `git gc --auto` detaches),
with its standard streams on /dev/null: the command's output ends, and its
exit status is given, as soon as it has answered. What the work needs (the
compiled base) is the parent's memory, shared by `fork` at no cost.

The caller guards what the work writes (the load cache takes an exclusive
lock, inherited by the child and held until it ends: `flopkb.pipeline.cache_lock`),
so that the next command waits for it.

Only a program that owns its process detaches (the `flopkb` command, not a
test or a host that called `main`), and only where `fork` is safe: a
platform with `fork`, and a process running no other thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

_CHILD_FAILED = 1


def after_exit(work: Callable[[], None]) -> bool:
    """Run `work` in a detached grandchild; True once it is handed off, False when it cannot be (the caller runs it)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    try:
        child = os.fork()
    except OSError:
        return False
    if child:
        _, status = os.waitpid(child, 0)
        return os.waitstatus_to_exitcode(status) == 0
    try:  # the child: a session of its own (no terminal's Ctrl-C), then a grandchild that init adopts
        os.setsid()
        if os.fork():
            os._exit(0)
    except OSError:
        os._exit(_CHILD_FAILED)
    try:  # the grandchild
        _streams_to_null()
        work()
    finally:
        os._exit(0)  # never the parent's exit path: its atexit handlers and buffers are the parent's


def _streams_to_null() -> None:
    """Point standard input, output and error at /dev/null: a pipe that captures the command's output must end with
    the command, not with this child."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

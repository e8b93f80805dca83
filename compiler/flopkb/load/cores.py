"""How many cores other processes leave idle: whether parsing in worker processes can pay off.

Parallel parsing (`flopkb.pipeline.compile.read_sources`) pays about a second of CPU
on 10,000 files for sending the parsed data back from the workers (pickling,
pipes, unpickling), which only a free core repays: on a machine where another
job holds the other core, the serial parse finishes sooner (measured on the
shared two-core development machine: 4.0 s against 4.6 s for the whole check).

Like `make --load-average`, but measured over this process's own start (its
imports, the configuration, the listing of files: about 0.3 s, some 30 clock
ticks a core) from /proc/stat, rather than from the one-minute load average,
which the previous command of a script inflates. The answer only chooses how
files are parsed, never what is computed.
"""

from __future__ import annotations

import math
import os
import time


def _idle_ticks() -> tuple[float, int] | None:
    """(monotonic seconds, idle + iowait clock ticks of all cores) from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat", "rb") as stream:
            fields = stream.readline().split()
        return time.monotonic(), int(fields[4]) + int(fields[5])
    except (OSError, ValueError, IndexError):
        return None


_since = _idle_ticks()
"""Sampled when flopkb is imported (`flopkb/__init__.py` imports this module first), then at each `idle_cores` call."""
_SHORTEST = 0.1
"""A shorter window (ten clock ticks a core) says too little: it counts as unknown."""


def idle_cores() -> float:
    """How many cores sat idle, on average, since flopkb was imported or this was last asked; infinity when unknown."""
    global _since
    then, now = _since, _idle_ticks()
    if then is None or now is None or now[0] - then[0] < _SHORTEST:
        return math.inf
    _since = now  # a process that loads again (check --watch, serve) asks about the time since it last asked
    return (now[1] - then[1]) / (os.sysconf("SC_CLK_TCK") * (now[0] - then[0]))

"""The cyclic garbage collector paused around work that allocates in bulk: one mechanism for loading, linking,
storing the cache and formatting."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def uncollected(*, freeze: bool = False) -> Iterator[None]:
    """The collector paused while the block runs, then as it was (another thread's pause is left to that thread);
    with `freeze`, what the process holds is frozen out of the collector's view after it: what was built lives as
    long as the base, and every later full collection would only rescan it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()

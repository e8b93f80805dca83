"""Work measured as a count of Python function calls: deterministic, unlike time on a shared machine."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


def calls(work: Callable[[], object]) -> int:
    """How many Python functions `work()` called (C functions not counted)."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def growth(make: Callable[[int], Callable[[], object]], size: int) -> float:
    """How much more work `make(2 * size)` does than `make(size)`: about 2 for linear work, 4 for quadratic."""
    make(size)()  # caches (parsers, regexes) warmed before counting
    return calls(make(2 * size)) / calls(make(size))

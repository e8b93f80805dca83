"""'Did you mean' hints from the closest names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str], *, count: int = 1, cutoff: float = 0.6) -> list[str]:
    return difflib.get_close_matches(word, list(choices), n=count, cutoff=cutoff)


def did_you_mean(word: str, choices: Iterable[str], *, count: int = 1) -> str | None:
    """A hint naming the closest of `choices`, or None when nothing is close."""
    close = closest(word, choices, count=count)
    return f"did you mean {' or '.join(close)}?" if close else None

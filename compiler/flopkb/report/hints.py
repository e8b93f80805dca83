"""'Did you mean' hints: the one way flopkb finds the names closest to a misspelt one (rapidfuzz's Indel ratio)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

CUTOFF = 60.0
"""The lowest similarity (0-100) a name must have to be suggested."""


def scored(word: str, choices: Sequence[str], *, limit: int, cutoff: float = CUTOFF) -> list[tuple[str, float]]:
    """The `limit` names of `choices` most similar to `word`, with their scores, best first (ties in `choices`
    order)."""
    from rapidfuzz import fuzz, process  # imported only when something does not resolve

    return [
        (name, score)
        for name, score, _ in process.extract(word, choices, scorer=fuzz.ratio, limit=limit, score_cutoff=cutoff)
    ]


def closest(word: str, choices: Iterable[str], *, count: int = 1, cutoff: float = CUTOFF) -> list[str]:
    return [name for name, _ in scored(word, list(choices), limit=count, cutoff=cutoff)]


WORD = r"[^\s\]|#,:}\"']"
"""A character of the word a "did you mean" replaces in the file (an editor's quick fix, `flopkb.editor.actions`): a
value, a link's target or a key runs up to white space, a bracket, a '|', '#', ',' or ':', or a quote."""


def did_you_mean(word: str, choices: Iterable[str], *, count: int = 1) -> str | None:
    """A hint naming the closest of `choices`, or None when nothing is close."""
    close = closest(word, choices, count=count)
    return f"did you mean {' or '.join(close)}?" if close else None


_WORD_BREAK = re.compile(r"[^a-z0-9]+")
_CAMEL_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")


def snake_case(name: str) -> str | None:
    """`name` as a snake_case name (`Batch Size`, `batchSize`, `batch-size` → `batch_size`); None when nothing of it
    is left or it would not start with a letter."""
    words = _WORD_BREAK.sub("_", _CAMEL_HUMP.sub("_", name.strip()).lower()).strip("_")
    return words if words[:1].isalpha() and words.isascii() else None

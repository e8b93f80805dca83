"""'Did you mean' hints: the one way flopkb finds the names closest to a misspelt one (rapidfuzz's Indel ratio tells
which are close enough; they rank by OSA distance, where swapping two letters is one slip)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from flopkb.report.cut import cut

CUTOFF = 60.0
"""The lowest similarity (0-100) a name must have to be suggested."""


def scored(word: str, choices: Sequence[str], *, limit: int, cutoff: float = CUTOFF) -> list[tuple[str, float]]:
    """The `limit` names of `choices` nearest to `word`, with their similarity scores (at least `cutoff`): fewest
    edits first, a transposition counting as one (`bs46` is as near `bs64` as `bs4`), then those made of the very
    letters typed (`bs64` before `bs4`), then the most similar (ties in `choices` order)."""
    from rapidfuzz import fuzz, process  # imported only when something does not resolve
    from rapidfuzz.distance import OSA

    close = process.extract(word, choices, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff)
    ranked = sorted(
        close, key=lambda found: (OSA.distance(word, found[0]), _letters_apart(word, found[0]), -found[1], found[2])
    )
    return [(name, score) for name, score, _ in ranked[:limit]]


def _letters_apart(word: str, name: str) -> int:
    """How many letters one of the two has that the other lacks (0 for an anagram)."""
    return sum(((Counter(word) - Counter(name)) + (Counter(name) - Counter(word))).values())


def closest(word: str, choices: Iterable[str], *, count: int = 1, cutoff: float = CUTOFF) -> list[str]:
    return [name for name, _ in scored(word, list(choices), limit=count, cutoff=cutoff)]


class Suggestion(str):
    """A hint that names what to write in place of a text of the file: its text is the hint `flopkb check` prints;
    `written` is the text it replaces, the first one written from the diagnostic's place on its line (after
    `before`, the part of it the hint keeps: a link's target before its '#anchor'), and `offered` the names to write
    in its stead, each an editor's quick fix (`flopkb.editor.diagnostics.fixes`)."""

    written: str
    offered: tuple[str, ...]
    before: str

    def __new__(cls, text: str, written: str, offered: Sequence[str], before: str = "") -> Suggestion:
        hint = super().__new__(cls, text)
        hint.written, hint.offered, hint.before = written, tuple(offered), before
        return hint

    def __reduce__(self) -> tuple[type[Suggestion], tuple[str, str, tuple[str, ...], str]]:
        return Suggestion, (str(self), self.written, self.offered, self.before)


def suggest(written: str, offered: Sequence[str], before: str = "") -> Suggestion:
    """The hint "did you mean A or B?": `offered` in place of `written`."""
    return Suggestion(f"did you mean {' or '.join(cut(name) for name in offered)}?", written, offered, before)


def did_you_mean(word: str, choices: Iterable[str], *, count: int = 1) -> Suggestion | None:
    """A hint naming the closest of `choices` in place of `word`, or None when nothing is close."""
    close = closest(word, choices, count=count)
    return suggest(word, close) if close else None


_WORD_BREAK = re.compile(r"[^a-z0-9]+")
_CAMEL_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")


def snake_case(name: str) -> str | None:
    """`name` as a snake_case name (`Batch Size`, `batchSize`, `batch-size` → `batch_size`); None when nothing of it
    is left or it would not start with a letter."""
    words = _WORD_BREAK.sub("_", _CAMEL_HUMP.sub("_", name.strip()).lower()).strip("_")
    return words if words[:1].isalpha() and words.isascii() else None

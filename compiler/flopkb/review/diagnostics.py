"""The diagnostics of two sides matched: new, fixed, and changed (the same problem, its message told differently).

A diagnostic's identity is its file (a renamed record's file is its new one), its code, its severity and its
*subject*: the data path of the node it points at (`flopkb.load.source.Source.path_at`), or, where it points at no
node's start (a broken link inside a paragraph), its message with its numbers left out. So a line moved by an edit
above it, or a number in the message that moved (a claim that fails by more), leaves it the same diagnostic.
Diagnostics are paired in three passes, each over what the passes before left: by message (a diagnostic that only
moved lines is neither new nor fixed), by subject and message but for its numbers, then by subject alone (a message
reworded); only what no pass pairs is new or fixed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.source import Source
from flopkb.report.diagnostics import Diagnostic
from flopkb.review.matching import Matching
from flopkb.review.model import DiagnosticChange, DiagnosticLine

_NUMBER = re.compile(r"(?<![\w.\[#/-])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
"""A number standing by itself (`4`, `3.90244`, `25` of `25%`), not one inside a name (`x1`, `expect[0]`, `h100`)."""

Subject = Callable[[Diagnostic], Hashable]


def diagnostic_changes(match: Matching, base: Sequence[Diagnostic], head: Sequence[Diagnostic]) -> dict[str, tuple]:
    """The `Report` fields of the diagnostics new on the head, fixed since the base, and changed (see the module)."""
    moved = {
        match.base.entries[old].path: match.head.entries[new].path
        for old, new in match.renamed.items()
        if old in match.base.entries and new in match.head.entries
    }
    pairs, new, fixed = pair_diagnostics(
        base, head, lambda path: moved.get(path, path), _subjects(match.base), _subjects(match.head)
    )
    return {
        "new_diagnostics": tuple(map(diagnostic_line, new)),
        "fixed_diagnostics": tuple(map(diagnostic_line, fixed)),
        "changed_diagnostics": tuple(
            DiagnosticChange(diagnostic_line(was), diagnostic_line(now))
            for was, now in pairs
            if was.message != now.message
        ),
    }


def pair_diagnostics(
    base: Sequence[Diagnostic],
    head: Sequence[Diagnostic],
    file: Callable[[str], str],
    subject_before: Subject,
    subject_after: Subject,
) -> tuple[list[tuple[Diagnostic, Diagnostic]], list[Diagnostic], list[Diagnostic]]:
    """(pairs of (base, head) diagnostics in the head's order, the head's unpaired, the base's unpaired) (see the
    module). `file` gives a base diagnostic's path its name on the head; `subject_*` a diagnostic's subject."""

    def keys(subject: Subject, file: Callable[[str], str]) -> tuple[Callable[[Diagnostic], Hashable], ...]:
        def kind(d: Diagnostic) -> tuple[str, str, str]:
            return file(d.path), d.code, str(d.severity)

        return (
            lambda d: (kind(d), d.message),
            lambda d: (kind(d), subject(d), _NUMBER.sub("#", d.message)),
            lambda d: (kind(d), subject(d)),
        )

    pairs: list[tuple[int, int]] = []
    left, right = list(range(len(base))), list(range(len(head)))
    for key_before, key_after in zip(keys(subject_before, file), keys(subject_after, str), strict=True):
        waiting: dict[Hashable, list[int]] = {}
        for index in left:
            waiting.setdefault(key_before(base[index]), []).append(index)
        unpaired = []
        for index in right:
            queue = waiting.get(key_after(head[index]))
            if queue:
                pairs.append((queue.pop(0), index))
            else:
                unpaired.append(index)
        paired = {was for was, _ in pairs}
        left, right = [index for index in left if index not in paired], unpaired
    pairs.sort(key=lambda pair: pair[1])
    return [(base[was], head[now]) for was, now in pairs], [head[i] for i in right], [base[i] for i in left]


def _subjects(kb: KnowledgeBase) -> Subject:
    """A diagnostic of `kb` → its subject: the data path of the node it points at, else its message without numbers."""
    sources: Mapping[str, Source] = {
        entry.path: entry.source for entry in kb.entries.values() if entry.source is not None
    }
    found: dict[Diagnostic, Hashable] = {}

    def subject(diagnostic: Diagnostic) -> Hashable:
        known = found.get(diagnostic)
        if known is None:
            source = sources.get(diagnostic.path)
            known = None if source is None else source.path_at(diagnostic.line, diagnostic.column)
            if known is None:
                known = ("message", _NUMBER.sub("#", diagnostic.message))
            found[diagnostic] = known
        return known

    return subject


def diagnostic_line(diagnostic: Diagnostic) -> DiagnosticLine:
    return DiagnosticLine(
        diagnostic.path,
        diagnostic.line,
        diagnostic.column,
        str(diagnostic.severity),
        diagnostic.code,
        diagnostic.message,
    )

"""`flopkb check --watch`: check again on every save and print only what changed.

The first check prints every problem; each later one prints the problems it
found that the one before did not (`+`) and those it no longer finds (`-`),
then the counts. A problem is the same problem when its file, code and
message are: one that only moved to another line (because a line was added
above it) is not reported again. Each check reuses the load cache kept in
memory (`flopkb.pipeline.cache`), so only the saved files are read again.
"""

from __future__ import annotations

import io
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

import watchfiles

from flopkb.load.sources import RECORD_SUFFIXES
from flopkb.report.diagnostics import Diagnostic
from flopkb.report.reporters import Summary, report

_IDLE_MS = 200
"""How long watchfiles waits for a change before handing back an empty batch (which is skipped)."""

Check = Callable[[], tuple[list[Diagnostic], Summary]]
"""One check: the diagnostics to show and their summary."""


def _identity(diagnostic: Diagnostic) -> tuple[str, str, str]:
    return diagnostic.path, diagnostic.code, diagnostic.message


def changes(before: Iterable[Diagnostic], after: Iterable[Diagnostic]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """The problems of `after` that `before` does not have (new), and those of `before` gone from `after` (fixed)."""
    before, after = list(before), list(after)
    new = _missing(after, Counter(map(_identity, before)))
    fixed = _missing(before, Counter(map(_identity, after)))
    return new, fixed


def _missing(diagnostics: list[Diagnostic], other: Counter[tuple[str, str, str]]) -> list[Diagnostic]:
    """The diagnostics that `other` does not account for, one for one."""
    left = Counter(other)
    missing = []
    for diagnostic in diagnostics:
        if left[_identity(diagnostic)] > 0:
            left[_identity(diagnostic)] -= 1
        else:
            missing.append(diagnostic)
    return missing


def _write(stream: TextIO, sign: str, diagnostic: Diagnostic) -> None:
    """One diagnostic as `check` prints it in text, each of its lines behind `sign`."""
    buffer = io.StringIO()
    report([diagnostic], Summary.of([diagnostic], records=0), "text", buffer)
    stream.writelines(
        f"{sign} {line}\n" for line in buffer.getvalue().splitlines()[:-1]
    )  # the last line is the summary


def _is_record_file(change: watchfiles.Change, path: str) -> bool:
    return path.endswith(RECORD_SUFFIXES)


def watch(check: Check, folders: list[Path], stream: TextIO, stop_event: threading.Event | None = None) -> None:
    """Check, then check again after every change to a YAML file under `folders`, until interrupted.

    `stop_event`, when set, ends the watch as an interrupt would (the tests use it).
    """
    shown: list[Diagnostic] = []
    for round_ in _rounds(folders, stop_event):
        diagnostics, summary = check()
        new, fixed = changes(shown, diagnostics)
        for diagnostic in fixed:
            _write(stream, "-", diagnostic)
        for diagnostic in new:
            _write(stream, "+", diagnostic)
        what = "checked" if round_ == 0 else "checked again"
        stream.write(
            f"{time.strftime('%H:%M:%S')} {what}: {summary.describe()}; watching for changes (Ctrl-C to stop)\n"
        )
        stream.flush()
        shown = diagnostics


def _rounds(folders: list[Path], stop_event: threading.Event | None) -> Iterator[int]:
    """0 once the folders are watched (so that no save is missed during the first check), then one more per batch of
    saves."""
    batches = watchfiles.watch(
        *folders, watch_filter=_is_record_file, yield_on_timeout=True, rust_timeout=_IDLE_MS, stop_event=stop_event
    )
    round_ = 0
    for saved in batches:  # the first batch comes after one idle period at most: the watch has begun
        if saved or round_ == 0:
            yield round_
            round_ += 1

"""Where a quick fix goes now: its diagnostic's range carried through the edits of the buffer since the check that
placed it.

The editor holds a diagnostic until the next check's, and the buffer may
have changed since (`flopkb.editor.actions`). The server sees every change
(`textDocument/didChange`). The diagnostic is found among those the client
was sent (pushed, pulled), the newest first, as it keeps the last it was
sent: with the version of the buffer their check placed them in. Its range
is carried through each change since that version as an editor carries a
position: a change before it moves it, one after it leaves it. A change
that touches it (within it, or at either end: a word written longer) leaves
it nowhere, and so does one of the whole text: then no fix is offered,
rather than one at a guess.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from lsprotocol import types

from flopkb.editor.checked import Checked
from flopkb.editor.positions import extent

KEPT_CHANGES = 1000
"""The changes kept of each open document: a fix placed in a version of the buffer older than these is not offered."""
KEPT_CHECKS = 16
"""The checks whose fixable diagnostics are kept for each open document: a diagnostic the editor holds from an older
one gets no fix (the editor has had newer ones since)."""


@dataclass(frozen=True)
class Change:
    """One change of a buffer: the range it replaced (in the text before it), and the extent of the text it wrote
    (`flopkb.editor.positions.extent`)."""

    start: types.Position
    end: types.Position
    lines: int
    last: int

    def carried(self, where: types.Range) -> types.Range | None:
        """`where` in the text after this change; None when the change touches it."""
        if _key(self.start) <= _key(where.end) and _key(self.end) >= _key(where.start):
            return None
        if _key(self.start) > _key(where.end):
            return where
        return types.Range(start=self._moved(where.start), end=self._moved(where.end))

    def _moved(self, position: types.Position) -> types.Position:
        """A position after the change, where it is once the change is made."""
        if position.line != self.end.line:
            return types.Position(
                line=position.line + self.lines - (self.end.line - self.start.line), character=position.character
            )
        before = self.last if self.lines else self.start.character + self.last
        return types.Position(
            line=self.start.line + self.lines, character=before + position.character - self.end.character
        )


@dataclass
class _Edits:
    """The changes of one open document since its version `since`, each with the version it made (None for a change
    of the whole text)."""

    since: int
    changes: deque[tuple[int, Change | None]] = field(default_factory=deque)


class Tracked:
    """The changes of the open documents (by URI), and the fixable diagnostics the client was sent of them (by
    root-relative path), with the version of the buffer the check placed them in: which check a diagnostic the client
    sends back comes from is the newest of those sent that holds it, as a client keeps only the last it was sent."""

    def __init__(self) -> None:
        self._edits: dict[str, _Edits] = {}
        self._told: dict[str, deque[tuple[int, list[types.Diagnostic]]]] = {}

    def opened(self, uri: str, rel: str | None, version: int) -> None:
        """The document at `uri` opened (on the file `rel`): what checks told of a buffer of it before is not its."""
        self._edits[uri] = _Edits(version)
        if rel is not None:
            self._told.pop(rel, None)

    def closed(self, uri: str) -> None:
        self._edits.pop(uri, None)

    def changed(
        self, uri: str, version: int, changes: Sequence[types.TextDocumentContentChangeEvent], encoding: str
    ) -> None:
        """The document at `uri` changed into its `version` by `changes`, in order (positions in `encoding`'s units)."""
        edits = self._edits.get(uri)
        if edits is None:
            return
        for change in changes:
            made = None
            if isinstance(change, types.TextDocumentContentChangePartial):
                made = Change(change.range.start, change.range.end, *extent(change.text, encoding))
            edits.changes.append((version, made))
        while len(edits.changes) > KEPT_CHANGES:
            edits.since = edits.changes.popleft()[0]

    def told(self, checked: Checked, only: str | None = None) -> None:
        """The client was sent the diagnostics `checked` tells of the open buffers (of `only`'s alone, when given),
        or holds ones equal to them (not pushed again): each placed in its buffer's version."""
        if checked.files is None and only is None:
            self._told = {rel: kept for rel, kept in self._told.items() if rel in checked.buffers}
        for rel, buffer in checked.buffers.items():
            if (checked.files is None or rel in checked.files) and only in (None, rel):
                kept = self._told.setdefault(rel, deque(maxlen=KEPT_CHECKS))
                kept.appendleft((buffer.version, [item for item in checked.diagnostics.get(rel, []) if item.data]))

    def placed(self, uri: str, rel: str, diagnostic: types.Diagnostic, where: types.Range) -> types.Range | None:
        """Where `where`, a range the check that told `diagnostic` placed in the buffer of `rel`, is in the document
        at `uri` now; None when no check kept tells it, or an edit since touched it."""
        edits = self._edits.get(uri)
        version = next(
            (
                version
                for version, told in self._told.get(rel, ())
                if any(item.range == diagnostic.range and item.data == diagnostic.data for item in told)
            ),
            None,
        )
        if edits is None or version is None or version < edits.since:
            return None
        for changed, change in edits.changes:
            if changed <= version:
                continue
            carried = change.carried(where) if change is not None else None
            if carried is None:
                return None
            where = carried
        return where


def _key(position: types.Position) -> tuple[int, int]:
    return position.line, position.character

"""The diagnostics a client pulls for the whole workspace (`workspace/diagnostic`), at the URIs it knows.

A file's diagnostics are reported at the URI of the document open on it,
else under the client's folder (`flopkb.editor.addresses`). When the
client opens or closes it under another spelling of its path (a symlinked
folder, `..`), the URI moves: the next pull reports the one it moved from
empty, so no second set stays there, as pushed diagnostics move
(`FlopkbServer.publish`); a file whose problems are gone is reported empty
once too.
"""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from flopkb.editor.checked import Checked


class Pulled:
    """Where the last workspace pull reported each file's diagnostics."""

    def __init__(self) -> None:
        self._at: dict[str, str] = {}
        """The URI each file with diagnostics was reported at, by root-relative path."""
        self._moved: dict[str, str] = {}
        """The URIs files the last pull reported were found at since, by root-relative path."""

    def moved(self, uri_of: Callable[[str], str]) -> bool:
        """Whether a file the last pull reported has moved to another URI since it was last asked (then the client is
        to pull again, once per move)."""
        moved = {rel: now for rel, uri in self._at.items() if (now := uri_of(rel)) != uri}
        new = moved.items() - self._moved.items()
        self._moved = moved
        return bool(new)

    def reports(self, checked: Checked, uri_of: Callable[[str], str]) -> list[types.WorkspaceDocumentDiagnosticReport]:
        """The report of every file with diagnostics, and an empty one where the last pull left diagnostics that are no
        longer there (gone, or moved to another URI)."""
        found: list[types.WorkspaceDocumentDiagnosticReport] = []
        for rel in sorted(self._at.keys() | checked.diagnostics.keys()):
            uri, buffer = uri_of(rel), checked.buffers.get(rel)
            before = self._at.get(rel, uri)
            if before != uri:
                found.append(_report(before, [], None, checked.generation))
            version = buffer.version if buffer is not None else None
            found.append(_report(uri, checked.diagnostics.get(rel, []), version, checked.generation))
        self._at, self._moved = {rel: uri_of(rel) for rel, items in checked.diagnostics.items() if items}, {}
        return found


def _report(
    uri: str, items: list[types.Diagnostic], version: int | None, generation: int
) -> types.WorkspaceFullDocumentDiagnosticReport:
    return types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=items, version=version, result_id=str(generation))

"""A finished check's diagnostics in the client's positions, with their second places (`relatedInformation`).

The checking threads import this module only once a check is done: it
imports lsprotocol (as `flopkb.editor.diagnostics` does), which the first
check does not wait for (`flopkb.editor.checker`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from lsprotocol import types

from flopkb.editor.addresses import root_uri
from flopkb.editor.diagnostics import to_lsp
from flopkb.editor.positions import diagnostic_range
from flopkb.report.diagnostics import Diagnostic

if TYPE_CHECKING:
    from flopkb.editor.checked import Checked


def convert(
    checked: Checked,
    diagnostics: list[Diagnostic],
    encoding: str,
    *,
    related: bool = True,
    uri: Callable[[str], str] | None = None,
) -> None:
    """Add `diagnostics` to `checked`'s, by file; with their related places unless `related` is False, at `uri(path)`
    (the server's, `flopkb.editor.addresses`; by default under the base's folder)."""
    uri_at = uri or partial(root_uri, checked.config.root)
    kb = checked.kb if related else None
    if kb is not None:
        from flopkb.editor.related import related_places  # the pipeline's: not imported for stored diagnostics
    for diagnostic in diagnostics:
        places = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=uri_at(path),
                    range=diagnostic_range(checked.text_of(path), line, column, encoding),
                ),
                message=what,
            )
            for path, line, column, what in (related_places(kb, diagnostic) if kb is not None else [])
        ]
        lsp = to_lsp(diagnostic, checked.text_of(diagnostic.path), encoding, places or None)
        checked.diagnostics.setdefault(diagnostic.path, []).append(lsp)

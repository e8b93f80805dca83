"""flopkb's diagnostics as LSP diagnostics: the same code, severity, message and hint, at the client's positions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lsprotocol import types

import flopkb
from flopkb.editor.positions import diagnostic_range, line_end, lines_of, lsp_position, offset_of
from flopkb.report.codes import Severity
from flopkb.report.diagnostics import Diagnostic
from flopkb.report.hints import Suggestion

SOURCE = "flopkb"
_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}
_CODES_PAGE = Path(flopkb.__file__).resolve().parents[2] / "docs" / "codes.md"
"""The catalogue of codes, where flopkb runs from its repository (an editable install); absent from a wheel."""


def code_description(code: str) -> types.CodeDescription | None:
    """A link to the code's entry in docs/codes.md, when that page is here to link to."""
    if not _CODES_PAGE.is_file():
        return None
    return types.CodeDescription(href=f"{_CODES_PAGE.as_uri()}#{code}")


def message_of(diagnostic: Diagnostic) -> str:
    """The message, and the hint below it as `flopkb check` prints it."""
    return f"{diagnostic.message}\nhint: {diagnostic.hint}" if diagnostic.hint else diagnostic.message


def fixes(diagnostic: Diagnostic, text: str, encoding: str) -> dict[str, Any] | None:
    """What a hint that names what to write proposes (a `Suggestion`), for the quick fixes
    (`flopkb.editor.actions`): the range of the text it replaces, and each name it offers in its stead."""
    hint = diagnostic.hint
    if not isinstance(hint, Suggestion):
        return None
    lines = lines_of(text)
    start, end = offset_of(lines, diagnostic.line, diagnostic.column), line_end(lines, diagnostic.line)
    # on the diagnostic's own line: a word written otherwise there (a YAML escape) gets no fix, not one elsewhere
    found = re.compile(rf"(?<!\w){re.escape(hint.before)}({re.escape(hint.written)})(?!\w)").search(text, start, end)
    if found is None:
        return None
    return {
        "range": [
            *_pair(lsp_position(text, found.start(1), encoding)),
            *_pair(lsp_position(text, found.end(1), encoding)),
        ],
        "written": hint.written,
        "offered": list(hint.offered),
    }


def _pair(position: types.Position) -> list[int]:
    return [position.line, position.character]


def to_lsp(
    diagnostic: Diagnostic,
    text: str,
    encoding: str,
    related: list[types.DiagnosticRelatedInformation] | None = None,
) -> types.Diagnostic:
    """One diagnostic of the file whose text is `text`, its range in the client's `encoding`, with its second
    places."""
    return types.Diagnostic(
        range=diagnostic_range(text, diagnostic.line, diagnostic.column, encoding),
        message=message_of(diagnostic),
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=code_description(diagnostic.code),
        source=SOURCE,
        related_information=related,
        data=fixes(diagnostic, text, encoding),
    )

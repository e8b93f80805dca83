"""Code actions: every hint that names what to write instead (a `flopkb.report.hints.Suggestion`: "did you mean")
as a quick fix that writes the name it offers.

The diagnostic carries what its hint offers and the range of the text it
replaces (`flopkb.editor.diagnostics.fixes`, from the same hint `flopkb
check` prints); the client sends it back with the request. That range is
where the text was when the check read it: the buffer may have changed
since (the editor holds a diagnostic until the next check's). The fix is
offered where the current text holds the word the hint is about: at that
range, else the one place it is written as a word within `NEAR` lines of it
(an edit before it on its line, lines added or removed above); nowhere when
it is not there or written more than once there. The edit names the
document's version, where the client takes versioned edits
(`workspace.workspaceEdit.documentChanges`): it refuses it once the buffer
is newer still.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import code_point_offset, lsp_position
from flopkb.report.cut import cut

NEAR = 5
"""How many lines above and below the range it was told at a fix's text is looked for when it moved."""


def quick_fixes(
    uri: str, diagnostics: list[types.Diagnostic], text: str, version: int | None, encoding: str
) -> list[types.CodeAction]:
    """The quick fixes of `diagnostics`, placed in the document's current `text`: edits of its `version`, or plain
    edits when None (a client that takes no versioned edits)."""
    actions = []
    for diagnostic in diagnostics:
        data: Any = diagnostic.data
        if diagnostic.source != SOURCE or not isinstance(data, dict):
            continue
        try:
            line, character, end_line, end_character = (int(value) for value in data["range"])
            offered = [str(name) for name in data["offered"]]
            written = str(data["written"])
        except (KeyError, TypeError, ValueError):
            continue
        told = types.Range(
            start=types.Position(line=line, character=character),
            end=types.Position(line=end_line, character=end_character),
        )
        where = found_again(text, told, written, encoding)
        if where is None:
            continue
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        for name in offered:
            change = types.TextEdit(range=where, new_text=name)
            edit = (
                types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=[change])])
                if version is not None
                else types.WorkspaceEdit(changes={uri: [change]})
            )
            actions.append(
                types.CodeAction(
                    title=f"Write '{cut(name)}' for '{cut(written)}'",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=len(offered) == 1,
                    edit=edit,
                )
            )
    return actions


def text_at(text: str, where: types.Range, encoding: str) -> str:
    """The text `where` spans in `text` (its positions in the client's `encoding`)."""
    return text[code_point_offset(text, where.start, encoding) : code_point_offset(text, where.end, encoding)]


def found_again(text: str, told: types.Range, written: str, encoding: str) -> types.Range | None:
    """Where `written` is in `text`, a word: at `told`, else its one place within `NEAR` lines of it."""
    word = re.compile(rf"(?<!\w){re.escape(written)}(?!\w)")
    start = code_point_offset(text, told.start, encoding)
    at = word.match(text, start)
    if at is not None and at.end() == code_point_offset(text, told.end, encoding):
        return told
    above = code_point_offset(text, types.Position(line=max(told.start.line - NEAR, 0), character=0), encoding)
    below = code_point_offset(text, types.Position(line=told.end.line + NEAR + 1, character=0), encoding)
    places = [match.span() for match in word.finditer(text, above, below)]
    if len(places) != 1:
        return None
    ((begin, end),) = places
    return types.Range(start=lsp_position(text, begin, encoding), end=lsp_position(text, end, encoding))

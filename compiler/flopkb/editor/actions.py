"""Code actions: every hint that names what to write instead (a `flopkb.report.hints.Suggestion`: "did you mean")
as a quick fix that writes the name it offers.

The diagnostic carries what its hint offers and the range of the text it
replaces (`flopkb.editor.diagnostics.fixes`, from the same hint `flopkb
check` prints); the client sends it back with the request. That range is
where the text was when the check read it: the buffer may have changed
since (the editor holds a diagnostic until the next check's). The fix is
offered where that range is now, carried through the edits since
(`flopkb.editor.tracking`), when the text there is still the word the hint
is about; nowhere when an edit touched it. The edit names the document's
version, where the client takes versioned edits
(`workspace.workspaceEdit.documentChanges`): it refuses it once the buffer
is newer still.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types

from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import code_point_offset
from flopkb.report.cut import cut

Placed = Callable[[types.Diagnostic, types.Range], types.Range | None]
"""Where a range the check that told a diagnostic placed is in the buffer now (`flopkb.editor.tracking`), or None."""


def quick_fixes(
    uri: str, diagnostics: list[types.Diagnostic], text: str, version: int | None, encoding: str, placed: Placed
) -> list[types.CodeAction]:
    """The quick fixes of `diagnostics`, placed in the document's current `text` by `placed`: edits of its `version`,
    or plain edits when None (a client that takes no versioned edits)."""
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
        where = placed(diagnostic, told)
        if where is None or text_at(text, where, encoding) != written:
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

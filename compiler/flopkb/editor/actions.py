"""Code actions: every hint that names what to write instead (a `flopkb.report.hints.Suggestion`: "did you mean")
as a quick fix that writes the name it offers.

The diagnostic carries what its hint offers and the range of the text it
replaces (`flopkb.editor.diagnostics.fixes`, from the same hint `flopkb
check` prints); the client sends it back with the request.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from flopkb.editor.diagnostics import SOURCE
from flopkb.report.cut import cut


def quick_fixes(uri: str, diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
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
        where = types.Range(
            start=types.Position(line=line, character=character),
            end=types.Position(line=end_line, character=end_character),
        )
        for name in offered:
            actions.append(
                types.CodeAction(
                    title=f"Write '{cut(name)}' for '{cut(written)}'",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=len(offered) == 1,
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=where, new_text=name)]}),
                )
            )
    return actions

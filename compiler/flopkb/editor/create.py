"""Code action "create the missing record": a dangling link or ref offers the file `flopkb new` would write.

The target is read from the compiled base's links at the diagnostic's place
(a target that resolves to no record at all, not an ambiguous one); its text
is `flopkb new`'s template (`flopkb.authoring.scaffold.render_new`), one
action per kind the link may land on (every kind for a prose link). A broken
anchor (`dangling-anchor`) names a record that exists: it offers nothing.

The edit creates the file with `overwrite` and `ignoreIfExists` both false:
a file that appeared since the check makes the client refuse the edit,
never write into it (ignoring the existing file would insert the template at
its top). A file already on disk is not offered at all, nor one under a symlinked folder
(`flopkb.authoring.scaffold.linked_out`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lsprotocol import types

from flopkb.authoring.scaffold import linked_out, new_record_path, render_new
from flopkb.config import Config
from flopkb.editor.checked import Checked
from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import diagnostic_range
from flopkb.links.extract import Link
from flopkb.links.resolver import Resolver
from flopkb.load.models import KINDS, id_problem

DANGLING = ("dangling-link", "dangling-ref")


def create_actions(
    checked: Checked,
    config: Config,
    rel: str,
    diagnostics: list[types.Diagnostic],
    uri_of: Callable[[str], str],
    encoding: str,
) -> list[types.CodeAction]:
    """The quick fixes that create a record a link names that is missing; the new file at `uri_of(its path)`."""
    kb, entry = checked.kb, checked.entry_at(rel)
    if kb is None or entry is None or kb.vocabulary is None:
        return []
    actions = []
    for diagnostic in diagnostics:
        if diagnostic.source != SOURCE or diagnostic.code not in DANGLING:
            continue
        for link in _dangling_at(checked, rel, entry.id, diagnostic.range.start, encoding):
            path = new_record_path(config, link.target)
            if any(candidate.exists() for candidate in path) or linked_out(config, path[0]) is not None:
                continue
            uri = uri_of(path[0].relative_to(config.root).as_posix())
            for kind in link.kinds or KINDS:
                text = render_new(config, kind, link.target, path[0], kb.vocabulary)
                insert = types.TextEdit(
                    range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)), new_text=text
                )
                edit = types.WorkspaceEdit(
                    document_changes=[
                        types.CreateFile(
                            uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)
                        ),
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                            edits=[insert],
                        ),
                    ]
                )
                actions.append(
                    types.CodeAction(
                        title=f"Create the {kind} record {link.target}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=edit,
                    )
                )
    return actions


def _dangling_at(checked: Checked, rel: str, record_id: str, start: types.Position, encoding: str) -> Iterator[Link]:
    """The links of the record written at `start` that resolve to no record, with a target that can be an id."""
    assert checked.kb is not None
    resolver = Resolver.of(checked.kb)
    text = checked.text_of(rel)
    for link in checked.kb.links_of(record_id):
        if link.resolved is not None or id_problem(link.target) or resolver.resolve(link.target).candidates:
            continue
        if diagnostic_range(text, *link.position, encoding).start == start:
            yield link

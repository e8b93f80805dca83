"""Code action "create the missing record": a dangling link or ref offers the file `flopkb new` would write.

The target is read from the compiled base's links at the diagnostic's place
(a target that resolves to no record at all, not an ambiguous one); its text
is `flopkb new`'s template (`flopkb.authoring.scaffold.render_new`), one
action per kind the link may land on (every kind for a prose link). A link
or ref written short is created in the kind's folder (`sources:
[medusa-2025]`: sources/medusa-2025, which the ref resolves to), where
`flopkb new` would have it; one with a folder with the id written. A broken anchor (`dangling-anchor`)
names a record that exists, and a URL written without its scheme
(`github.com/org/repo`) no record: they offer nothing. Nor does a link the
buffer no longer holds at the diagnostic's place (the check read an older one).

The edit creates the file with `overwrite` and `ignoreIfExists` both false:
a file that appeared since the check makes the client refuse the edit,
never write into it (ignoring the existing file would insert the template at
its top). A file already on disk is not offered at all, nor one under a symlinked folder
(`flopkb.authoring.scaffold.linked_out`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lsprotocol import types

from flopkb.authoring.folders import kind_folder
from flopkb.authoring.scaffold import linked_out, new_record_path, render_new
from flopkb.config import Config
from flopkb.editor.actions import text_at
from flopkb.editor.checked import Checked
from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import diagnostic_range
from flopkb.links.extract import Link
from flopkb.links.resolver import Resolver
from flopkb.load.models import KINDS, id_problem, with_scheme
from flopkb.load.vocabulary import Vocabulary

DANGLING = ("dangling-link", "dangling-ref")


def create_actions(
    checked: Checked,
    config: Config,
    rel: str,
    text: str,
    diagnostics: list[types.Diagnostic],
    uri_of: Callable[[str], str],
    encoding: str,
) -> list[types.CodeAction]:
    """The records the dangling links and refs of `diagnostics` may be created as, where the buffer's current `text`
    still holds the link at the diagnostic's place; each new file at `uri_of(its path)`."""
    kb, entry = checked.kb, checked.entry_at(rel)
    if kb is None or entry is None or kb.vocabulary is None:
        return []
    actions = []
    for diagnostic in diagnostics:
        if diagnostic.source != SOURCE or diagnostic.code not in DANGLING:
            continue
        for link in _dangling_at(checked, rel, entry.id, text, diagnostic.range.start, encoding):
            if with_scheme(link.target) is not None:
                continue  # a URL without its scheme (its hint writes it with one): no record is named after a host
            for kind in link.kinds or KINDS:
                record_id = _in_kind_folder(kind, link.target)
                action = _create(config, kind, record_id, kb.vocabulary, diagnostic, uri_of)
                if action is not None:
                    actions.append(action)
    return actions


def _in_kind_folder(kind: str, target: str) -> str:
    """The id a record of `kind` is created with: a short `target` (no folder: at the top of records/, where `flopkb
    new` warns) in the kind's folder; a link that resolves to no record at all resolves to that id, the one that ends
    with `/<target>`. A target with a folder is the id its author chose."""
    return target if "/" in target else f"{kind_folder(kind)}/{target}"


def _create(
    config: Config,
    kind: str,
    record_id: str,
    vocabulary: Vocabulary,
    diagnostic: types.Diagnostic,
    uri_of: Callable[[str], str],
) -> types.CodeAction | None:
    """The action that creates the file `flopkb new` writes for `record_id`: None where a file of that id exists, or
    a folder on its way is a symlink."""
    path = new_record_path(config, record_id)
    if any(candidate.exists() for candidate in path) or linked_out(config, path[0]) is not None:
        return None
    uri = uri_of(path[0].relative_to(config.root).as_posix())
    insert = types.TextEdit(
        range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        new_text=render_new(config, kind, record_id, path[0], vocabulary),
    )
    edit = types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=[insert]
            ),
        ]
    )
    return types.CodeAction(
        title=f"Create the {kind} record {record_id}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=edit,
    )


def _dangling_at(
    checked: Checked, rel: str, record_id: str, current: str, start: types.Position, encoding: str
) -> Iterator[Link]:
    """The links of the record written at `start` that resolve to no record, with a target that can be an id, and
    that the `current` text still holds there (the check read an older buffer)."""
    assert checked.kb is not None
    resolver = Resolver.of(checked.kb)
    text = checked.text_of(rel)
    for link in checked.kb.links_of(record_id):
        if link.resolved is not None or id_problem(link.target) or resolver.resolve(link.target).candidates:
            continue
        where = diagnostic_range(text, *link.position, encoding)
        if where.start == start and text_at(current, where, encoding) == text_at(text, where, encoding):
            yield link

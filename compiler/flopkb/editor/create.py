"""Code action "create the missing record": a dangling link or ref offers the file `flopkb new` would write.

The target is read from the compiled base's links at the diagnostic's place
(a target that resolves to no record at all, not an ambiguous one); its text
is `flopkb new`'s template (`flopkb.authoring.scaffold.render_new`). The
record is created where the folder convention has it, as `flopkb new` warns
(`flopkb.authoring.folders.created_as`): a link or ref written short in each
kind's folder it may land on (`sources: [medusa-2025]`: sources/medusa-2025,
which the ref resolves to); one written in the folder of a kind it takes with
the id written; a ref written in another folder (`affected_by_hardware:
[hw/beta]`) in its kind's folder (accelerators/beta), the ref rewritten to that
id in the same edit. A prose link in no kind's folder (`[[notes/gamma]]`) could
be any kind: nothing is offered, and its diagnostic's hint says so. A broken
anchor (`dangling-anchor`) names a record that exists, and a URL written
without its scheme (`github.com/org/repo`) no record: they offer nothing. Nor
does a link the buffer no longer holds at the diagnostic's place (the check
read an older one).

The edit creates the file with `overwrite` and `ignoreIfExists` both false:
a file that appeared since the check makes the client refuse the edit,
never write into it (ignoring the existing file would insert the template at
its top). A file already on disk is not offered at all, nor one under a symlinked folder
(`flopkb.authoring.scaffold.linked_out`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lsprotocol import types

from flopkb.authoring.folders import Creatable, created_as
from flopkb.authoring.scaffold import linked_out, new_record_path, render_new
from flopkb.config import Config
from flopkb.editor.actions import text_at
from flopkb.editor.checked import Checked
from flopkb.editor.diagnostics import SOURCE
from flopkb.editor.positions import diagnostic_range, lsp_position
from flopkb.links.extract import Link
from flopkb.links.mv import MoveError, target_span
from flopkb.links.resolver import Resolver
from flopkb.load.models import id_problem, with_scheme
from flopkb.load.vocabulary import Vocabulary

DANGLING = ("dangling-link", "dangling-ref")


def create_actions(
    checked: Checked,
    config: Config,
    rel: str,
    text: str,
    version: int | None,
    diagnostics: list[types.Diagnostic],
    uri_of: Callable[[str], str],
    encoding: str,
) -> list[types.CodeAction]:
    """The records the dangling links and refs of `diagnostics` may be created as, where the buffer's current `text`
    (of `version`) still holds the link at the diagnostic's place; each new file at `uri_of(its path)`."""
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
            created = created_as(link.target, link.kinds, link.where)
            for record in created if isinstance(created, list) else []:
                rewrite = _rewrite(link, record.record_id, text, version, uri_of, encoding) if record.rewrite else None
                if record.rewrite and rewrite is None:
                    continue  # the target cannot be rewritten where the buffer has it: the link would still dangle
                action = _create(config, record, kb.vocabulary, diagnostic, uri_of, rewrite)
                if action is not None:
                    actions.append(action)
    return actions


def _rewrite(
    link: Link,
    record_id: str,
    current: str,
    version: int | None,
    uri_of: Callable[[str], str],
    encoding: str,
) -> types.TextDocumentEdit | None:
    """The edit of the buffer, its `current` text of `version`, that writes `record_id` for the link's target (the
    characters `flopkb mv` rewrites); None where they are not there (written with escapes, or edited since)."""
    text = link.source.text  # the text `target_span`'s offsets are in
    try:
        start, end = (lsp_position(text, offset, encoding) for offset in target_span(link))
    except MoveError:
        return None
    change = types.TextEdit(range=types.Range(start=start, end=end), new_text=record_id)
    if text_at(current, change.range, encoding) != link.target:
        return None
    document = types.OptionalVersionedTextDocumentIdentifier(uri=uri_of(link.source.path), version=version)
    return types.TextDocumentEdit(text_document=document, edits=[change])


def _create(
    config: Config,
    record: Creatable,
    vocabulary: Vocabulary,
    diagnostic: types.Diagnostic,
    uri_of: Callable[[str], str],
    rewrite: types.TextDocumentEdit | None,
) -> types.CodeAction | None:
    """The action that creates the file `flopkb new` writes for `record`, then makes the `rewrite` of the link: None
    where a file of its id exists, or a folder on its way is a symlink."""
    path = new_record_path(config, record.record_id)
    if any(candidate.exists() for candidate in path) or linked_out(config, path[0]) is not None:
        return None
    uri = uri_of(path[0].relative_to(config.root).as_posix())
    insert = types.TextEdit(
        range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        new_text=render_new(config, record.kind, record.record_id, path[0], vocabulary),
    )
    edit = types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=[insert]
            ),
            *([rewrite] if rewrite is not None else []),
        ]
    )
    title = f"Create the {record.kind} record {record.record_id}"
    return types.CodeAction(
        title=title + (", and link to it" if rewrite is not None else ""),
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

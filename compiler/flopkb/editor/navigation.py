"""Navigation over the compiled base: definition, references (the backlinks) and document symbols.

- definition: from a link or ref, the target's `id` (the formula or
  measurement item for `record#anchor`); from `hw.name` in an expression,
  that spec in every accelerator that has it;
- references: from a record's `id` line or any link to it, every link and
  ref that resolves to it, in every record (what the site's "Referenced by"
  lists);
- document symbols: the record's id, its formulas and its measurements;
- workspace symbols: every record (by id or title), alias, formula and
  measurement whose name holds what is typed.
"""

from __future__ import annotations

from lsprotocol import types

from flopkb.editor.hover import entry_at, link_at
from flopkb.editor.spec_hover import hw_parameter_at
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase

Place = tuple[str, int, int]
"""(path, line, column) in flopkb's positions."""


def _id_place(entry: Entry) -> Place:
    if entry.source is not None and "id" in entry.source.data:
        return (entry.path, *entry.source.position(("id",)))
    return entry.path, 1, 1


def _anchors(entry: Entry) -> list[tuple[str, str, int]]:
    """(field, id, index) of every formula and measurement of the record."""
    summary = entry.summary
    return [
        (field, anchor, index)
        for field, ids in (("formulas", summary.formula_ids or ()), ("measurements", summary.measurement_ids or ()))
        for index, anchor in enumerate(ids)
    ]


def _anchor_place(entry: Entry, anchor: str) -> Place | None:
    if entry.source is None:
        return None
    for field, name, index in _anchors(entry):
        if name == anchor:
            return (entry.path, *entry.source.position((field, index, "id")))
    return None


def target_at(kb: KnowledgeBase, path: str, line: int, column: int) -> str | None:
    """The record a position names: the resolved target of a link there, or the record itself on its `id` line."""
    entry = entry_at(kb, path)
    if entry is None:
        return None
    link = link_at(kb, entry, line, column)
    if link is not None:
        return link.resolved
    return entry.id if _id_place(entry)[1] == line else None


def definition(kb: KnowledgeBase, path: str, line: int, column: int, line_text: str) -> list[Place]:
    entry = entry_at(kb, path)
    if entry is None:
        return []
    link = link_at(kb, entry, line, column)
    if link is not None and link.resolved in kb.entries:
        target = kb.entries[link.resolved]
        anchored = _anchor_place(target, link.anchor) if link.anchor else None
        return [anchored or _id_place(target)]
    parameter = hw_parameter_at(line_text, column)
    return _specs(kb, parameter) if parameter is not None else []


def _specs(kb: KnowledgeBase, parameter: str) -> list[Place]:
    found = []
    for record_id in sorted(kb.entries):
        entry = kb.entries[record_id]
        if entry.summary.kind == "accelerator" and entry.source is not None:
            specs = entry.source.data.get("specs")
            if isinstance(specs, dict) and parameter in specs:
                found.append((entry.path, *entry.source.position(("specs", parameter), key=True)))
    return found


def references(kb: KnowledgeBase, path: str, line: int, column: int) -> list[Place]:
    target = target_at(kb, path, line, column)
    if target is None:
        return []
    return sorted(
        (link.file, *link.position) for links in kb.links.values() for link in links if link.resolved == target
    )


def document_symbols(entry: Entry) -> list[tuple[str, types.SymbolKind, int, int]]:
    """(name, kind, line, column) of the record's id, formulas and measurements."""
    if entry.source is None:
        return []
    symbols = [(entry.id, types.SymbolKind.File, *_id_place(entry)[1:])]
    for field, anchor, index in _anchors(entry):
        kind = types.SymbolKind.Function if field == "formulas" else types.SymbolKind.Constant
        symbols.append((f"{entry.id}#{anchor}", kind, *entry.source.position((field, index, "id"))))
    return symbols


def workspace_symbols(kb: KnowledgeBase, query: str, limit: int) -> list[tuple[str, types.SymbolKind, str, Place]]:
    """(name, kind, detail, place) of the records, aliases, formulas and measurements whose name or title holds
    `query` (case-insensitive), at most `limit`."""
    wanted = query.lower()
    found: list[tuple[str, types.SymbolKind, str, Place]] = []
    for record_id in sorted(kb.entries):
        entry = kb.entries[record_id]
        summary = entry.summary
        named = [(record_id, types.SymbolKind.File, summary.title or "", _id_place(entry))]
        named += [
            (alias, types.SymbolKind.File, f"alias of {record_id}", _id_place(entry)) for alias in summary.aliases
        ]
        for field, anchor, _ in _anchors(entry):
            at = _anchor_place(entry, anchor)
            kind = types.SymbolKind.Function if field == "formulas" else types.SymbolKind.Constant
            named += [(f"{record_id}#{anchor}", kind, field, at)] if at else []
        for symbol in named:
            if wanted in symbol[0].lower() or wanted in symbol[2].lower():
                found.append(symbol)
                if len(found) >= limit:
                    return found
    return found

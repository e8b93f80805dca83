"""Completion from the compiled base: link targets, anchors, typed refs of the right kind, terms, `hw.` parameters.

- after `[[`: every record id (its kind and title beside it), inserting the
  shortest form that resolves to it (`flopkb.links.resolver`: a unique
  last segment, else more of the id), and each alias that holds what was
  typed (`LIMIT` items in all, an alias counted as one);
- after `[[target#`: the target's formula and measurement ids;
- in a typed reference field (`values_for`, `hardware`, `sources`,
  `measured`, formula `ref`, ...): only records of the kinds the field takes
  (`flopkb.links.extract.ref_fields`), and after `#`, where the field takes
  an anchor, the anchors of such a record it takes (a source's measurement
  ids for `measured`, a flop's or fact's formula ids for `ref`);
- in a field that takes a vocabulary term (`category`, `parameter`,
  `basis`): the terms of schema/vocabulary.yaml as the last check read it;
- after `hw.`: the vocabulary's hardware parameters, with their units;
- in a `unit:` field and after a quantity's number: the units of the unit
  registry (`flopkb.editor.unit_names`).
"""

from __future__ import annotations

import re
import typing
from functools import cache

from lsprotocol import types

from flopkb.authoring.schema import _TERMS
from flopkb.editor.positions import units
from flopkb.editor.unit_names import unit_names, unit_typed
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import ref_fields
from flopkb.links.resolver import Resolver
from flopkb.load import models

LIMIT = 200
"""At most this many records are offered at once: the list is marked incomplete and asked for again as more of
the name is typed (at 10,000 records, sending them all costs seconds)."""
_LINK = re.compile(r"\[\[([^\[\]|#]*)$")
_ANCHOR = re.compile(r"\[\[([^\[\]|#]+)#([^\[\]|]*)$")
_HW = re.compile(r"\bhw\.(\w*)$")
_KEY = re.compile(r"\b(\w+):")
_SPACES = re.compile(r"\s*")
_VALUE_CHARS = re.compile(r"[^\s,\[\]{}:]*")
_ITEM = re.compile(r"^(\s*)-\s+([^\s,\[\]{}:]*)$")
_KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?(\w+):")


@cache
def field_kinds() -> dict[str, tuple[tuple[str, ...], bool]]:
    """Field name -> the kinds its typed refs take and whether they take a `#` anchor, over every record kind (the
    names mean one thing throughout)."""
    found: dict[str, tuple[tuple[str, ...], bool]] = {}
    for model in models.MODELS.values():
        for name, taken in ref_fields(model).items():
            found.setdefault(name, taken)
    return found


@cache
def field_terms() -> dict[str, str]:
    """Field name -> the vocabulary section its values are terms of."""
    found: dict[str, str] = {}
    seen: set[type] = set()

    def walk(model: type[models.BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            for item in [*info.metadata, *getattr(info.annotation, "__metadata__", ())]:
                section = _TERMS.get(getattr(item, "func", None))  # type: ignore[arg-type]
                if section is not None:
                    found.setdefault(name, section)
            for inner in _models_in(info.annotation):
                walk(inner)

    for model in models.MODELS.values():
        walk(model)
    return found


def _models_in(annotation: object) -> list[type[models.BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, models.BaseModel):
        return [annotation]
    return [inner for arg in typing.get_args(annotation) for inner in _models_in(arg)]


def shortest_form(resolver: Resolver, record_id: str) -> str:
    """The shortest trailing part of `record_id` that resolves to it (the id itself at worst)."""
    parts = record_id.split("/")
    for start in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[start:])
        if resolver.target(candidate) == record_id:
            return candidate
    return record_id


def _field_of(lines: list[str], line: int, before: str) -> tuple[str, str] | None:
    """The field whose value is being typed at the end of `before`, and what of the value is typed."""
    item = _ITEM.match(before)
    if item is not None:  # a block list item: the key is above it, less indented
        indent = len(item.group(1))
        for above in reversed(lines[:line]):
            key = _KEY_LINE.match(above)
            if key is not None and len(key.group(1)) < indent + (0 if above.lstrip().startswith("-") else 1):
                return key.group(2), item.group(2)
        return None
    return _keyed(before)


def _keyed(before: str) -> tuple[str, str] | None:
    """The first `key:` of `before` whose value runs to its end: nothing but a value being typed after it (`key: val`)
    or a flow list not closed (`key: [a, b, val`); and what of that value is typed (the characters a value can have at
    the end of `before`). Linear in the length of `before` (a line can be a megabyte)."""
    typed = _VALUE_CHARS.match(before[::-1])
    assert typed is not None  # it matches the empty string
    start = len(before) - typed.end()
    closed = before.rfind("]")
    for key in _KEY.finditer(before):
        after = _SPACES.match(before, key.end())
        assert after is not None
        at = after.end()
        if at == start or (at < len(before) and before[at] == "[" and at > closed):
            return key.group(1), before[start:]
    return None


def _item(
    label: str, kind: types.CompletionItemKind, detail: str | None, insert: str, typed: int, line: int, character: int
) -> types.CompletionItem:
    edit = types.TextEdit(
        range=types.Range(
            start=types.Position(line=line, character=character - typed),
            end=types.Position(line=line, character=character),
        ),
        new_text=insert,
    )
    return types.CompletionItem(label=label, kind=kind, detail=detail, text_edit=edit, filter_text=label)


def complete(
    kb: KnowledgeBase, lines: list[str], line: int, before: str, character: int, encoding: str
) -> types.CompletionList:
    """The completions at the end of `before` (the text of line `line` up to the cursor, at the client's
    `character`); each replaces what was typed of it. Incomplete when more records match than `LIMIT`."""
    resolver = Resolver.of(kb)
    incomplete: list[bool] = []

    def records(kinds: tuple[str, ...] | None, typed: str, shortest: bool) -> list[types.CompletionItem]:
        """The ids of records of `kinds` that hold what was typed, and in a link the aliases that hold it: `LIMIT`
        items at most, each alias counted (a record may have thousands)."""
        found: list[types.CompletionItem] = []
        width = typed_units_of(typed)
        wanted = typed.lower()
        for record_id in sorted(kb.entries):
            summary = kb.entries[record_id].summary
            if kinds is not None and summary.kind not in kinds:
                continue
            offered = []
            if wanted in record_id.lower():
                detail = " · ".join(part for part in (summary.kind, summary.title) if part)
                offered.append((record_id, detail, shortest_form(resolver, record_id) if shortest else record_id))
            if shortest:
                offered += [
                    (alias, f"alias of {record_id}", alias) for alias in summary.aliases if wanted in alias.lower()
                ]
            if len(found) + len(offered) > LIMIT:
                incomplete.append(True)
                offered = offered[: LIMIT - len(found)]
            kind = types.CompletionItemKind.Reference
            found += [_item(label, kind, about, text, width, line, character) for label, about, text in offered]
            if incomplete:
                break
        return found

    def anchors(target: str, typed: str, kinds: tuple[str, ...] | None = None) -> list[types.CompletionItem]:
        """The formula and measurement ids of the record `target` names; in a typed ref (`kinds`), only where the
        record is of a kind it takes, and only the anchors it takes (a source's measurements, else formulas)."""
        record_id = resolver.target(target)
        if record_id is None:
            return []
        summary = kb.entries[record_id].summary
        if kinds is not None and summary.kind not in kinds:
            return []
        width = typed_units_of(typed)
        formulas = [
            _item(name, types.CompletionItemKind.Function, f"formula of {record_id}", name, width, line, character)
            for name in summary.formula_ids or ()
            if kinds is None or summary.kind != "source"
        ]
        return formulas + [
            _item(name, types.CompletionItemKind.Value, f"measurement of {record_id}", name, width, line, character)
            for name in summary.measurement_ids or ()
            if kinds is None or summary.kind == "source"
        ]

    def typed_units_of(typed: str) -> int:
        return units(typed, encoding)

    def choose() -> list[types.CompletionItem]:
        anchored = _ANCHOR.search(before)
        if anchored is not None:
            return anchors(anchored.group(1), anchored.group(2))
        linked = _LINK.search(before)
        if linked is not None:
            return records(None, linked.group(1), shortest=True)
        hw = _HW.search(before)
        if hw is not None and kb.vocabulary is not None:
            width = typed_units_of(hw.group(1))
            return [
                _item(name, types.CompletionItemKind.Variable, parameter.unit, name, width, line, character)
                for name, parameter in sorted(kb.vocabulary.parameters.items())
            ]
        field = _field_of(lines, line, before)
        unit = unit_typed(before, field)
        if unit is not None:
            width = typed_units_of(unit)
            return [
                _item(name, types.CompletionItemKind.Unit, detail, name, width, line, character)
                for name, detail in unit_names()
            ]
        if field is None:
            return []
        name, typed = field
        taken = field_kinds().get(name)
        if taken is not None:
            kinds, takes_anchor = taken
            target, _, anchor = typed.partition("#")
            if "#" in typed:
                return anchors(target, anchor, kinds) if takes_anchor else []
            return records(kinds, typed, shortest=False)
        section = field_terms().get(name)
        if section is not None and kb.vocabulary is not None:
            width = typed_units_of(typed)
            return [
                _item(term, types.CompletionItemKind.EnumMember, section, term, width, line, character)
                for term in kb.vocabulary.terms(section)
            ]
        return []

    items = choose()
    return types.CompletionList(is_incomplete=bool(incomplete), items=items)

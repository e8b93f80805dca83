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

The field is the one YAML reads the cursor in (`flopkb.editor.value_at`):
on a later line of a flow list or mapping, in a block list, inside quotes.
What is inserted is written as it must be there (`_written`).
"""

from __future__ import annotations

import json
import re
import typing
from functools import cache

import yaml
from lsprotocol import types
from yaml.resolver import Resolver as YamlResolver

from flopkb.authoring.schema import _TERMS
from flopkb.editor.positions import units
from flopkb.editor.unit_names import UNIT_FIELD, unit_names, unit_typed
from flopkb.editor.value_at import Typed, value_at
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import ref_fields
from flopkb.links.resolver import Resolver
from flopkb.load import models
from flopkb.load.builder import STR

LIMIT = 200
"""At most this many records are offered at once: the list is marked incomplete and asked for again as more of
the name is typed (at 10,000 records, sending them all costs seconds)."""
_LINK = re.compile(r"\[\[([^\[\]|#]*)$")
_ANCHOR = re.compile(r"\[\[([^\[\]|#]+)#([^\[\]|]*)$")
_HW = re.compile(r"\bhw\.(\w*)$")
_VALUE = re.compile(r"[^\s,\[\]{}:]*")
"""What a value being typed in a field of ids or terms can hold: no blank, nothing YAML reads as structure."""
_PLAIN = re.compile(r"\w[\w./-]*")
_YAML_RESOLVER = YamlResolver()


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


def _written(text: str, quote: str, whole: bool) -> str:
    """`text` as it is written where it goes: escaped inside quotes; as a whole plain value, in double quotes where
    YAML would not read it back as that text (`null`, `1.5`, `a: b`)."""
    if quote == '"' or (not quote and whole and not _plain(text)):
        escaped = json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar
        return escaped[1:-1] if quote else escaped
    return text.replace("'", "''") if quote else text


def _plain(text: str) -> bool:
    """Whether `text`, written plain in a block or a flow collection, is read back as that text."""
    return _PLAIN.fullmatch(text) is not None and _YAML_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == STR


def complete(
    kb: KnowledgeBase, lines: list[str], line: int, before: str, character: int, encoding: str
) -> types.CompletionList:
    """The completions at the end of `before` (the text of line `line` of `lines` up to the cursor, at the client's
    `character`); each replaces what was typed of it. Incomplete when more records match than `LIMIT`."""
    resolver = Resolver.of(kb)
    incomplete: list[bool] = []
    value = value_at("\n".join([*lines[:line], before]))
    quote = value.quote if value is not None else ""

    def item(
        label: str, kind: types.CompletionItemKind, detail: str | None, insert: str, typed: str, whole: bool = False
    ) -> types.CompletionItem:
        """An item that replaces `typed` (the text before the cursor) with `insert`, written as YAML needs there;
        `whole`: as the whole value."""
        start = character - units(typed, encoding)
        edit = types.TextEdit(
            range=types.Range(
                start=types.Position(line=line, character=start), end=types.Position(line=line, character=character)
            ),
            new_text=_written(insert, quote, whole),
        )
        return types.CompletionItem(label=label, kind=kind, detail=detail, text_edit=edit, filter_text=label)

    def records(kinds: tuple[str, ...] | None, typed: str, shortest: bool) -> list[types.CompletionItem]:
        """The ids of records of `kinds` that hold what was typed, and in a link the aliases that hold it: `LIMIT`
        items at most, each alias counted (a record may have thousands). In a field (not `shortest`), each is the
        field's whole value."""
        found: list[types.CompletionItem] = []
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
            found += [item(label, kind, about, text, typed, not shortest) for label, about, text in offered]
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
        formulas = [
            item(name, types.CompletionItemKind.Function, f"formula of {record_id}", name, typed)
            for name in summary.formula_ids or ()
            if kinds is None or summary.kind != "source"
        ]
        return formulas + [
            item(name, types.CompletionItemKind.Value, f"measurement of {record_id}", name, typed)
            for name in summary.measurement_ids or ()
            if kinds is None or summary.kind == "source"
        ]

    def in_field(value: Typed) -> list[types.CompletionItem]:
        """Records of the kinds the field takes, or their anchors, or the vocabulary's terms of the field."""
        name, typed = value.field, value.typed
        taken = field_kinds().get(name or "")
        if taken is not None:
            kinds, takes_anchor = taken
            target, _, anchor = typed.partition("#")
            if "#" in typed:
                return anchors(target, anchor, kinds) if takes_anchor else []
            return records(kinds, typed, shortest=False)
        section = field_terms().get(name or "")
        if section is not None and kb.vocabulary is not None:
            kind = types.CompletionItemKind.EnumMember
            return [item(term, kind, section, term, typed, whole=True) for term in kb.vocabulary.terms(section)]
        return []

    def choose() -> list[types.CompletionItem]:
        anchored = _ANCHOR.search(before)
        if anchored is not None:
            return anchors(anchored.group(1), anchored.group(2))
        linked = _LINK.search(before)
        if linked is not None:
            return records(None, linked.group(1), shortest=True)
        hw = _HW.search(before)
        if hw is not None and kb.vocabulary is not None:
            return [
                item(name, types.CompletionItemKind.Variable, parameter.unit, name, hw.group(1))
                for name, parameter in sorted(kb.vocabulary.parameters.items())
            ]
        field = (value.field, value.quote + value.typed) if value is not None and value.field is not None else None
        unit = unit_typed(before, field)
        if unit is not None:  # the whole value where it is all of a `unit:` field's (`%` cannot start a plain one)
            whole = value is not None and value.field == UNIT_FIELD and unit == value.typed
            kind = types.CompletionItemKind.Unit
            return [item(name, kind, detail, name, unit, whole) for name, detail in unit_names()]
        if value is None or _VALUE.fullmatch(value.typed) is None:
            return []
        return in_field(value)

    items = choose()
    return types.CompletionList(is_incomplete=bool(incomplete), items=items)

"""Validate parsed data against the record models; map every pydantic error to a located diagnostic."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, cast, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, TypeAdapter, ValidationError

from flopkb.load.model_paths import is_mapping, model_at
from flopkb.load.models import (
    KINDS,
    MEASUREMENT_BASES,
    MODELS,
    TERM_SECTIONS,
    Record,
    RefTo,
    Text,
    check_measurement_basis,
    id_problem,
    ready,
    record_kind,
    required_text_fields,
    unbracketed,
)
from flopkb.load.omitted import NOTHING_OMITTED, Omitted, file_loc, prefixes, without, without_items
from flopkb.load.source import Path, Source
from flopkb.load.vocabulary import Vocabulary
from flopkb.load.wording import describe, value_hint, what_is_wrong
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.hints import closest, did_you_mean, snake_case
from flopkb.report.paths import field_path

_CODE_BY_ERROR_TYPE = {
    "missing": "missing-field",
    "extra_forbidden": "unknown-field",
    "unknown_term": "unknown-term",
    "invalid_id": "invalid-id",
}


def expected_id(path: str, records_dir: str) -> str:
    """The id a file at `path` (relative to the root) must have."""
    inside = path[len(records_dir) + 1 :] if path.startswith(records_dir + "/") else path
    return inside.rsplit(".", 1)[0]


Validated = tuple[Record | None, list[Diagnostic], Source]
"""A record's model, or None; its schema problems; its source as the model was read from it (`Source.without`)."""

MAX_ROUNDS = 4
"""Validations of one record at most: each leaves out every part the previous one found wrong."""


def validate_record(source: Source, vocabulary: Vocabulary, record_id: str) -> Validated:
    """The record model of `source`, or None, with every schema problem located in the file.

    A record that is no model hides its formulas, claims and evidence from
    the later stages. So the parts found wrong (an unknown field, a wrong value of
    a field) are reported, left out, and the rest validated again, a few
    times at most: every problem of a record in one run. A required text field
    of the record itself that is missing or wrong (`category`, `description`,
    `vendor`, a source's `title`, `id`) is reported and validated as a stand-in
    (`_stand_ins`) that no later stage checks; a formula's or measurement's id
    that is no id, as the id its hint offers (`_item_id`); a text where a list
    of text goes, as the list of it (`_one_item_list`). A misspelt or missing `kind` is
    taken as the one kind whose fields the record has (`record_kind`). When
    another required part is left out, the entry of a mapping or the list item
    that holds it is left out whole (a spec whose basis is no term: the
    accelerator's other specs are still checked), as is a list item that is
    wrong as a whole (a claim with both `value` and `measured`, text where a
    formula goes); when the record itself holds it, the record is no model,
    and its problems stand as found. A list item left out is taken out of its
    list, in the model and in the source returned (`Source.without`), so that
    later stages check the list's other items as if it were absent, each at
    its place in the file. A field left out stays in the source's data as
    written, named there (`Source.rejects`), so that no later stage judges
    the default the model holds in its place, which the schema told wrong.
    """
    data = source.data
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in MODELS:
        fitting = record_kind(data)
        problem = _kind_problem(source, kind, fitting)
        if fitting is None:
            return None, [problem], source
        record, diagnostics, read = _validate(source, {**data, "kind": fitting}, vocabulary, record_id)
        return record, [problem, *diagnostics], read
    return _validate(source, data, vocabulary, record_id)


_NOT_CHECKED = "; the record's other fields are not checked until it has a kind"


def _kind_problem(source: Source, kind: Any, fitting: str | None) -> Diagnostic:
    """The diagnostic of a missing, unknown or malformed `kind`; it says so when the record is not checked as the
    kind it `fitting`ly has the fields of."""
    kinds = ", ".join(KINDS)
    suffix = "" if fitting is not None else _NOT_CHECKED
    if "kind" not in source.data:
        line, column = source.position(())
        hint = f"add `kind: {fitting}`" if fitting else f"add `kind:` with one of {kinds}"
        return make(
            "missing-field", source.path, line, column, f"the field 'kind' is required; one of {kinds}{suffix}", hint
        )
    line, column = source.position(("kind",))
    if not isinstance(kind, str):
        message = f"kind: expected text, one of {kinds}; got {describe(kind)}{suffix}"
        return make("invalid-value", source.path, line, column, message)
    hint = did_you_mean(kind, KINDS) or f"one of {kinds}"
    return make("unknown-term", source.path, line, column, f"'{cut(kind)}' is not a record kind{suffix}", hint)


def _validate(source: Source, data: dict[str, Any], vocabulary: Vocabulary, record_id: str) -> Validated:
    """`validate_record` once the record's kind is known (`data["kind"]`)."""
    model = ready(MODELS[data["kind"]])
    diagnostics = _id_diagnostics(source, record_id)
    seen: set[tuple[str, Path]] = set()
    left_out: set[Path] = set()
    meaningful: set[Path] = set()
    stood: set[Path] = set()
    unknown: set[Path] = set()  # unknown fields: nothing a later stage reads
    dropped = NOTHING_OMITTED  # the list items left out: taken out of their lists, each alone
    for _ in range(MAX_ROUNDS):
        try:
            validated = without_items(data, dropped)
            record = cast(Record, model.model_validate(validated, context={"vocabulary": vocabulary}))
            told = Omitted({path: _at(source.data, path) for path in left_out - unknown}) if left_out else dropped
            return record, diagnostics, source.without(told)
        except ValidationError as error:
            found = error.errors(include_url=False)
            items: list[Any] = _of_a_list(
                [{**item, "loc": file_loc(data, item["loc"], dropped)} for item in found], data
            )
        lost = {holder for item in items if (holder := _holder_of_lost(item, data, left_out)) is not None}
        if any(not holder for holder in lost):
            break  # the record itself lost a required part: the problems found so far are the record's
        # A mapping's rules ("exactly one of value and measured") are judged on it as written, in the first round
        # (`ExactlyOne`): one that lost a part and now breaks a rule does so of the retry's making, not the
        # author's, so it is left out too, not reported.
        made = prefixes(path[:-1] for path in meaningful)
        reported = [
            item
            for item in items
            if _data_path(data, item["loc"])[0] not in made and not _reads_a_misspelt_key(item, data, source, model)
        ]
        diagnostics.extend(_located(reported, data, source, model, seen, _Context(record_id, vocabulary)))
        # What the author evidently meant is validated in place of what is written, once reported: a stand-in for
        # a required text field of the record, the ref that a ref written as a [[wikilink]] stands for.
        stand_ins = _stand_ins(model, vocabulary, record_id)  # only for a record that failed: most records never do
        standing: dict[Path, Any] = {path: ref for item in items for path, ref in _bracketed_ref(item, data, model)}
        standing |= {path: name for item in items for path, name in _item_id(item, data)}
        standing |= {path: listed for item in items for path, listed in _one_item_list(item, data, model, vocabulary)}
        standing |= {(field,): stand_ins[field] for item in items if (field := _top_field(item)) in stand_ins}
        items = [item for item in items if _data_path(data, item["loc"])[0] not in standing]
        items = [item for item in items if _top_field(item) not in stand_ins]
        parts = [(item["type"], _optional_part(data, item["loc"])) for item in items]
        # A mapping's entry that lost a required part (a spec without its basis) is left out whole.
        holding = prefixes(path[:-1] for path in lost if path)
        wrong = {path for _, path in parts if path and path not in lost and path not in holding} | lost
        if not wrong - left_out and not standing.keys() - stood:
            break
        left_out |= wrong
        dropped = Omitted({path: _at(source.data, path) for path in left_out if isinstance(path[-1], int)})
        stood |= standing.keys()
        meaningful |= {path for kind, path in parts if path and kind != "extra_forbidden"}  # unknown: meaningless
        unknown |= {path for kind, path in parts if path and kind == "extra_forbidden"}
        data = _replaced(without(data, wrong, dict), standing)
    return None, diagnostics, source


def _reads_a_misspelt_key(item: dict[str, Any], data: Any, source: Source, model: type) -> bool:
    """Whether pydantic's error `item` is a mapping's rule (`ExactlyOne`) that misses a field the mapping has under a
    misspelt key (`valu:`): that key is told unknown, with the fix, and the rule judged once it is right."""
    reads = (item.get("ctx") or {}).get("reads", ())
    if not reads:
        return False
    path, _ = _data_path(data, item["loc"])
    owner, mapping = model_at(model, path), _at(source.data, path)
    return (
        owner is not None
        and isinstance(mapping, dict)
        and any(mapping.get(field) is None and _misspelling_of(field, path, source, owner) for field in reads)
    )


def _of_a_list(items: list[Any], data: Any) -> list[Any]:
    """Pydantic's errors without those of a union's alternatives that are no list, for a list whose items the list
    alternative found wrong (a sweep `x: [1, {a: b}]`): the author wrote a list; its wrong items are the problems."""
    paths = [_data_path(data, item["loc"]) for item in items]
    into = {path[:-1] for path, _ in paths if path and isinstance(path[-1], int)}
    return [
        item
        for item, (path, trailing) in zip(items, paths, strict=True)
        if not (trailing and path in into and isinstance(_at(data, path), list))
    ]


def _stand_ins(model: type[BaseModel], vocabulary: Vocabulary, record_id: str) -> dict[str, str]:
    """A valid value for each required text field of the record itself, which validation takes in place of one
    missing or wrong (reported as it is): the id the file's path implies, a term of the field's section, else empty
    text. No later stage checks these fields, so the record's formulas, claims and evidence are checked as if the
    field were right, and nothing is reported about the stand-in."""
    found: dict[str, str] = {}
    for name in required_text_fields(model):
        info = model.model_fields[name]
        allowed = _allowed_values(info.metadata, vocabulary)
        if name == "id":
            found[name] = record_id
        elif allowed:
            found[name] = allowed[0]
        elif not any(isinstance(item, AfterValidator) for item in info.metadata):
            found[name] = ""
    return found


def _bracketed_ref(item: dict[str, Any], data: Any, model: type) -> list[tuple[Path, Any]]:
    """The ref a value that pydantic's error is about stands for, when it is a ref written as a [[wikilink]]
    (`unbracketed`), at its path: as text, or as a list of one ref where the field is a list."""
    path, _ = _data_path(data, item["loc"])
    field = _ref_field(model, path)
    ref = unbracketed(_at(data, path)) if field is not None else None
    if field is None or ref is None:
        return []
    return [(path, [ref] if field[1] and not isinstance(path[-1], int) else ref)]


_ITEM_IDS = ("formulas", "measurements")
"""The lists whose items have ids that validation may stand in for (`_item_id`)."""


def _item_id(item: dict[str, Any], data: Any) -> list[tuple[Path, str]]:
    """The id that a formula's or measurement's id which is no id stands for, at its path: the one name the hint
    offers (`Bad Name` → `bad_name`), when no other item of its list is written with an id that is it or stands for
    it. Its item is then checked whole (its expression, its claims), not left out."""
    path, _ = _data_path(data, item["loc"])
    offered: tuple[str, ...] = getattr((item.get("ctx") or {}).get("hint"), "offered", ())
    if len(path) != 3 or path[0] not in _ITEM_IDS or path[2] != "id" or len(offered) != 1:
        return []
    written = [entry.get("id") for entry in data[path[0]] if isinstance(entry, dict)]
    taken = [other for other in written if isinstance(other, str) and offered[0] in (other, snake_case(other))]
    return [(path, offered[0])] if len(taken) == 1 else []  # its own only


def _one_item_list(item: dict[str, Any], data: Any, model: type, vocabulary: Vocabulary) -> list[tuple[Path, Any]]:
    """A text written where a list goes (`aliases: old`), as the list of it that its hint offers, at its path: when
    that list is a valid value of the field (`affected_by_hardware: [hw/h100]`, not `formulas: [text]`)."""
    path, _ = _data_path(data, item["loc"])
    value = _at(data, path)
    owner = model_at(model, path[:-1]) if path and isinstance(path[-1], str) else None
    info = owner.model_fields.get(str(path[-1])) if owner is not None else None
    if item["type"] != "list_type" or not isinstance(value, str) or info is None:
        return []
    try:
        _adapter(owner, str(path[-1])).validate_python([value], context={"vocabulary": vocabulary})
    except ValidationError:
        return []
    return [(path, [value])]


@cache
def _adapter(owner: type[BaseModel], field: str) -> TypeAdapter[Any]:
    """A validator of the field's values alone, built once per field (a file may hold thousands of such texts)."""
    annotation: Any = owner.model_fields[field].annotation  # a declared field's: never None
    return TypeAdapter(annotation, config=ConfigDict(strict=False))


def _ref_field(model: type, path: Path) -> tuple[str, bool] | None:
    """The ref field at `path` (or whose list holds the item at `path`), and whether it is a list; None when there
    is none."""
    at = path[:-1] if path and isinstance(path[-1], int) else path
    if not at or not isinstance(at[-1], str):
        return None
    owner = model_at(model, at[:-1])
    info = owner.model_fields.get(at[-1]) if owner is not None else None
    if info is None or not _holds_ref(info.annotation, info.metadata):
        return None
    return at[-1], _is_list(info.annotation)


def _free_text_item(model: type, path: Path) -> bool:
    """Whether `path` is an item of a list of free text (`tags`, `workarounds`): no ref, id or quantity."""
    owner = model_at(model, path[:-2]) if len(path) >= 2 and isinstance(path[-2], str) else None
    info = owner.model_fields.get(str(path[-2])) if owner is not None else None
    return info is not None and get_args(info.annotation) in ((str,), (Text,))


def _holds_ref(annotation: Any, metadata: list[Any]) -> bool:
    if any(isinstance(item, RefTo) for item in (*metadata, *getattr(annotation, "__metadata__", ()))):
        return True
    return any(_holds_ref(arg, []) for arg in get_args(annotation))


def _is_list(annotation: Any) -> bool:
    return get_origin(annotation) is list or any(_is_list(arg) for arg in get_args(annotation))


def _bracket_hint(path: Path, source: Source, model: type) -> str | None:
    """For a ref written as a [[wikilink]]: the field as it is written without brackets."""
    field = _ref_field(model, path)
    at = path[:-1] if path and isinstance(path[-1], int) else path
    written = _at(source.data, at)
    if field is None or unbracketed(_at(source.data, path)) is None:
        return None
    if not field[1]:
        return f"refs are written without brackets: `{field[0]}: {cut(str(unbracketed(written)))}`"
    items = written if isinstance(written, list) else [written]
    shown = ", ".join(cut(str(unbracketed(item) or item)) for item in items)
    return f"refs are written without brackets: `{field[0]}: [{shown}]`"


def _at(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def _replaced(data: Any, values: dict[Path, Any]) -> Any:
    """`data` with the values at `values`' paths in place of what is there, or added to their mapping (copied where
    they are, shared elsewhere)."""
    holding = prefixes(values)
    added: dict[Path, dict[Any, Any]] = {}
    for path, value in values.items():
        added.setdefault(path[:-1], {})[path[-1]] = value

    def copied(node: Any, at: Path) -> Any:
        if at in values:
            return values[at]
        if at not in holding:
            return node
        if isinstance(node, dict):
            new = {key: value for key, value in added.get(at, {}).items() if key not in node}
            return {key: copied(value, (*at, key)) for key, value in node.items()} | new
        if isinstance(node, list):
            return [copied(value, (*at, index)) for index, value in enumerate(node)]
        return node

    return copied(data, ())


def _top_field(item: dict[str, Any]) -> str | None:
    """The field of the record itself that pydantic's error is about (a missing one, or one whose value is wrong)."""
    loc = item["loc"]
    return loc[0] if len(loc) == 1 and isinstance(loc[0], str) else None


def _optional_part(data: Any, loc: tuple[Any, ...]) -> Path | None:
    """The part that holds the problem at `loc`: the deepest mapping key or list item on its path."""
    path, _ = _data_path(data, loc)
    node, deepest, walked = data, None, []
    for part in path:
        walked.append(part)
        if isinstance(node, (dict, list)):
            deepest = tuple(walked)
        node = node[part]
    return deepest


def _holder_of_lost(item: dict[str, Any], data: Any, left_out: set[Path]) -> Path | None:
    """The mapping that misses a field only because it was left out, if that is what pydantic reports."""
    if item["type"] != "missing":
        return None
    path, trailing = _data_path(data, item["loc"])
    return path if trailing and (*path, trailing[-1]) in left_out else None


def _id_diagnostics(source: Source, record_id: str) -> list[Diagnostic]:
    value = source.data.get("id")
    if not isinstance(value, str) or id_problem(value) or value == record_id:
        return []  # absent or malformed ids are reported by the model
    line, column = source.position(("id",))
    return [
        make(
            "id-path-mismatch",
            source.path,
            line,
            column,
            f"the id '{value}' is not the file's path; expected '{record_id}'",
            f"set id: {record_id}, or move the file (flopkb mv)",
        )
    ]


@dataclass(frozen=True, slots=True)
class _Context:
    """What a hint may name beyond the record: the id its path implies, the vocabulary's terms."""

    record_id: str
    vocabulary: Vocabulary


def _located(
    items: list[Any], data: Any, source: Source, model: type, seen: set[tuple[str, Path]], context: _Context
) -> list[Diagnostic]:
    result = []
    for item in items:
        path, trailing = _data_path(data, item["loc"])
        code = _CODE_BY_ERROR_TYPE.get(item["type"], "invalid-value")
        # One diagnostic per place: a union reports each alternative, a second validation the same. Each missing
        # field is a place of its own.
        place = (*path, trailing[-1]) if code == "missing-field" and trailing else path
        if (code, place) in seen:
            continue
        seen.add((code, place))
        result.append(_diagnostic(code, item, path, trailing, source, model, context))
    return result


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[Path, list[Any]]:
    """The part of pydantic's `loc` that indexes the data, and what is left (union labels, a missing key)."""
    path: list[Any] = []
    trailing: list[Any] = []
    node = data
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node = node[part]
            path.append(part)
        else:
            trailing.append(part)
    return tuple(path), trailing


def _diagnostic(
    code: str, item: dict[str, Any], path: Path, trailing: list[Any], source: Source, model: type, context: _Context
) -> Diagnostic:
    where = field_path(path) or "the record"
    hint = None
    if code == "missing-field":
        field = trailing[-1] if trailing else "?"
        line, column = source.position(path)
        message = f"the field '{field}' is required in {where}"
        hint = _missing_hint(str(field), path, source, model, context)
    elif code == "unknown-field":
        line, column = source.position(path, key=True)
        field = path[-1] if path else "?"
        message = f"'{cut(str(field))}' is not a field here"
        hint = _field_hint(str(field), path, source, model)
        message, hint = _indented_into(path, source, model, context) or (message, hint)
    elif code == "unknown-term":
        on_key = "[key]" in trailing
        line, column = source.position(path, key=on_key)
        ctx = item.get("ctx") or {}
        message = f"'{ctx.get('value')}' is not a term of '{ctx.get('section')}' in schema/vocabulary.yaml"
        hint = ctx.get("hint") or None
    elif (bracketed := _bracket_hint(path, source, model)) is not None:
        line, column = source.position(path)
        message, hint = f"{where}: a ref is written without [[brackets]]", bracketed
    else:
        line, column = source.position(path, key="[key]" in trailing)
        message = f"{where}: {what_is_wrong(item)}"
        hint = value_hint(item, path, model_at(model, path), _free_text_item(model, path))
        if code == "invalid-id" and path == ("id",) and id_problem(context.record_id) is None:
            hint = f"set id: {context.record_id}, the id that the file's path implies"
    return make(code, source.path, line, column, message, hint)


def _missing_hint(field: str, path: Path, source: Source, model: type, context: _Context) -> str | None:
    """What to write for a missing field: the id its path implies; a misspelt key of the same mapping renamed; the
    values a closed set allows; else what the field holds (its docstring's first sentence)."""
    if field == "id" and not path:
        return f"add `id: {context.record_id}`, the id that the file's path implies"
    owner = model_at(model, path)
    info = owner.model_fields.get(field) if owner is not None else None
    if owner is None or info is None:
        return None
    misspelt = _misspelling_of(field, path, source, owner)
    if misspelt is not None:
        return misspelt
    allowed = _allowed_values(info.metadata, context.vocabulary)
    if allowed:
        return f"add `{field}:` with one of {', '.join(allowed)}"
    what = _FIRST_SENTENCE_END.split(info.description or "", maxsplit=1)[0].rstrip(".")
    return f"add `{field}:`, {what[:1].lower()}{what[1:]}" if what else f"add `{field}:`"


_FIRST_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")
"""Where a docstring's first sentence ends: not at "e.g. batch_size" or "p. 12"."""


def _misspelling_of(field: str, path: Path, source: Source, owner: type[BaseModel]) -> str | None:
    """A hint to rename a key of the mapping at `path` that is no field of `owner` and closest to `field` of its
    fields (`efect` for a missing `effect`), or None."""
    mapping = _at(source.data, path)
    if not isinstance(mapping, dict):
        return None
    unknown = [key for key in mapping if isinstance(key, str) and key not in owner.model_fields]
    for key in unknown:
        if closest(key, owner.model_fields) == [field]:
            line, _ = source.position((*path, key), key=True)
            return f"rename '{key}' (line {line}) to `{field}`"
    return None


def _allowed_values(metadata: list[Any], vocabulary: Vocabulary) -> list[str]:
    """The values a field's validators accept when they are a closed set (a vocabulary section, the bases of a
    measurement), else []."""
    checks = [item.func for item in metadata if isinstance(item, AfterValidator)]
    if check_measurement_basis in checks:
        return list(MEASUREMENT_BASES)
    return next((vocabulary.terms(TERM_SECTIONS[check]) for check in checks if check in TERM_SECTIONS), [])


def _indented_into(path: Path, source: Source, model: type, context: _Context) -> tuple[str, str] | None:
    """What to say of an unknown key that is a key the mapping one level up takes, and does not have: it is
    indented into the mapping that holds it; with the hint to indent it as that mapping's key."""
    if len(path) < 3 or not isinstance(path[-2], str):
        return None
    field, holder, above = str(path[-1]), path[-2], path[:-2]
    mapping = _at(source.data, above)
    if field in mapping or field not in _keys_at(model, above, context.vocabulary):
        return None
    line, column = source.position(path[:-1], key=True)
    return (
        f"'{field}' is not a field of '{cut(holder)}' but a key of {field_path(above)}, indented into '{cut(holder)}'",
        f"indent it by {column - 1} spaces, as '{cut(holder)}' on line {line}",
    )


def _keys_at(model: type, path: Path, vocabulary: Vocabulary) -> list[str]:
    """The keys the mapping at `path` takes: its model's fields, or the terms a mapping of models is keyed by."""
    owner = model_at(model, path)
    if owner is not None:
        return list(owner.model_fields)
    parent = model_at(model, path[:-1]) if path and isinstance(path[-1], str) else None
    info = parent.model_fields.get(str(path[-1])) if parent is not None else None
    if info is None or not is_mapping(info.annotation):
        return []
    key_type = get_args(info.annotation)[0]
    return _allowed_values(list(getattr(key_type, "__metadata__", ())), vocabulary)


def _field_hint(field: str, path: Path, source: Source, model: type) -> str | None:
    """The hint of an unknown key at `path`: the field of its mapping it is likely a misspelling of, when that field
    is not given there already (renamed, it would be a second copy); when it is, where."""
    owner = model_at(model, path[:-1])
    if owner is None:
        return None
    try:
        mapping = _at(source.data, path[:-1])
    except (KeyError, IndexError, TypeError):
        mapping = {}
    given = [name for name in owner.model_fields if isinstance(mapping, dict) and name in mapping]
    missing = [name for name in owner.model_fields if name not in given]
    hint = did_you_mean(field, missing)
    if hint is not None:
        return hint
    same = did_you_mean(field, given)
    if same is None:
        return None
    name = same.offered[0]
    line, _ = source.position((*path[:-1], name), key=True)
    return f"did you mean {name}? It is given already, on line {line}: keep one of the two"

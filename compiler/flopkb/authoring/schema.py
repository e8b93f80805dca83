"""JSON Schemas of the record kinds, for editors: generated from the record models and the vocabulary.

One schema per kind (`schema/flop.schema.json`, ...) and one for any record
(`schema/record.schema.json`, which picks the kind's schema by `kind` with `if`/`then`). The YAML language
server reads them to complete field names and controlled terms and to flag
mistakes while typing (see docs/authoring.md).

The models give the shape, `additionalProperties: false` (unknown fields are
errors) and the field descriptions (their attribute docstrings). What the
models check in code is added here from the same definitions: the terms of
`schema/vocabulary.yaml` become `enum`s (and the keys of `specs` become
properties, so that editors offer them), ids get their grammar as a pattern,
and a quantity written as text the pattern of the units the evaluator reads.
Output is deterministic: sorted keys, two-space indentation, a final newline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from flopkb.atomic import write_atomically
from flopkb.formulas.units import quantity_pattern
from flopkb.load import models
from flopkb.load.files import Unreadable, read_bytes
from flopkb.load.vocabulary import Vocabulary

DIALECT = "https://json-schema.org/draft/2020-12/schema"
RECORD_SCHEMA = "record.schema.json"


def schema_file(kind: str) -> str:
    """The file name of a kind's schema inside the schema folder."""
    return f"{kind}.schema.json"


def _after(annotation: Any) -> Callable[..., Any]:
    """The function of the `AfterValidator` in an `Annotated` alias or a field's metadata."""
    metadata = getattr(annotation, "__metadata__", None) or annotation.metadata
    return next(item.func for item in metadata if isinstance(item, AfterValidator))


def _whole(regex: str) -> str:
    return f"^(?:{regex})$"


_TERMS: dict[Callable[..., Any], str] = {
    _after(models.Category): "categories",
    _after(models.ParameterTerm): "parameters",
    _after(models.Basis): "basis",
}
_SEGMENT = models.ID_SEGMENT.pattern
_CONSTRAINTS: dict[Callable[..., Any], JsonSchemaValue] = {
    _after(models.RecordId): {"pattern": _whole(f"{_SEGMENT}(?:/{_SEGMENT})*"), "maxLength": models.MAX_ID_LENGTH},
    _after(models.Formula.model_fields["id"]): {"pattern": _whole(models.FORMULA_ID.pattern)},
    _after(models.Measurement.model_fields["id"]): {"pattern": _whole(models.FORMULA_ID.pattern)},
    models.check_measurement_basis: {"enum": list(models.MEASUREMENT_BASES)},
    _after(models.ScalesWith.model_fields["factor"]): {"pattern": _whole(models.SNAKE_CASE.pattern)},
    _after(models.Url): {"format": "uri"},
}


def _term_descriptions(vocabulary: Vocabulary, section: str) -> dict[str, str]:
    if section == "parameters":
        return {
            name: f"{parameter.description} Unit: {parameter.unit}."
            for name, parameter in vocabulary.parameters.items()
        }
    return dict(getattr(vocabulary, section))


def _generator(vocabulary: Vocabulary) -> type[GenerateJsonSchema]:
    class RecordSchema(GenerateJsonSchema):
        """pydantic's generator, told what the models' validator functions check."""

        def function_after_schema(self, schema: core_schema.AfterValidatorFunctionSchema) -> JsonSchemaValue:
            json_schema = dict(super().function_after_schema(schema))
            section = _TERMS.get(schema["function"]["function"])
            if section is not None:
                terms = vocabulary.terms(section)
                descriptions = _term_descriptions(vocabulary, section)
                json_schema["enum"] = terms
                json_schema["enumDescriptions"] = [
                    descriptions[term] for term in terms
                ]  # shown by editors that know it
            json_schema.update(_CONSTRAINTS.get(schema["function"]["function"], {}))
            return json_schema

        def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
            json_schema = super().dict_schema(schema)
            keys = schema.get("keys_schema", {})
            section = _TERMS.get(keys["function"]["function"]) if keys.get("type") == "function-after" else None
            if section is not None:  # a mapping keyed by terms: name every key, so that editors offer them
                values = json_schema.pop("additionalProperties")
                json_schema.pop("propertyNames")
                described = _term_descriptions(vocabulary, section)
                json_schema["properties"] = {
                    term: {**values, "description": described[term]} for term in vocabulary.terms(section)
                }
                json_schema["additionalProperties"] = False
            return json_schema

        def field_title_should_be_set(self, schema: CoreSchema | Any) -> bool:
            return False  # a field's title would only repeat its name

    return RecordSchema


def schemas(vocabulary: Vocabulary) -> dict[str, str]:
    """File name → text of every schema, for the given vocabulary."""
    generator = _generator(vocabulary)
    documents: dict[str, JsonSchemaValue] = {}
    for kind, model in models.MODELS.items():
        documents[schema_file(kind)] = _document(
            model.model_json_schema(schema_generator=generator), f"A flopkb {kind} record"
        )
    documents[RECORD_SCHEMA] = _document(_any_record(generator), "A flopkb record")
    return {
        name: json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        for name, document in documents.items()
    }


def _any_record(generator: type[GenerateJsonSchema]) -> JsonSchemaValue:
    """A record of any kind: `kind` picks the kind's schema with `if`/`then`, so that a validator reports a
    mistake at its field, where `oneOf` (with OpenAPI's `discriminator`, which JSON Schema ignores) could only say
    that the record matches none of the kinds."""
    union = TypeAdapter(Annotated[models.Record, Field(discriminator="kind")]).json_schema(schema_generator=generator)
    kinds = union["discriminator"]["mapping"]
    return {
        "$defs": union["$defs"],
        "description": "A flopkb record of any kind; `kind` says which: " + ", ".join(models.KINDS) + ".",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(models.KINDS), "description": "The record's kind."}},
        "allOf": [
            {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"$ref": kinds[kind]}}
            for kind in models.KINDS
        ],
    }


def _document(schema: JsonSchemaValue, title: str) -> JsonSchemaValue:
    return {"$schema": DIALECT, **_with_quantity_patterns(schema), "title": title}


def _with_quantity_patterns(node: Any) -> Any:
    """`node` with each quantity the models mark (`models.QUANTITY_MARK`) given the pattern of the units."""
    if isinstance(node, list):
        return [_with_quantity_patterns(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _with_quantity_patterns(value) for key, value in node.items() if key != models.QUANTITY_MARK}
    return {**found, "pattern": quantity_pattern()} if models.QUANTITY_MARK in node else found


def refresh(folder: Path, texts: dict[str, str], *, write: bool) -> list[str]:
    """The names of the schemas in `texts` whose file in `folder` is missing, different or a symlink; each written
    anew when `write` (a symlink replaced by the file, never written through: it could lead anywhere)."""
    stale = [name for name, text in texts.items() if not _holds(folder / name, text)]
    if write:
        for name in stale:
            write_atomically(folder / name, texts[name].encode())
    return stale


def _holds(path: Path, text: str) -> bool:
    """Whether `path` is a regular file holding `text` (a symlink, never read through, is not)."""
    if path.is_symlink():
        return False
    try:
        return read_bytes(str(path)) == text.encode()
    except Unreadable:
        return False

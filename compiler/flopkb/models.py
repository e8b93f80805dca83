"""The typed record models: one pydantic class per kind, fields in the spec's order.

Field metadata marks what the compiler does with a value: `MARKDOWN` fields
may hold wikilinks, `RefTo(kind)` fields are typed references. The link graph
and the formatter read these markers, so a new field needs no code elsewhere.
Controlled terms are checked against the vocabulary passed as validation
context (`{"vocabulary": Vocabulary}`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from flopkb.hints import did_you_mean

ID_SEGMENT = re.compile(r"[a-z0-9][a-z0-9._-]*")
FORMULA_ID = re.compile(r"[a-z][a-z0-9_-]*")
SNAKE_CASE = re.compile(r"[a-z][a-z0-9_]*")
MAX_ID_LENGTH = 200
KINDS = ("flop", "fact", "engine", "accelerator", "source")


@dataclass(frozen=True, slots=True)
class Markdown:
    """Marks a field whose text is markdown and may hold wikilinks."""


@dataclass(frozen=True, slots=True)
class RefTo:
    """Marks a typed reference to a record of `kind` (URLs allowed when `urls`)."""

    kind: str
    urls: bool = False


MARKDOWN = Markdown()


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def id_problem(value: str) -> str | None:
    """Why `value` breaks the id grammar, or None."""
    if len(value) > MAX_ID_LENGTH:
        return f"an id has at most {MAX_ID_LENGTH} characters"
    if not value or value.startswith("/") or value.endswith("/"):
        return "an id is segments joined by '/', with no leading or trailing '/'"
    for segment in value.split("/"):
        if segment == ".." or not ID_SEGMENT.fullmatch(segment):
            return f"the segment '{segment}' must match [a-z0-9][a-z0-9._-]*"
    return None


def _check_id(value: str) -> str:
    problem = id_problem(value)
    if problem:
        raise PydanticCustomError("invalid_id", "'{value}' is not a valid id: {problem}", {"value": value, "problem": problem})
    return value


def _term(section: str) -> AfterValidator:
    def check(value: str, info: ValidationInfo) -> str:
        vocabulary = (info.context or {}).get("vocabulary")
        if vocabulary is not None and value not in getattr(vocabulary, section):
            hint = did_you_mean(value, getattr(vocabulary, section)) or ""
            raise PydanticCustomError("unknown_term", "'{value}' is not a term of '{section}'", {"value": value, "section": section, "hint": hint})
        return value

    return AfterValidator(check)


def _pattern(regex: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not regex.fullmatch(value):
            raise PydanticCustomError("invalid_value", "'{value}' is not {what}", {"value": value, "what": what})
        return value

    return AfterValidator(check)


def _target(value: str) -> str:
    if not value.strip() or value != value.strip():
        raise PydanticCustomError("invalid_value", "a reference must be a non-empty target without surrounding spaces", {})
    return value


RecordId = Annotated[str, AfterValidator(_check_id)]
Text = Annotated[str, MARKDOWN]
Category = Annotated[str, _term("categories")]
ParameterTerm = Annotated[str, _term("parameters")]
Basis = Annotated[str, _term("basis")]
AcceleratorRef = Annotated[str, AfterValidator(_target), RefTo("accelerator")]
SourceRef = Annotated[str, AfterValidator(_target), RefTo("source", urls=True)]
Url = Annotated[str, _pattern(re.compile(r"https?://\S+"), "an http(s) URL")]
QuantityIn = Annotated[Union[str, int, float], Field(union_mode="left_to_right")]
"""A quantity as written: a number or "<number> <unit>"; units are read by the evaluator."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False, coerce_numbers_to_str=False)


class ScalesWith(_Model):
    factor: Annotated[str, _pattern(SNAKE_CASE, "a snake_case name")]
    effect: Text


class HardwareParameter(_Model):
    parameter: ParameterTerm
    effect: Text
    basis: Basis
    magnitude: Text | None = None
    values_for: list[AcceleratorRef]
    sources: list[SourceRef] = []


class Expect(_Model):
    where: dict[str, QuantityIn] = {}
    hardware: AcceleratorRef | None = None
    value: QuantityIn
    rel_tol: Annotated[float, Field(ge=0)] = 0.01


class Formula(_Model):
    id: Annotated[str, _pattern(FORMULA_ID, "a formula id ([a-z][a-z0-9_-]*)")]
    title: str | None = None
    expr: str | None = None
    ref: str | None = None
    unit: str = "1"
    inputs: dict[str, QuantityIn | list[QuantityIn]] = {}
    hardware: list[AcceleratorRef] | None = None
    expect: list[Expect] = []

    @model_validator(mode="after")
    def _expr_or_ref(self) -> Formula:
        if (self.expr is None) == (self.ref is None):
            raise PydanticCustomError("expr_or_ref", "a formula has exactly one of 'expr' and 'ref'", {})
        if self.ref is not None and "#" not in self.ref:
            raise PydanticCustomError("invalid_value", "'ref' is '<record>#<formula-id>'", {})
        return self


class Spec(_Model):
    value: QuantityIn
    basis: Basis
    sources: list[SourceRef] = []
    note: Text | None = None


class _Record(_Model):
    id: RecordId
    title: str | None = None
    aliases: list[RecordId] = []
    tags: list[str] = []
    sources: list[SourceRef] = []
    notes: Text | None = None

    @property
    def display_title(self) -> str:
        return self.title or self.id.rsplit("/", 1)[-1]


class FlopRecord(_Record):
    kind: Literal["flop"]
    category: Category
    description: Text
    scales_with: list[ScalesWith] = []
    hardware_parameters: list[HardwareParameter] = []
    affected_by_hardware: list[AcceleratorRef] = []
    workarounds: list[Text] = []
    formulas: list[Formula] = []


class FactRecord(_Record):
    kind: Literal["fact"]
    statement: Text
    formulas: list[Formula] = []


class EngineRecord(_Record):
    kind: Literal["engine"]
    description: Text
    homepage: Url | None = None
    features: list[str] = []


class AcceleratorRecord(_Record):
    kind: Literal["accelerator"]
    vendor: str
    description: Text | None = None
    specs: dict[ParameterTerm, Spec]


class SourceRecord(_Record):
    kind: Literal["source"]
    title: str  # type: ignore[assignment]  # required for sources
    url: Url | None = None
    authors: list[str] = []
    year: int | None = None
    venue: str | None = None


Record = FlopRecord | FactRecord | EngineRecord | AcceleratorRecord | SourceRecord
MODELS: dict[str, type[_Record]] = {
    "flop": FlopRecord,
    "fact": FactRecord,
    "engine": EngineRecord,
    "accelerator": AcceleratorRecord,
    "source": SourceRecord,
}


_TRAILING_FIELDS = ("sources", "notes")


def field_order(model: type[BaseModel]) -> list[str]:
    """Canonical key order: id, kind, the common heading fields, the kind's own fields, then sources and notes."""
    names = [name for name in model.model_fields if name not in ("id", "kind", *_TRAILING_FIELDS)]
    return ["id", "kind", *names, *_TRAILING_FIELDS]


def formulas_of(record: Record) -> list[Formula]:
    return list(getattr(record, "formulas", []))


def markers(annotation_metadata: list[Any]) -> tuple[bool, RefTo | None]:
    """Whether a field's metadata marks it markdown, and the reference it is, if any."""
    is_markdown = any(isinstance(item, Markdown) for item in annotation_metadata)
    ref = next((item for item in annotation_metadata if isinstance(item, RefTo)), None)
    return is_markdown, ref

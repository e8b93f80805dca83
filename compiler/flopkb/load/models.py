"""The typed record models: one pydantic class per kind, fields in the spec's order.

Field metadata marks what the compiler does with a value: `MARKDOWN` fields
may hold wikilinks, `RefTo(kind)` fields are typed references. The link graph
and the formatter read these markers, so a new field needs no code elsewhere.
Controlled terms are checked against the vocabulary passed as validation
context (`{"vocabulary": Vocabulary}`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    StrictFloat,
    StrictInt,
    ValidationInfo,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from flopkb.load.rules import ExactlyOne, rule
from flopkb.report.cut import cut
from flopkb.report.hints import Suggestion, closest, snake_case

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
    anchored: bool = False
    """Written `<target>#<anchor>`: the anchor names a formula or measurement of the target."""


MARKDOWN = Markdown()


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


_VALID_ID = re.compile(r"[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)*")
"""Segments joined by '/' (a segment never is '..': it cannot start with a dot); one match instead of one per segment."""


def id_problem(value: str) -> str | None:
    """Why `value` breaks the id grammar, or None."""
    if len(value) <= MAX_ID_LENGTH and _VALID_ID.fullmatch(value):
        return None  # every id of a record is checked three times on load: this is the common case, fast
    if len(value) > MAX_ID_LENGTH:
        return f"an id has at most {MAX_ID_LENGTH} characters"
    if not value or value.startswith("/") or value.endswith("/"):
        return "an id is segments joined by '/', with no leading or trailing '/'"
    for segment in value.split("/"):
        if segment == ".." or not ID_SEGMENT.fullmatch(segment):
            return f"the segment '{segment}' must match [a-z0-9][a-z0-9._-]*"
    return None


_NOT_IN_A_SEGMENT = re.compile(r"[^a-z0-9._-]+")


def id_like(value: str) -> str | None:
    """The valid id closest to `value` as written (`Bad Name` → `bad-name`, `flops/H100_SXM` → `flops/h100_sxm`), or
    None when lowering it and joining its words with '-' gives none."""
    segments = [_NOT_IN_A_SEGMENT.sub("-", segment.lower()).strip("-._") for segment in value.strip("/").split("/")]
    like = "/".join(segments)
    return like if like != value and id_problem(like) is None else None


def _check_id(value: str) -> str:
    problem = id_problem(value)
    if problem:
        raise PydanticCustomError(
            "invalid_id", "'{value}' is not a valid id: {problem}", {"value": cut(value), "problem": problem}
        )
    return value


TERM_SECTIONS: dict[Callable[..., Any], str] = {}
"""The section of schema/vocabulary.yaml each term field's validator checks against, by validator function."""


def _term(section: str) -> AfterValidator:
    def check(value: str, info: ValidationInfo) -> str:
        vocabulary = (info.context or {}).get("vocabulary")
        if vocabulary is not None and value not in getattr(vocabulary, section):
            close = closest(value, getattr(vocabulary, section))
            hint = _instead(value, close[0]) if close else ""
            raise PydanticCustomError(
                "unknown_term",
                "'{value}' is not a term of '{section}'",
                {"value": cut(value), "section": section, "hint": hint},
            )
        return value

    TERM_SECTIONS[check] = section
    return AfterValidator(check)


_ONE_WORD = re.compile(r"\S+")
_ONE_NAME = "write it as one name: {}"


def _instead(value: str, name: str, instead: str = _ONE_NAME) -> Suggestion:
    """The hint to write `name` in place of `value` (an editor's quick fix replaces it whole): "did you mean" for a
    word, said as `instead` says it for a value of several words."""
    shown = cut(name)
    return Suggestion(f"did you mean {shown}?" if _ONE_WORD.fullmatch(value) else instead.format(shown), value, [name])


def _pattern(
    regex: re.Pattern[str],
    what: str,
    suggest: Callable[[str], str | None] | None = None,
    instead: str = _ONE_NAME,
) -> AfterValidator:
    """Values must match `regex` (`what` it is, in the message); `suggest` offers what to write instead (`_instead`)."""

    def check(value: str) -> str:
        if not regex.fullmatch(value):
            suggestion = suggest(value) if suggest is not None else None
            hint = _instead(value, suggestion, instead) if suggestion and regex.fullmatch(suggestion) else ""
            raise PydanticCustomError(
                "invalid_value", "'{value}' is not {what}", {"value": cut(value), "what": what, "hint": hint}
            )
        return value

    return AfterValidator(check)


def unbracketed(value: Any) -> str | None:
    """The ref that a value written as a wikilink stands for: `[[x]]` as text (`"[[x]]"`), or as YAML reads it
    unquoted (lists holding one item, down to the text `x`); None for any other value. Refs are written without
    brackets."""
    wrapped = False
    while type(value) is list and len(value) == 1:
        value, wrapped = value[0], True
    if type(value) is not str:
        return None
    if value.startswith("[[") and value.endswith("]]"):
        value, wrapped = value[2:-2], True
    target = value.split("|", 1)[0].strip()
    return target if wrapped and target and "[" not in target and "]" not in target else None


def _target(value: str) -> str:
    if unbracketed(value) is not None:
        raise PydanticCustomError("invalid_value", "a ref is written without [[brackets]]", {})
    if not value.strip() or value != value.strip():
        raise PydanticCustomError(
            "invalid_value", "a reference must be a non-empty target without surrounding spaces", {}
        )
    return value


RecordId = Annotated[str, AfterValidator(_check_id)]
Text = Annotated[str, MARKDOWN]
Category = Annotated[str, _term("categories")]
ParameterTerm = Annotated[str, _term("parameters")]
Basis = Annotated[str, _term("basis")]


def _anchored(value: str) -> str:
    """`<source>#<measurement-id>`; without `#`, the link stage tells the measurements the source has."""
    target, hashed, anchor = _target(value).partition("#")
    if not target or (hashed and not FORMULA_ID.fullmatch(anchor)):
        raise PydanticCustomError(
            "invalid_value", "'{value}' is not '<source>#<measurement-id>'", {"value": cut(value)}
        )
    return value


AcceleratorRef = Annotated[str, AfterValidator(_target), RefTo("accelerator")]
MeasurementRef = Annotated[str, AfterValidator(_anchored), RefTo("source", anchored=True)]
SourceRef = Annotated[str, AfterValidator(_target), RefTo("source", urls=True)]


def with_scheme(value: str) -> str | None:
    """`github.com/x` as the URL it stands for: a host name (its last label a word of letters, so that an id with a
    dot, `mlperf-v4.1-results`, is none), maybe a port (`:8080`), then its path."""
    return f"https://{value}" if re.fullmatch(r"(?:[\w-]+\.)+[A-Za-z]{2,}(?::\d{1,5})?(?:[/#?]\S*)?", value) else None


Url = Annotated[
    str, _pattern(re.compile(r"https?://\S+"), "an http(s) URL", with_scheme, "write it with its scheme: {}")
]


class QuantityText:
    """Marks a quantity written as text, for the editor schema only: validation takes the text as it is (the
    evaluator reads its unit and reports what does not read), and `flopkb schema` gives it the pattern of the
    units the evaluator reads (`QUANTITY_MARK`)."""

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), QUANTITY_MARK: True}


QUANTITY_MARK = "x-flopkb-quantity"


QuantityIn = Annotated[Annotated[str, QuantityText()] | StrictInt | StrictFloat, Field(union_mode="left_to_right")]
"""A quantity as written: a number or "<number> <unit>"; units are read by the evaluator. Strict: `true` is no 1."""


class _Model(BaseModel):
    # defer_build: the validators are built when a record is first validated, not on import (a run whose
    # records all come from the load cache validates none).
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=False,
        coerce_numbers_to_str=False,
        use_attribute_docstrings=True,
        defer_build=True,
    )


class ScalesWith(_Model):
    factor: Annotated[str, _pattern(SNAKE_CASE, "a snake_case name", snake_case)]
    """What the cost scales with, as a snake_case name (e.g. batch_size)."""
    effect: Text
    """How the cost moves with it (markdown; may hold [[wikilinks]])."""


class HardwareParameter(_Model):
    parameter: ParameterTerm
    """The hardware quantity: a term of `parameters` in schema/vocabulary.yaml."""
    effect: Text
    """How this quantity moves the class's cost (markdown; may hold [[wikilinks]])."""
    basis: Basis
    """The evidence behind the row: a term of `basis`; measured, vendor-spec and cited need sources."""
    magnitude: Text | None = None
    """How large the effect is (markdown)."""
    values_for: list[AcceleratorRef]
    """Refs to the accelerator records the row is about."""
    sources: list[SourceRef] = []
    """Evidence for the row: refs to source records, or http(s):// URLs."""


STATED_TOLERANCE = 0.01
"""The default `rel_tol` of a claim that states a `value`: the author's own figure, re-computed."""
MEASURED_TOLERANCE = 0.10
"""The default `rel_tol` of a claim that names a measurement: a model against what a source measured."""


class Expect(_Model):
    where: dict[str, QuantityIn] = {}
    """The value of every sweep input for this claim: input name to quantity."""
    hardware: AcceleratorRef | None = None
    """Ref to the accelerator the claim is computed on (needed when the expression uses hw.)."""
    value: QuantityIn | None = None
    """The claimed result: a quantity; a bare number is read in the formula's unit. Exactly one of value and measured."""
    measured: MeasurementRef | None = None
    """The measurement the formula predicts, as <source>#<measurement-id>. Exactly one of value and measured."""
    rel_tol: Annotated[float, Field(ge=0)] | None = None
    """The relative difference allowed between the claim and the computed value (default 0.01 for a value, 0.10 for a measurement)."""

    _value_or_measured = rule(
        ExactlyOne(
            "a claim",
            ("value", "measured"),
            both="keep one: remove `measured:` to state the value, or `value:` to test the formula against the "
            "measurement",
            neither="add `value:` with the claimed result, or `measured:` with the measurement, as "
            "<source>#<measurement-id>",
        )
    )

    @property
    def tolerance(self) -> float:
        """`rel_tol`, or its default for the kind of claim."""
        if self.rel_tol is not None:
            return self.rel_tol
        return MEASURED_TOLERANCE if self.measured is not None else STATED_TOLERANCE


class Formula(_Model):
    id: Annotated[str, _pattern(FORMULA_ID, "a formula id ([a-z][a-z0-9_-]*)", snake_case)]
    """The formula's id, [a-z][a-z0-9_-]*, unique within the record; [[record#id]] links to it."""
    title: str | None = None
    """A title for readers."""
    expr: str | None = None
    """The expression: numbers, input names, hw.<parameter>, + - * / **, parentheses and min max abs sqrt exp log log2 log10 ceil floor. Exactly one of expr and ref."""
    ref: str | None = None
    """Reuse another record's formula, as <target>#<formula-id>: its expression, unit and inputs. Exactly one of expr and ref."""
    unit: str = "1"
    """The unit the result must be expressible in; "1" is dimensionless (the default)."""
    inputs: dict[str, QuantityIn | list[QuantityIn]] = {}
    """Input name to a quantity, or to a list of quantities (a sweep)."""
    hardware: list[AcceleratorRef] | None = None
    """Refs to the accelerator records to evaluate on; by default, when the expression uses hw., the record's affected_by_hardware plus every row's values_for."""
    valid_when: str | None = None
    """When the formula holds: comparisons (<, <=, >, >=) of expressions over its inputs and hw.<parameter>, joined by `and`; points outside are shown as outside the model's regime, and a claim there is an error."""
    expect: list[Expect] = []
    """Claims the compiler re-computes: a value at given inputs and hardware."""

    _expr_or_ref = rule(
        ExactlyOne(
            "a formula",
            ("expr", "ref"),
            both="keep one: remove `ref:` to use this expression, or `expr:` to reuse the other formula",
            neither="add `expr:` with the expression, or `ref:` with another record's formula, as "
            "<target>#<formula-id>",
        )
    )


MEASUREMENT_BASES = ("measured", "simulated")


def check_measurement_basis(value: str) -> str:
    if value not in MEASUREMENT_BASES:
        raise PydanticCustomError(
            "invalid_value",
            "a measurement's basis is 'measured' or 'simulated', not '{value}'",
            {"value": cut(value)},
        )
    return value


class Measurement(_Model):
    id: Annotated[str, _pattern(FORMULA_ID, "a measurement id ([a-z][a-z0-9_-]*)", snake_case)]
    """The measurement's id, [a-z][a-z0-9_-]*, unique within the source; [[source#id]] links to it."""
    quantity: str
    """What was measured, in words ("decode throughput of EAGLE-3 over plain decoding")."""
    value: QuantityIn
    """The figure as the source gives it, with its unit: a quantity."""
    basis: Annotated[str, _term("basis"), AfterValidator(check_measurement_basis)]
    """measured (run on real hardware) or simulated (a simulator's or an analytical model's output)."""
    where: str
    """Where in the source: "Table 3", "Figure 21", "§4.2", "p. 7"."""
    conditions: dict[str, Text | int | float] = {}
    """The setting: hardware, engine, model, batch, draft length, precision; a quantity, a number or text ([[wikilinks]] link records)."""


class Spec(_Model):
    value: QuantityIn
    """The value: a quantity such as "4.8 TB/s", in a unit of the dimension the parameter declares."""
    basis: Basis
    """The evidence behind the value: a term of `basis`; measured, vendor-spec and cited need sources."""
    sources: list[SourceRef] = []
    """Evidence for the value: refs to source records, or http(s):// URLs."""
    note: Text | None = None
    """How the value was read or derived (markdown; may hold [[wikilinks]])."""


ERRATUM_FIELD = re.compile(r"[a-z_]+(?:\[\d+\](?:\.[a-z_]+)?)?")
"""The field an erratum corrects: `description`, `workarounds[0]`, `hardware_parameters[1].effect`."""


def required_text_fields(model: type[BaseModel]) -> Iterator[str]:
    """The required text fields of a record's model: those validation stands in for when missing or wrong
    (`flopkb.load.validate`)."""
    return (name for name, info in model.model_fields.items() if info.is_required() and info.annotation is str)


def erratum_field_path(field_name: str) -> tuple[str | int, ...]:
    """`hardware_parameters[1].effect` as a data path: ("hardware_parameters", 1, "effect")."""
    head, _, rest = field_name.partition("[")
    if not rest:
        return (head,)
    index, _, tail = rest.partition("]")
    return (head, int(index), tail[1:]) if tail else (head, int(index))


class Erratum(_Model):
    field: Annotated[str, _pattern(ERRATUM_FIELD, "a field of the record (description, hardware_parameters[0].effect)")]
    """The field whose words it corrects: `description`, `notes`, `workarounds[0]`, `hardware_parameters[1].effect`."""
    quote: str
    """The words it corrects, exactly as they stand in the field (else erratum-quote-missing)."""
    correction: Text
    """What is true instead, and why (markdown; may hold [[wikilinks]] and links)."""
    basis: Basis
    """The evidence behind the correction: a term of `basis`; measured, vendor-spec and cited need sources."""
    sources: list[SourceRef] = []
    """Evidence for the correction: refs to source records, or http(s):// URLs."""


class _Record(_Model):
    id: RecordId
    """The record's id: its file's path below records/, without the extension; segments [a-z0-9][a-z0-9._-]* joined by '/'."""
    title: str | None = None
    """The title readers see; defaults to the id's last segment."""
    aliases: list[RecordId] = []
    """Former ids of this record; a link to an alias resolves here."""
    tags: list[str] = []
    """Free tags."""
    sources: list[SourceRef] = []
    """Evidence: refs to source records, or http(s):// URLs."""
    notes: Text | None = None
    """Free notes (markdown; may hold [[wikilinks]])."""
    errata: list[Erratum] = []
    """Corrections of the record's words that keep them as written: each quotes the words and says what is true."""

    @property
    def display_title(self) -> str:
        return self.title or self.id.rsplit("/", 1)[-1]


class FlopRecord(_Record):
    """A flop class: a mechanism that sets the cost of LLM inference, what it scales with and the hardware that moves it."""

    kind: Literal["flop"]
    """The record's kind."""
    category: Category
    """What sets this class's cost: a term of `categories` in schema/vocabulary.yaml."""
    description: Text
    """The mechanism (markdown; may hold [[wikilinks]])."""
    scales_with: list[ScalesWith] = []
    """What the cost scales with: rows of a factor and its effect."""
    hardware_parameters: list[HardwareParameter] = []
    """The hardware quantities that move this class's cost, with the evidence for each."""
    affected_by_hardware: list[AcceleratorRef] = []
    """Refs to the accelerator records the record applies to."""
    workarounds: list[Text] = []
    """Ways to avoid or reduce the cost (markdown each)."""
    formulas: list[Formula] = []
    """Formulas the compiler evaluates on the record's hardware and checks against their claims."""


class FactRecord(_Record):
    """A fact: a statement, optionally with formulas the compiler evaluates."""

    kind: Literal["fact"]
    """The record's kind."""
    statement: Text
    """The fact (markdown; may hold [[wikilinks]])."""
    formulas: list[Formula] = []
    """Formulas the compiler evaluates on the record's hardware and checks against their claims."""


class EngineRecord(_Record):
    """An inference engine and the features it implements."""

    kind: Literal["engine"]
    """The record's kind."""
    description: Text
    """What the engine is and does (markdown; may hold [[wikilinks]])."""
    homepage: Url | None = None
    """The engine's home page (an http(s) URL)."""
    features: list[str] = []
    """What it implements, e.g. its speculative-decoding methods."""


class AcceleratorRecord(_Record):
    """An accelerator and its specifications, each with its evidence."""

    kind: Literal["accelerator"]
    """The record's kind."""
    vendor: str
    """The vendor's name."""
    description: Text | None = None
    """What the accelerator is (markdown; may hold [[wikilinks]])."""
    specs: dict[ParameterTerm, Spec]
    """Its specifications: a `parameters` term to its value, basis, sources and note."""


class SourceRecord(_Record):
    """A source of evidence: a paper, datasheet or article that other records cite."""

    kind: Literal["source"]
    """The record's kind."""
    title: str  # required for sources
    """The source's title."""
    url: Url | None = None
    """Where to read it (an http(s) URL)."""
    authors: list[str] = []
    """The authors' names."""
    year: int | None = None
    """The year of publication."""
    venue: str | None = None
    """Where it appeared: journal, conference, arXiv id."""
    measurements: list[Measurement] = []
    """What the source measured or simulated, as data that claims test formulas against."""


Record = FlopRecord | FactRecord | EngineRecord | AcceleratorRecord | SourceRecord
MODELS: dict[str, type[_Record]] = {
    "flop": FlopRecord,
    "fact": FactRecord,
    "engine": EngineRecord,
    "accelerator": AcceleratorRecord,
    "source": SourceRecord,
}


def record_kind(data: Any) -> str | None:
    """The kind a record's data is checked as: its `kind`, or when that is missing or no kind, the one kind whose
    model has every key of the record and whose required fields the record has all (for a misspelt kind, only the
    kind closest to it); None when no kind, or more than one, fits."""
    if type(data) is not dict:
        return None
    written = data.get("kind")
    if isinstance(written, str) and written in MODELS:
        return written
    keys = {key for key in data if key != "kind"}
    fitting = [
        name
        for name, model in MODELS.items()
        if keys <= set(model.model_fields)
        and all(field in keys for field, info in model.model_fields.items() if info.is_required() and field != "kind")
    ]
    if "kind" not in data:
        return fitting[0] if len(fitting) == 1 else None
    return fitting[0] if isinstance(written, str) and fitting and fitting == closest(written, KINDS) else None


def model_classes() -> list[type[BaseModel]]:
    """Every model class of a record and of its parts."""
    found: list[type[BaseModel]] = []
    parents: list[type[BaseModel]] = [_Model]
    while parents:
        children = parents.pop().__subclasses__()
        found.extend(children)
        parents.extend(children)
    return found


def ready(model: type[_Record]) -> type[_Record]:
    """`model`, its validator built (once, on first use), without pydantic plugins.

    The models defer building their validators to first use (`defer_build`).
    The first validator pydantic builds in a process looks for plugins by
    scanning the entry points of every installed distribution: 0.12 to 0.2 s
    here, more than validating a thousand records. Validating records is
    flopkb's own business, so its models are built with plugins turned off
    (`PYDANTIC_DISABLE_PLUGINS`, unless the environment sets it already), the
    variable set only while they are built.
    """
    if not model.__pydantic_complete__:
        unset = os.environ.get(_NO_PLUGINS) is None
        if unset:
            os.environ[_NO_PLUGINS] = "__all__"
        try:
            model.model_rebuild()
        finally:
            if unset:
                os.environ.pop(_NO_PLUGINS, None)
    return model


_NO_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"
_TRAILING_FIELDS = ("sources", "notes", "errata")


def field_order(model: type[BaseModel]) -> list[str]:
    """Canonical key order: id, kind, the common heading fields, the kind's own fields, then sources, notes, errata."""
    names = [name for name in model.model_fields if name not in ("id", "kind", *_TRAILING_FIELDS)]
    return ["id", "kind", *names, *_TRAILING_FIELDS]


def formulas_of(record: Record) -> list[Formula]:
    return list(getattr(record, "formulas", []))


def measurements_of(record: Record) -> list[Measurement]:
    return list(getattr(record, "measurements", []))


def markers(annotation_metadata: list[Any]) -> tuple[bool, RefTo | None]:
    """Whether a field's metadata marks it markdown, and the reference it is, if any."""
    is_markdown = any(isinstance(item, Markdown) for item in annotation_metadata)
    ref = next((item for item in annotation_metadata if isinstance(item, RefTo)), None)
    return is_markdown, ref

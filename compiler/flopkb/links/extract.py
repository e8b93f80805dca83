"""Every prose link and typed reference of a record, located in its file.

What is a link is read from the record models, not written here per kind:
a field whose metadata carries `Markdown` is prose that may hold
`[[wikilinks]]`, a field carrying `RefTo(kind)` is a typed reference (see
`flopkb.load.models`). The models are compiled once into a *plan* per kind (which
keys hold prose, refs, nested rows), and each record's parsed data is walked
along that plan. Walking the data rather than the model instance gives the
exact paths that the loader keyed positions by, and lets the links of a file
that failed validation still count (their targets exist; a broken file must
not make the records it links to look orphaned).

A link's line and column are computed on demand (`Link.position`):
locating a `[[` inside a block scalar costs a scan of its file, and only
links that are reported or rewritten need it. Links are named tuples,
resolved as they are extracted when given a resolver: a large base has
about ten per record, and each one costs little.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, NamedTuple, Union

from pydantic import BaseModel

from flopkb.links.prose import scan
from flopkb.links.split import split_links
from flopkb.load.models import MODELS, Formula, Markdown, RefTo, record_kind, unbracketed
from flopkb.load.positions import LINK_START, STAR
from flopkb.load.source import Path, Source
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.paths import field_path

PROSE = "prose"
"""The origin of a `[[wikilink]]` in a markdown field."""

FORMULA_REF = "formula-ref"
MEASURED = "measured"
"""The origin of a claim's `measured: <source>#<measurement-id>`."""
ORIGINS = (
    PROSE,
    "values_for",
    "affected_by_hardware",
    "source",
    "formula-hardware",
    "formula-ref",
    "expect-hardware",
    MEASURED,
)
"""Every origin a link can have: where in a record it was written."""

_FORMULA_KINDS = ("flop", "fact")


class Link(NamedTuple):
    """One wikilink or typed reference as written, and the record it resolves to.

    `record` is the id of the record that holds it and `source` that
    record's parsed file; `field` is the data path of the string scalar that
    holds it; `origin` is one of `ORIGINS`; `kinds` the kinds a typed ref
    must land on (empty for prose). For a prose link `offset`/`end` delimit
    `[[...]]` in the scalar's `value`; for a ref they are -1. `resolved` is
    the id of the record the target resolves to (None when it resolves to
    nothing or to several records, or when extracted without a resolver).
    """

    record: str
    origin: str
    target: str
    anchor: str | None
    label: str | None
    field: Path
    offset: int
    end: int
    kinds: tuple[str, ...]
    value: str
    source: Source
    resolved: str | None

    @property
    def file(self) -> str:
        return self.source.path

    @property
    def is_prose(self) -> bool:
        return self.offset >= 0

    @property
    def takes_urls(self) -> bool:
        """Whether its field takes an http(s) URL as well as a ref (`sources`)."""
        return self.origin == "source"

    @property
    def position(self) -> tuple[int, int]:
        """1-based (line, column) in the file: of the `[[` for prose, of the scalar for a ref. Computed on each call."""
        source = self.source
        scalar = source.scalar_map(self.field, self.value, LINK_START) if self.offset >= 0 else None
        if scalar is not None:
            return scalar.position(self.offset)
        return source.position(self.field)

    @property
    def line(self) -> int:
        return self.position[0]

    @property
    def column(self) -> int:
        return self.position[1]

    @property
    def text(self) -> str:
        """The link as written: `[[...]]` for prose, the scalar's value for a ref."""
        return self.value[self.offset : self.end] if self.offset >= 0 else self.value

    @property
    def where(self) -> str:
        """The field path as readers write it, as the file has it: `hardware_parameters[0].values_for[1]`."""
        return field_path(self.source.written(self.field))

    def __repr__(self) -> str:
        return (
            f"Link({self.record!r} -> {self.target!r}, origin={self.origin!r}, field={self.field!r}, "
            f"resolved={self.resolved!r})"
        )


_new_link = tuple.__new__


# ---------------------------------------------------------------------------
# Plans: what to walk in a record's data, read once from the models' markers.

# A plan node is a tuple: (_MD,), (_REF, origin, kinds, urls, split_anchor),
# (_LIST, node), (_DICT, node) for mapping values, (_MODEL, {key: node}).
_MD, _REF, _LIST, _DICT, _MODEL = range(5)
Plan = tuple[Any, ...]


def _origin(owner: type[BaseModel], name: str) -> str:
    if name == "sources":
        return "source"
    if name == "hardware":
        return f"{owner.__name__.lower()}-hardware"
    return name


def _node(
    annotation: Any, metadata: list[Any], owner: type[BaseModel], name: str, seen: dict[type, dict[str, Plan]]
) -> Plan | None:
    """The plan node of one annotation (with its field-level metadata), or None when it holds no links."""
    for item in metadata:
        if isinstance(item, Markdown):
            return (_MD,)
        if isinstance(item, RefTo):
            return (_REF, _origin(owner, name), (item.kind,), item.urls, item.anchored)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _node(args[0], list(annotation.__metadata__), owner, name, seen)
    if origin in (Union, types.UnionType):
        found = [
            node
            for arg in args
            if arg is not type(None)
            for node in [_node(arg, [], owner, name, seen)]
            if node is not None
        ]
        return found[0] if found else None
    if origin is list and args:
        inner = _node(args[0], [], owner, name, seen)
        return (_LIST, inner) if inner else None
    if origin is dict and len(args) == 2:
        inner = _node(args[1], [], owner, name, seen)
        return (_DICT, inner) if inner else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = _model_plan(annotation, seen)
        return (_MODEL, fields) if fields else None
    return None


# Formula `ref` is a `<target>#<formula-id>` string: a reference the models
# leave unmarked because it is not a bare target. It lands on a flop or fact.
_EXTRA: dict[tuple[type, str], Plan] = {(Formula, "ref"): (_REF, FORMULA_REF, _FORMULA_KINDS, False, True)}


def _model_plan(model: type[BaseModel], seen: dict[type, dict[str, Plan]]) -> dict[str, Plan]:
    if model in seen:
        return seen[model]
    plan: dict[str, Plan] = {}
    seen[model] = plan
    for name, info in model.model_fields.items():
        node = _EXTRA.get((model, name)) or _node(info.annotation, list(info.metadata), model, name, seen)
        if node is not None:
            plan[name] = node
    return plan


def _without_prose(node: Plan) -> Plan | None:
    tag = node[0]
    if tag == _MD:
        return None
    if tag == _REF:
        return node
    if tag in (_LIST, _DICT):
        inner = _without_prose(node[1])
        return (tag, inner) if inner else None
    fields = {key: sub for key, child in node[1].items() for sub in [_without_prose(child)] if sub is not None}
    return (_MODEL, fields) if fields else None


def prose_masked(data: Any) -> Any:
    """A record's parsed data without its prose: a markdown field (`Markdown`) of text, or a list of them, left out;
    text among other values (a markdown value of a mapping) replaced by one mark. Two files whose data are equal so
    differ in their prose alone (`flopkb.review.reuse`)."""
    kind = record_kind(data)
    plan = PLANS.get(kind) if kind is not None else None
    return data if plan is None else _stripped(plan, data)


_PROSE_MARK = "\0prose"


def _stripped(node: Plan, value: Any) -> Any:
    tag = node[0]
    if tag == _MD:
        return _PROSE_MARK if type(value) is str else value
    if tag == _REF:
        return value
    if tag == _LIST:
        return [_stripped(node[1], item) for item in value] if type(value) is list else value
    if tag == _DICT:
        return {key: _stripped(node[1], item) for key, item in value.items()} if type(value) is dict else value
    if type(value) is not dict:
        return value
    fields = node[1]
    kept = {}
    for key, item in value.items():
        child = fields.get(key)
        if child is None:
            kept[key] = item
        elif not _all_prose(child, item):
            kept[key] = _stripped(child, item)
    return kept


def _all_prose(node: Plan, value: Any) -> bool:
    """Whether a field's value is prose alone: a markdown text, or a list of them."""
    if node[0] == _MD:
        return type(value) is str
    return node[0] == _LIST and node[1][0] == _MD and type(value) is list and all(type(item) is str for item in value)


PLANS: dict[str, Plan] = {kind: (_MODEL, _model_plan(model, {})) for kind, model in MODELS.items()}
"""Per kind: where its prose and refs are."""
REF_PLANS: dict[str, Plan] = {kind: _without_prose(plan) or (_MODEL, {}) for kind, plan in PLANS.items()}
"""Per kind: where its refs are (for files with no `[[` and no `*` at all: prose without them has nothing to report)."""


# ---------------------------------------------------------------------------
# Extraction


Resolve = Callable[[str], "str | None"]


def _unresolved(target: str) -> None:
    return None


def extract(
    record_id: str,
    source: Source,
    resolve: Resolve = _unresolved,
    kind_of: dict[str, str] | None = None,
    suspects: list[Link] | None = None,
    prose_warnings: list[Diagnostic] | None = None,
) -> list[Link]:
    """Every link of the record in `source` (whose data need not have validated), each resolved with `resolve`.

    With `kind_of` (record id -> kind) and a `suspects` list, the links that
    may be wrong are also appended to `suspects`: unresolved, anchored, or a
    ref landing on a kind its field does not take. Checking only those
    spares a second pass over every link. The warnings about its prose
    (`ambiguous-emphasis`, `split-link`), read in the same pass, are appended to `prose_warnings`.
    """
    data = source.data
    kind = record_kind(data)
    walkers = _WALKERS.get(kind) if kind is not None else None
    if walkers is None:
        return []
    out: list[Link] = []
    text = source.text
    walk = walkers[0] if "[[" in text or "*" in text else walkers[1]
    context = (
        record_id,
        source,
        resolve,
        {} if kind_of is None else kind_of,
        [] if suspects is None else suspects,
        [] if prose_warnings is None else prose_warnings,
    )
    walk(data, (), out, context)
    return out


def extract_part(
    record_id: str,
    kind: str,
    source: Source,
    part: tuple[Path, Any],
    context: tuple[Resolve, dict[str, str], list[Link], list[Diagnostic]],
) -> list[Link]:
    """The links of `part`, a path in a record of `kind` and the value there, that `source`'s data need not hold (a
    list item validation left out: `source` is then its file's whole, `Source.without`'s items in it), as `extract`
    finds them in its data: resolved with `context`'s resolve, suspects and warnings about prose appended to its
    lists (see `extract`)."""
    path, value = part
    node: Plan | None = PLANS.get(kind)
    for key in path:
        if node is None or node[0] not in (_MODEL, _LIST, _DICT):
            return []
        node = node[1].get(key) if node[0] == _MODEL else node[1]
    if node is None:
        return []
    out: list[Link] = []
    _compile(node)(value, path, out, (record_id, source, *context))
    return out


# Each plan node is compiled once into a closure `walk(value, path, out, context)`
# that appends the links under `value`: no generic dispatch per value.
Context = tuple[str, Source, Resolve, dict[str, str], list[Link], list[Diagnostic]]
Walker = Callable[[Any, Path, list[Link], Context], None]


def _compile(node: Plan) -> Walker:
    tag = node[0]
    if tag == _MD:

        def prose(value: Any, path: Path, out: list[Link], context: Context) -> None:
            if type(value) is str and ("[[" in value or "*" in value):
                _prose(value, path, out, context)

        return prose
    if tag == _REF:
        _, origin, kinds, urls, split = node
        first_kind = kinds[0]

        def ref(value: Any, path: Path, out: list[Link], context: Context) -> None:
            value = unbracketed(value) or value  # `[[x]]`: told at validation, and read as the ref it stands for
            if type(value) is str and value and not (urls and value.startswith(_URL_PREFIXES)):
                target, anchor = value, None
                if split:  # an anchor it lacks is '', told by the link stage with the anchors there are
                    target, _, anchor = value.partition("#")
                record_id, source, resolve, kind_of, suspects, _ = context
                resolved = resolve(target)
                link = _new_link(
                    Link, (record_id, origin, target, anchor, None, path, -1, -1, kinds, value, source, resolved)
                )
                out.append(link)
                if resolved is None or anchor is not None or kind_of.get(resolved, first_kind) not in kinds:
                    suspects.append(link)

        return ref
    if tag == _LIST and node[1][0] == _MD:

        def prose_list(value: Any, path: Path, out: list[Link], context: Context) -> None:
            if type(value) is list:
                for index, item in enumerate(value):
                    if type(item) is str and ("[[" in item or "*" in item):
                        _prose(item, (*path, index), out, context)

        return prose_list
    if tag == _LIST:
        item_walker = _compile(node[1])
        refs = node[1][0] == _REF

        def sequence(value: Any, path: Path, out: list[Link], context: Context) -> None:
            if type(value) is list:
                for index, item in enumerate(value):
                    item_walker(item, (*path, index), out, context)
            elif refs and unbracketed(value) is not None:  # `"[[x]]"` for a list of refs: read as the ref
                item_walker(value, path, out, context)

        return sequence
    if tag == _DICT:
        value_walker = _compile(node[1])

        def mapping(value: Any, path: Path, out: list[Link], context: Context) -> None:
            if type(value) is dict:
                for key, item in value.items():
                    value_walker(item, (*path, key), out, context)

        return mapping
    prose_keys = tuple(key for key, child in node[1].items() if child[0] == _MD)
    fields = tuple((key, _compile(child)) for key, child in node[1].items() if child[0] != _MD)

    def model(value: Any, path: Path, out: list[Link], context: Context) -> None:
        if type(value) is dict:
            get = value.get
            for key in prose_keys:
                item = get(key)
                if type(item) is str and ("[[" in item or "*" in item):
                    _prose(item, (*path, key), out, context)
            for key, walk in fields:
                item = get(key)
                if item is not None:
                    walk(item, (*path, key), out, context)

    return model


def _prose(value: str, path: Path, out: list[Link], context: Context) -> None:
    """The wikilinks and the warnings about one markdown string (the caller has checked that it holds `[[` or `*`),
    read from the one parse its page is rendered from (`flopkb.links.prose`)."""
    record_id, source, resolve, _, suspects, warnings = context
    append = out.append
    found_links, found_emphasis = scan(value)
    if found_emphasis:
        stars = source.scalar_map(path, value, STAR)
        for item in found_emphasis:
            line, column = stars.position(item.offset) if stars is not None else source.position(path)
            message = f"`{item.written}`: this `{item.marker}` makes emphasis: the page drops it, shows italics"
            warnings.append(make("ambiguous-emphasis", source.path, line, column, message, item.hint))
    if "\n" in value and "[[" in value:
        for split in split_links(value, found_links):
            brackets = source.scalar_map(path, value, LINK_START)
            line, column = brackets.position(split.offset) if brackets is not None else source.position(path)
            message = (
                f"`{cut(split.first)}` goes on to the next line, but a link stands on one line: the page shows text"
            )
            hint = f"join the two lines, so that the link reads `{cut(split.joined)}`"
            warnings.append(make("split-link", source.path, line, column, message, hint))
    for found in found_links:
        target = found.target
        anchor = found.anchor
        resolved = resolve(target)
        link = _new_link(
            Link,
            (record_id, PROSE, target, anchor, found.label, path, found.offset, found.end, (), value, source, resolved),
        )
        append(link)
        if resolved is None or anchor is not None:
            suspects.append(link)


_URL_PREFIXES = ("http://", "https://")
_WALKERS: dict[str, tuple[Walker, Walker]] = {
    kind: (_compile(PLANS[kind]), _compile(REF_PLANS[kind])) for kind in PLANS
}


def extract_all(
    entries: Any,
    resolve: Resolve = _unresolved,
    kind_of: dict[str, str] | None = None,
    suspects: list[Link] | None = None,
) -> dict[str, list[Link]]:
    """Links of every entry that has a source (`kb.entries`), keyed by record id; records without links are absent.
    See `extract`."""
    result: dict[str, list[Link]] = {}
    kind_of = {} if kind_of is None else kind_of
    suspects = [] if suspects is None else suspects
    for entry in entries.values():
        if entry.source is not None:
            found = extract(entry.id, entry.source, resolve, kind_of, suspects)
            if found:
                result[entry.id] = found
    return result


def ref_fields(model: type[BaseModel]) -> dict[str, tuple[tuple[str, ...], bool]]:
    """The name of every field of `model` (nested models included) that holds typed refs, the kinds they take, and
    whether they take a `#` anchor (a formula of a flop or fact, a measurement of a source)."""
    found: dict[str, tuple[tuple[str, ...], bool]] = {}
    visited: set[int] = set()

    def walk(plan: dict[str, Plan]) -> None:
        if id(plan) not in visited:
            visited.add(id(plan))
            for name, node in plan.items():
                collect(name, node)

    def collect(name: str, node: Plan) -> None:
        if node[0] == _REF:
            found.setdefault(name, (node[2], node[4]))
        elif node[0] in (_LIST, _DICT):
            collect(name, node[1])
        elif node[0] == _MODEL:
            walk(node[1])

    walk(_model_plan(model, {}))
    return found

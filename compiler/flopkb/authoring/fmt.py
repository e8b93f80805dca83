"""`flopkb fmt`: records in one canonical form, every word and comment kept, meaning proven unchanged.

The canonical form (docs/authoring.md shows it):

- keys in the order of the record format: `id`, `kind`, `title`, `aliases`,
  `tags`, the kind's own fields, then `sources` and `notes`; rows (a
  `scales_with` or `hardware_parameters` row, a formula, an expectation, a
  spec) in their model's field order; unknown keys keep their place after the
  known ones, for `check` to report;
- a block mapping at the top, two-space indentation, sequences indented
  under their key (`  - item`);
- a string that holds a line break is a literal block (`|`); a plain or
  quoted string wrapped over several lines is a folded block (`>-`) broken
  where the author broke it; every other string keeps its quoting;
- lists of ids (refs, `aliases`, `tags`) in flow style (`[a, b]`) when the
  line fits in 100 columns and the list holds no URL, no comment and no
  item with characters an id does not have, in block style otherwise; other
  lists keep the style they have;
- comments stay with the key or item they belong to (see
  `flopkb.authoring.comments`); the file's line endings (LF or CRLF) and byte-order
  mark are kept.

ruamel.yaml's round-trip mode rebuilds the text: it keeps quoting, block
scalars, number spellings. Each new result is checked before it is written
(one that is the text as it was holds its data and comments already): the
data must parse equal to the original and every comment must still be there,
or the file is left as it is and reported. A file is replaced only if it still
holds the bytes that were formatted (an author's save made while fmt ran is
kept), never when it is read-only, and through its link when it is a symlink
(`flopkb.atomic`).
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import (
    FoldedScalarString,
    LiteralScalarString,
    ScalarString,
)

from flopkb.atomic import replace_if_unchanged
from flopkb.authoring import roundtrip
from flopkb.authoring.comments import Comments, attach, comment_texts, detach
from flopkb.authoring.roundtrip import INDENT
from flopkb.collector import uncollected
from flopkb.load.files import Unreadable, decode, read_in_base
from flopkb.load.models import MODELS, RefTo, field_order, is_url
from flopkb.load.source import compose, parse
from flopkb.load.tabs import replace_line_start_tabs
from flopkb.report.diagnostics import Diagnostic, make

FLOW_WIDTH = 100
"""A list of ids goes on one line (`key: [a, b]`) when that line fits in this many columns."""
_BOM = "\ufeff"
_FLOW_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:+~%=&?@-]*")
_FLOW_FIELDS = ("aliases", "tags")
"""Lists of ids that are not refs."""


@dataclass(slots=True)
class Outcome:
    """What formatting one file gave: its new text (None when it cannot be formatted) and the problems found."""

    path: str
    original: str
    text: str | None
    problems: list[Diagnostic] = field(default_factory=list)
    refusal: str | None = None
    """Why a file that parses was left as it is: formatting would have changed its meaning, or the file changed
    since it was read, or it is read-only."""
    raw: bytes = b""
    """The file's bytes as read: it is replaced only if it still holds them."""

    @property
    def changed(self) -> bool:
        return self.text is not None and self.text != self.original


class _Unsafe(Exception):
    """The formatted text would not mean what the original means."""


def format_file(root: Path, rel: str, records: str) -> Outcome:
    """Format the record at `root/rel` (in the folder `records`) in memory."""
    try:
        raw = read_in_base(str(root), rel, (records,))
    except Unreadable as problem:
        return Outcome(rel, "", None, [make("not-a-record", rel, 1, 1, str(problem))])
    return format_bytes(raw, rel)


def format_bytes(raw: bytes, rel: str) -> Outcome:
    """Format a record's bytes (a file's, or an editor's unsaved buffer: `flopkb lsp`) in memory."""
    text = decode(raw, rel)
    original = raw.decode("utf-8", errors="replace")
    if isinstance(text, Diagnostic):
        return Outcome(rel, original, None, [text], raw=raw)
    try:
        formatted = format_text(text, rel)
    except _Unsafe as refusal:
        return Outcome(rel, original, None, refusal=str(refusal), raw=raw)
    if isinstance(formatted, list):
        return Outcome(rel, original, None, formatted, raw=raw)
    return Outcome(rel, original, (_BOM if original.startswith(_BOM) else "") + formatted, raw=raw)


def write(root: Path, outcome: Outcome) -> None:
    """Replace the file with its formatted text, atomically, unless it changed since it was read.

    `flopkb.atomic.LeftAlone` when the file was left alone, `WriteError` when it cannot be written.
    """
    assert outcome.text is not None
    replace_if_unchanged(root / outcome.path, outcome.raw, outcome.text.encode("utf-8"), root)


def format_text(text: str, path: str) -> str | list[Diagnostic]:
    """The canonical form of a record's text (without BOM), or the problems that keep it from having one."""
    # formatting makes millions of short-lived objects beside those it keeps to the end, which each collection would
    # rescan: half of the time of a 1 MB record of claims, for a peak of memory a quarter lower
    with uncollected():
        return _format_text(text, path)


def _format_text(text: str, path: str) -> str | list[Diagnostic]:
    newline = "\r\n" if text.partition("\n")[0].endswith("\r") else "\n"
    text = text.replace("\r\n", "\n")
    trees: list[yaml.Node] = []
    source, problems = parse(text, path, trees)
    if source is not None and source.untabbed:  # tabs that indent, each replaced by one level of spaces
        text = replace_line_start_tabs(text)
        source, problems = parse(text, path, trees)
    if source is None or problems:
        return problems
    tree = trees[-1]  # the text as it is (or untabbed) makes a record: its own tree
    comments = detach(text, tree)
    try:
        data = roundtrip.load(text)
    except YAMLError as error:
        raise _Unsafe(f"ruamel.yaml cannot read it: {error}") from error
    _strip_comments(data)
    _canonical(data, comments, _multiline_sources(tree, text))
    bare = roundtrip.dump(data)
    formatted = attach(bare, _compose(bare), comments)
    if formatted != text:  # the text as it was holds its own data and comments: only a new one is checked
        _verify(source.data, comment_texts(text, tree), formatted, path)
    return formatted.replace("\n", newline) if newline != "\n" else formatted


def _compose(text: str) -> yaml.Node:
    try:
        root = compose(text)
    except yaml.YAMLError as error:  # a text ruamel.yaml wrote (the author's parsed): one with U+2029 in a string
        raise _Unsafe("the formatted text would not read back as YAML") from error
    if root is None:  # only an empty stream has no node, and the texts given here hold a record
        raise _Unsafe("the text holds no YAML document")
    return root


def _verify(data: dict[str, Any], comments: list[str], formatted: str, path: str) -> None:
    trees: list[yaml.Node] = []
    source, problems = parse(formatted, path, trees)
    if source is None or problems or source.data != data:
        raise _Unsafe("the formatted data would differ from the original")
    if comment_texts(formatted, trees[-1]) != comments:  # a record read from the text as it is: its tree
        raise _Unsafe("a comment would be lost")


def _strip_comments(node: Any) -> None:
    """Drop ruamel's own comment bookkeeping: comments are carried by `flopkb.authoring.comments`."""
    if isinstance(node, CommentedBase):
        node.ca.items.clear()
        node.ca.comment = None
        node.ca.end = []
    elif isinstance(node, (LiteralScalarString, FoldedScalarString)):
        # a comment on the block's header line; ruamel declares `comment` only in __slots__, which mypy does not read
        node.comment = None  # type: ignore[union-attr]
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        _strip_comments(child)


# ---------------------------------------------------------------------------
# The canonical form


def _canonical(data: Any, comments: Comments, multiline: dict[tuple[Any, ...], list[str]]) -> None:
    commented = comments.enclosing()
    data.fa.set_block_style()  # a record is a block mapping, even when written as `{id: ..., kind: ...}`
    kind = data.get("kind")
    if isinstance(kind, str) and kind in MODELS:  # `kind: []` is told by `check`; its keys keep their order
        model = MODELS[kind]
        _reorder(data, field_order(model))
        _fields(data, model, (), 0, commented)
    _block_strings(data, (), multiline)


def _fields(
    node: CommentedMap, model: type[BaseModel], path: tuple[Any, ...], column: int, commented: set[tuple[Any, ...]]
) -> None:
    """Order the rows under the fields of `node` (a mapping of `model`) and set the style of its id lists."""
    kinds = _field_kinds(model)
    for key, value in node.items():
        kind = kinds.get(key)
        if kind is None:
            continue
        where = (*path, key)
        container, row, id_list = kind
        if row is not None and container == "model" and isinstance(value, CommentedMap):
            _row(value, row, where, column + INDENT, commented)
        elif row is not None and container == "list" and isinstance(value, CommentedSeq):
            for index, item in enumerate(value):
                if isinstance(item, CommentedMap):
                    _row(item, row, (*where, index), column + 2 * INDENT, commented)
        elif row is not None and container == "dict" and isinstance(value, CommentedMap):
            for name, item in value.items():
                if isinstance(item, CommentedMap):
                    _row(item, row, (*where, name), column + 2 * INDENT, commented)
        if isinstance(value, CommentedSeq) and id_list:
            _id_list_style(value, where, column + len(str(key)) + len(": "), commented)


@cache
def _field_kinds(model: type[BaseModel]) -> dict[str, tuple[str | None, type[BaseModel] | None, bool]]:
    """For each field of `model`: how it holds rows (`_shape`) and whether it is a list of ids; worked out from its
    annotation once, not for each of thousands of rows."""
    return {
        key: (*_shape(info.annotation), _is_id_list(key, info.annotation)) for key, info in model.model_fields.items()
    }


def _row(
    node: CommentedMap, model: type[BaseModel], path: tuple[Any, ...], column: int, commented: set[tuple[Any, ...]]
) -> None:
    _reorder(node, list(model.model_fields))
    _fields(node, model, path, column, commented)


def _reorder(node: CommentedMap, order: list[str]) -> None:
    """Known keys in `order`, then the others in the order they were."""
    rank = {name: index for index, name in enumerate(order)}
    keys = sorted(node, key=lambda key: (0, rank[key]) if key in rank else (1, 0))
    for key in keys:
        node.move_to_end(key)


def _shape(annotation: Any) -> tuple[str | None, type[BaseModel] | None]:
    """How a field holds rows: ("model" | "list" | "dict", the row model), or (None, None)."""
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, dict) and args:
        inner = _unwrap(args[-1])
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return ("list" if origin is list else "dict"), inner
    return None, None


def _unwrap(annotation: Any) -> Any:
    """`X` from `X | None` and from `Annotated[X, ...]`."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        annotation = options[0] if len(options) == 1 else annotation
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _is_id_list(key: str, annotation: Any) -> bool:
    if key in _FLOW_FIELDS:
        return True
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) is not list:
        return False
    item = typing.get_args(annotation)[0]
    return any(isinstance(meta, RefTo) for meta in getattr(item, "__metadata__", ()))


def _id_list_style(node: CommentedSeq, path: tuple[Any, ...], column: int, commented: set[tuple[Any, ...]]) -> None:
    width = (
        sum(len(str(item)) + (2 if isinstance(item, ScalarString) else 0) for item in node)
        + len(", ") * (len(node) - 1)
        + len("[]")
    )
    fits = column + width <= FLOW_WIDTH and all(_flow_safe(item) for item in node)
    if fits and path not in commented:
        node.fa.set_flow_style()
    else:
        node.fa.set_block_style()


def _flow_safe(item: Any) -> bool:
    """Whether an item is written in a flow list: text of an id's characters, whether its author quoted it (kept
    quoted, two characters wider) or not; an item written plain that needs quotes is quoted once formatted, and is
    judged alike then, or formatting it again would change its list's style."""
    return isinstance(item, str) and bool(_FLOW_SAFE.fullmatch(item)) and not is_url(item)


def _block_strings(node: Any, path: tuple[Any, ...], multiline: dict[tuple[Any, ...], list[str]]) -> None:
    """Literal blocks for strings that hold line breaks, folded blocks for strings wrapped over several lines."""
    entries = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(entries):
        where = (*path, str(key) if isinstance(node, dict) else key)
        if isinstance(value, (dict, list)):
            _block_strings(value, where, multiline)
        elif isinstance(value, str) and not isinstance(value, (LiteralScalarString, FoldedScalarString)):
            block = _as_block(value, multiline.get(where))
            if block is not None:
                node[key] = block


def _as_block(value: str, source_lines: list[str] | None) -> ScalarString | None:
    if "\n" in value:
        return LiteralScalarString(value)
    if source_lines is None or " ".join(source_lines) != value:
        return None
    folded = FoldedScalarString(value)
    folded.fold_pos = []
    position = -1
    for line in source_lines[:-1]:
        position += len(line) + 1
        folded.fold_pos.append(position)
    return folded


def _multiline_sources(root: yaml.Node, text: str) -> dict[tuple[Any, ...], list[str]]:
    """The stripped source lines of every plain or quoted string written over several lines, by data path."""
    found: dict[tuple[Any, ...], list[str]] = {}

    def walk(node: yaml.Node, path: tuple[Any, ...]) -> None:
        if isinstance(node, yaml.ScalarNode):
            if node.style not in ("|", ">") and node.start_mark.line != node.end_mark.line:
                body = text[node.start_mark.index : node.end_mark.index]
                if node.style in ("'", '"'):
                    body = body[1:-1]
                found[path] = [line.strip() for line in body.split("\n")]
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))
        else:
            for key, value in node.value:
                walk(value, (*path, key.value))

    walk(root, ())
    return found

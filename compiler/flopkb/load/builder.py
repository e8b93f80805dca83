"""The walk of a composed YAML node tree into a record's plain values, and where each value, key and string scalar
stands in the file.

Every position of a file is made from a mark index here (`Builder._at`): the
text composed may be the file's own, or that text with the tabs that start its
lines replaced (`flopkb.load.tabs`), whose indexes are mapped back to the
file's own text, so that every position is one in the file as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from flopkb.load.positions import LineIndex
from flopkb.load.tabs import Untabbing
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make

MAX_NESTING = 64
MAX_NODES = 200_000

Path = tuple[str | int, ...]

STR = "tag:yaml.org,2002:str"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"
NULL = "tag:yaml.org,2002:null"
_ALLOWED_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "null", "timestamp"))
_SCALAR_CONSTRUCTORS = SafeConstructor.yaml_constructors
_MAX_INT_BITS = 14_000
"""Whole numbers are refused above about 10^4214: Python will not turn more than 4,300 digits into text."""
_COLLECTION_TAGS: dict[type[yaml.Node], str] = {yaml.SequenceNode: SEQ, yaml.MappingNode: MAP}
TOO_DEEP = f"values nest deeper than {MAX_NESTING} levels"


@dataclass(frozen=True, slots=True)
class ScalarSpan:
    """Where a string scalar's source text stands, to locate text inside it."""

    start: int
    end: int
    style: str | None


@dataclass(slots=True)
class Positions:
    """Where each value and key starts, and each string scalar stands: offsets into the file's own text."""

    values: dict[Path, int] = field(default_factory=dict)
    keys: dict[Path, int] = field(default_factory=dict)
    spans: dict[Path, ScalarSpan] = field(default_factory=dict)


class Problem(Exception):
    """A problem that makes the file no record, at a mark index."""

    def __init__(self, code: str, index: int, message: str) -> None:
        super().__init__(message)
        self.code, self.index, self.message = code, index, message


class Builder:
    """Walks a composed node tree into plain values, recording where each value and key starts.

    Positions are kept as offsets into the file's own text (`_at`) and
    turned into (line, column) only when asked: most are never needed.
    """

    def __init__(
        self, path: str, lines: LineIndex, untabbing: Untabbing | None = None, *, record_positions: bool = False
    ) -> None:
        self.path = path
        self.lines = lines
        """The line index of the file's own text."""
        self.untabbing = untabbing
        """Where the composed text's offsets stand in the file's own, when it is that text with its line-start tabs
        replaced."""
        self.positions = Positions() if record_positions else None
        self.diagnostics: list[Diagnostic] = []
        self._nodes = 0
        self._constructor = SafeConstructor()

    def _enter(self, node: yaml.Node, depth: int) -> None:
        if self._nodes > MAX_NODES:
            raise Problem(
                "not-a-record", node.start_mark.index, f"the file has more than {MAX_NODES:,} values (alias expansion?)"
            )
        if depth > MAX_NESTING:
            raise Problem("not-a-record", node.start_mark.index, TOO_DEEP)

    def _at(self, mark: yaml.Mark) -> int:
        """Where `mark` stands in the file's own text: every position of a file is made from mark indexes here."""
        untabbing = self.untabbing
        return mark.index if untabbing is None else untabbing.original(mark.index)

    def walk(self, root: yaml.Node) -> Any:
        """The record's values (and their positions, when recorded) from its node tree. A key indented into the
        mapping above it, whose own keys then repeat that mapping's (`_overindented`), is told as that, once, and
        the values are read as the file reads with the key indented as it should be: its keys are its own, not
        repeats."""
        data = self._walked(root)
        if any(diagnostic.code == "duplicate-key" for diagnostic in self.diagnostics):
            told = self._lift_overindented(root, set())
            if told:
                self.diagnostics, self._nodes = [], 0
                if self.positions is not None:
                    self.positions = Positions()
                data = self._walked(root)
                self.diagnostics = [*told, *self.diagnostics]
        return data

    def _walked(self, root: yaml.Node) -> Any:
        return self.build(root, (), 0) if self.positions is not None else self.plain(root, 0)

    def _lift_overindented(self, node: yaml.Node, seen: set[int]) -> list[Diagnostic]:
        """Move every key indented into the mapping above it (`_overindented`) out to its place, beside that
        mapping's key, with the keys below it as its own; the diagnostics that say so. Each node once (aliases)."""
        if id(node) in seen or isinstance(node, yaml.ScalarNode):
            return []
        seen.add(id(node))
        told: list[Diagnostic] = []
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                told += self._lift_overindented(item, seen)
            return told
        index = 0
        keys = {_text(other) for other, _ in node.value}
        while index < len(node.value):
            key_node, value_node = node.value[index]
            while isinstance(value_node, yaml.MappingNode) and (inner := _overindented(value_node, keys)) is not None:
                lifted, rest = value_node.value[inner][0], value_node.value[inner + 1 :]
                del value_node.value[inner:]
                body = yaml.MappingNode(MAP, rest, rest[0][0].start_mark, rest[-1][1].end_mark)
                node.value.insert(index + 1, (lifted, body))
                keys.add(_text(lifted))
                told.append(self._overindented_told(lifted, key_node, rest))
            told += self._lift_overindented(value_node, seen)
            index += 1
        return told

    def _overindented_told(
        self, lifted: yaml.Node, holder: yaml.Node, rest: list[tuple[yaml.Node, yaml.Node]]
    ) -> Diagnostic:
        line, column = self.lines.position(self._at(lifted.start_mark))
        holder_line, holder_column = self.lines.position(self._at(holder.start_mark))
        name, owner = cut(str(_text(lifted))), cut(str(_text(holder)))
        repeated = ", ".join(cut(str(_text(key))) for key, _ in rest)  # text: `_overindented` takes no other
        return make(
            "duplicate-key",
            self.path,
            line,
            column,
            f"'{name}' is indented into '{owner}': the keys below it ({repeated}) repeat that mapping's, and are "
            f"read as {name}'s",
            f"indent it by {holder_column - 1} spaces, as '{owner}' on line {holder_line}",
        )

    def build(self, node: yaml.Node, path: Path, depth: int) -> Any:
        self._nodes += 1
        self._enter(node, depth)
        positions = self.positions
        if positions is not None:
            positions.values[path] = self._at(node.start_mark)
        if isinstance(node, yaml.ScalarNode):
            if node.tag == STR:
                if positions is not None:
                    positions.spans[path] = ScalarSpan(self._at(node.start_mark), self._at(node.end_mark), node.style)
                return node.value
            return self._typed_scalar(node)
        self._collection_tag(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index), depth + 1) for index, item in enumerate(node.value)]
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, result, node)
            if key is not None:
                key_path = (*path, key)
                if positions is not None:
                    positions.keys[key_path] = self._at(key_node.start_mark)
                result[key] = self.build(value_node, key_path, depth + 1)
        return result

    def plain(self, node: yaml.Node, depth: int) -> Any:
        """`build` without positions: no data paths are made (the parse that builds every file's data records none).

        The walk every file takes, so its common cases are written out: no call per node but `plain` itself.
        """
        self._nodes += 1
        if self._nodes > MAX_NODES or depth > MAX_NESTING:
            self._enter(node, depth)
        tag = node.tag
        if tag == STR and type(node) is yaml.ScalarNode:
            return node.value
        if type(node) is yaml.ScalarNode:
            return self._typed_scalar(node)
        if tag != _COLLECTION_TAGS[type(node)]:
            self._collection_tag(node)
        depth += 1
        if tag == SEQ:
            return [self.plain(item, depth) for item in node.value]
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == STR and type(key_node) is yaml.ScalarNode and key_node.value not in result:
                key = key_node.value
            else:
                key = self._key(key_node, result, node)
                if key is None:
                    continue
            result[key] = self.plain(value_node, depth)
        return result

    def _key(self, node: yaml.Node, seen: dict[str, Any], mapping: yaml.Node) -> str | None:
        """The text of a mapping key; None for a repeated key (reported, with the line of its first copy)."""
        if not isinstance(node, yaml.ScalarNode):
            raise Problem(
                "invalid-value", node.start_mark.index, "a mapping key must be a plain name, not a collection"
            )
        key = self._key_text(node)
        if key in seen:
            first = next(
                other
                for other, _ in mapping.value
                if isinstance(other, yaml.ScalarNode) and self._key_text(other) == key
            )
            first_line = self.lines.position(self._at(first.start_mark))[0]
            line, column = self.lines.position(self._at(node.start_mark))
            self.diagnostics.append(
                make(
                    "duplicate-key",
                    self.path,
                    line,
                    column,
                    f"the key '{cut(key)}' is repeated; its first copy is on line {first_line}",
                    f"keep one of the two: delete this line or line {first_line}, or merge their values",
                )
            )
            return None
        return key

    def _key_text(self, node: yaml.ScalarNode) -> str:
        return node.value if node.tag == STR else str(self._typed_scalar(node))

    def _collection_tag(self, node: yaml.Node) -> None:
        if node.tag != _COLLECTION_TAGS[type(node)]:
            what = "list" if isinstance(node, yaml.SequenceNode) else "mapping"
            raise Problem("invalid-value", node.start_mark.index, f"the tag {_shown(node.tag)} cannot be on a {what}")

    def _typed_scalar(self, node: yaml.ScalarNode) -> Any:
        """The value of a scalar that is not text: the one path for implicit types and explicit tags alike."""
        if node.tag not in _ALLOWED_TAGS:
            raise Problem(
                "invalid-value", node.start_mark.index, f"the tag {_shown(node.tag)} is not allowed in a record"
            )
        # Dates and times stay text: records quote them, they are never computed with.
        if node.tag.endswith(":timestamp"):
            return node.value
        try:
            value = _SCALAR_CONSTRUCTORS[node.tag](self._constructor, node)
        except (ValueError, KeyError, IndexError) as error:
            # An explicit tag on text not of its type (!!int a, !!bool 2024, !!float ''), or a number
            # too long for Python to convert (more than sys.get_int_max_str_digits() digits).
            too_long = isinstance(error, ValueError) and "digits" in str(error)
            raise Problem("invalid-value", node.start_mark.index, _unreadable(node, too_long)) from error
        if type(value) is int and value.bit_length() > _MAX_INT_BITS:  # 1:0:0:...: fine to read, never to print
            raise Problem("invalid-value", node.start_mark.index, _unreadable(node, True))
        return value


def _text(node: yaml.Node) -> str | None:
    """A key's text as written, or None for a collection."""
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _overindented(mapping: yaml.MappingNode, beside: set[str | None]) -> int | None:
    """The index of a key of `mapping` that is indented one level too deep, if one is: it has no value (`key:`
    and nothing), the keys below it repeat, once each, keys of `mapping` above it, and its own name is neither
    above it nor beside `mapping` (in `beside`, the keys of the mapping that holds it). One pass from the end: a
    hostile mapping of many keys costs no more than reading it."""
    pairs = mapping.value
    keys = [_text(key) for key, _ in pairs]
    first: dict[str | None, int] = {}
    for index, key in enumerate(keys):
        first.setdefault(key, index)
    below: set[str | None] = set()
    reaches = 0  # the first place above which every key below the candidate stands
    for index in range(len(pairs) - 1, 0, -1):
        key = keys[index]
        value = pairs[index][1]
        if (
            below
            and reaches < index
            and first[key] == index
            and key not in beside
            and isinstance(value, yaml.ScalarNode)
            and value.tag == NULL
            and not value.value
        ):
            return index
        if key is None or key in below:
            return None  # a collection key, or a key twice below: no key above reads as indented in
        below.add(key)
        reaches = max(reaches, first[key])
    return None


def _unreadable(node: yaml.ScalarNode, too_long: bool) -> str:
    wrong = "a number too long to read" if too_long else f"not a valid {_shown(node.tag)}"
    return f"'{cut(node.value)}' is {wrong}"


def _shown(tag: str) -> str:
    """A tag as authors write it: `!!int`, not `tag:yaml.org,2002:int`."""
    return tag.replace("tag:yaml.org,2002:", "!!", 1)

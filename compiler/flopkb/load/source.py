"""Load one record file into plain data that remembers where every key and value stands.

Parsing uses libyaml through PyYAML's C-backed composer: it is the fastest
parser that keeps positions (`start_mark`) on every node, about 2.5 times
faster than ruamel.yaml's C loader on this project's benchmark (see
docs/architecture.md). The node tree is walked once into plain Python values;
the positions of keys and values are kept beside them, keyed by path.
ruamel.yaml's round-trip mode is used where comments matter (`flopkb fmt`).

Every failure is a diagnostic, never an exception: bad encoding, invalid YAML,
repeated keys, a top level that is not a mapping, hostile sizes or nesting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from flopkb.report.diagnostics import Diagnostic, make

MAX_FILE_BYTES = 1 << 20
MAX_NESTING = 64
MAX_NODES = 200_000

Path = tuple[str | int, ...]
Mark = tuple[int, int]

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_IMPLICIT_FIRST_CHARACTERS = frozenset(key for key in yaml.resolver.Resolver.yaml_implicit_resolvers if key)
# Plain scalars starting with one of these letters are typed only as yes/no/true/false/on/off/null.
_WORD_LITERAL_FIRST_CHARACTERS = frozenset("yYnNtTfFoO")
_LONGEST_WORD_LITERAL = len("false")
_ALLOWED_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "null", "timestamp"))
_SCALAR_CONSTRUCTORS = yaml.constructor.SafeConstructor.yaml_constructors
_FLOW_BRACKETS = re.compile(r"[^\[\]{}]+")
LINK_AS_LIST_HINT = "a value that starts with [[ is read as a YAML list: quote the text or write it as a block (|)"
_VALUE_STARTS_WITH_LINK = re.compile(r"(^|:)\s+(- )?\[\[")


class Later(Protocol):
    """What a deferred `Source` asks for its text and data."""

    def text(self) -> str: ...

    def data(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ScalarSpan:
    """Where a string scalar's source text stands, to locate text inside it."""

    start: int
    end: int
    style: str | None


class Source:
    """A parsed record file: its text and its data; positions are found on demand.

    Most files never need a position (only files with problems or links that
    are reported do), so the parse that builds `data` records none; the first
    call of `position` or `span` parses the text again, recording them.

    A source can also be *deferred* (`Source.deferred`): its text and its data
    are asked of another object when first used. The load cache
    (`flopkb.pipeline.cache`) makes the sources of unchanged files so, because most of
    them are never looked at again. Either way, a source compares equal to
    another of the same path, text and data.
    """

    __slots__ = ("_data", "_later", "_positions", "_text", "path")

    def __init__(self, path: str, text: str, data: dict[str, Any]) -> None:
        self.path = path
        self._text: str | None = text
        self._data: dict[str, Any] | None = data
        self._positions: _Positions | None = None
        self._later: Later | None = None

    @classmethod
    def deferred(cls, path: str, later: Later) -> Source:
        """A source whose text is `later.text()` and data `later.data()`, each asked for once, when first needed."""
        source = cls.__new__(cls)
        source.path = path
        source._text = source._data = source._positions = None
        source._later = later
        return source

    @property
    def text(self) -> str:
        text = self._text
        if text is None:
            assert self._later is not None
            text = self._text = self._later.text()
        return text

    @property
    def data(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            assert self._later is not None
            data = self._data = self._later.data()
        return data

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.path, self.text, self.data) == (other.path, other.text, other.data)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable (positions are filled in), as before

    def __repr__(self) -> str:
        return f"Source(path={self.path!r}, text={self.text!r}, data={self.data!r})"

    def __reduce__(self) -> tuple[type[Source], tuple[str, str, dict[str, Any]]]:
        # Parse workers send sources back: the text and data, never the positions or what a deferred one asks.
        return Source, (self.path, self.text, self.data)

    def position(self, path: Path, *, key: bool = False) -> Mark:
        """The 1-based (line, column) of the value at `path` (or of its key), else of its nearest ancestor."""
        positions = self._index()
        table = positions.keys if key else positions.values
        while path:
            mark = table.get(path) or positions.values.get(path)
            if mark is not None:
                return mark.line + 1, mark.column + 1
            path = path[:-1]
        root = positions.values.get(())
        return (root.line + 1, root.column + 1) if root else (1, 1)

    def span(self, path: Path) -> ScalarSpan | None:
        """Where the source text of the string scalar at `path` stands."""
        return self._index().spans.get(path)

    def _index(self) -> _Positions:
        if self._positions is None:
            builder = _Builder(self.path, record_positions=True)
            root = _compose(self.text)
            if (
                root is not None
            ):  # None: the text of a deferred source whose file changed since (see flopkb.pipeline.cache)
                builder.build(root, (), 0)
            self._positions = builder.positions
        return self._positions


@dataclass(slots=True)
class _Positions:
    values: dict[Path, yaml.Mark] = field(default_factory=dict)
    keys: dict[Path, yaml.Mark] = field(default_factory=dict)
    spans: dict[Path, ScalarSpan] = field(default_factory=dict)


class _Problem(Exception):
    def __init__(self, code: str, mark: Mark, message: str) -> None:
        super().__init__(message)
        self.code, self.mark, self.message = code, mark, message


def decode(raw: bytes, path: str) -> str | Diagnostic:
    """UTF-8 text without its BOM, or an `encoding` diagnostic at the first bad byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = raw.rfind(b"\n", 0, err.start) + 1
        line = raw.count(b"\n", 0, err.start) + 1
        column = len(raw[line_start : err.start].decode("utf-8", errors="replace")) + 1
        return make(
            "encoding", path, line, column, f"the file is not UTF-8: byte 0x{raw[err.start]:02x} is invalid here"
        )
    return text.removeprefix("\ufeff")


def parse(text: str, path: str) -> tuple[Source | None, list[Diagnostic]]:
    """Parse record text into a Source (None when it cannot be one) and the problems found on the way."""
    if len(text) > MAX_FILE_BYTES:
        return None, [
            make(
                "not-a-record",
                path,
                1,
                1,
                f"the file has {len(text):,} characters; records are limited to {MAX_FILE_BYTES:,}",
            )
        ]
    depth_problem = _flow_nesting_problem(text, path)
    if depth_problem:
        return None, [depth_problem]
    try:
        root = _compose(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(part for part in (err.context, err.problem) if part) or str(err)
        return None, [make("yaml-syntax", path, line, column, message, _syntax_hint(text, line))]
    except yaml.YAMLError as err:
        return None, [make("yaml-syntax", path, 1, 1, str(err))]
    if root is None:
        return None, [make("not-a-record", path, 1, 1, "the file is empty; a record is a mapping of fields")]
    if not isinstance(root, yaml.MappingNode):
        line, column = _mark(root)
        return None, [
            make("not-a-record", path, line, column, "the top level is not a mapping; a record is a mapping of fields")
        ]
    builder = _Builder(path)
    try:
        data = builder.plain(root, 0)
    except _Problem as problem:
        return None, [make(problem.code, path, *problem.mark, problem.message)]
    return Source(path, text, data), builder.diagnostics


def _syntax_hint(text: str, line: int) -> str | None:
    """The one syntax slip authors make most in records: a plain value that starts with a wikilink."""
    lines = text.splitlines()
    if 0 < line <= len(lines) and _VALUE_STARTS_WITH_LINK.search(lines[line - 1]):
        return LINK_AS_LIST_HINT
    return None


def _compose(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


class _Loader(yaml.CSafeLoader):
    """libyaml's composer with a fast path for the tag of plain text.

    PyYAML resolves every scalar's tag in Python against a table of regular
    expressions; most record scalars are prose whose first character already
    rules out every implicit type, so they skip the table.
    """

    def resolve(self, kind: type, value: str | None, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0] and (not value or _may_be_typed(value)):
                return super().resolve(kind, value, implicit)
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP


def _may_be_typed(plain: str) -> bool:
    """Whether a plain scalar could resolve to something other than text (bool, null, number, date...)."""
    first = plain[0]
    if first in _WORD_LITERAL_FIRST_CHARACTERS:
        return len(plain) <= _LONGEST_WORD_LITERAL
    return first in _IMPLICIT_FIRST_CHARACTERS


def _flow_nesting_problem(text: str, path: str) -> Diagnostic | None:
    """libyaml recurses without a bound on nested flow collections; refuse hostile depth before parsing."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return None
    depth = 0
    for char in _FLOW_BRACKETS.sub("", text):
        depth = depth + 1 if char in "[{" else max(depth - 1, 0)
        if depth > MAX_NESTING:
            return make("not-a-record", path, 1, 1, f"brackets nest deeper than {MAX_NESTING} levels")
    return None


def _mark(node: yaml.Node) -> Mark:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    """Walks a composed node tree into plain values, recording where each value and key starts.

    Positions are kept as libyaml's own mark objects and turned into
    (line, column) only when asked: most are never needed.
    """

    def __init__(self, path: str, *, record_positions: bool = False) -> None:
        self.path = path
        self.positions = _Positions() if record_positions else None
        self.diagnostics: list[Diagnostic] = []
        self._nodes = 0
        self._constructor = yaml.constructor.SafeConstructor()

    def build(self, node: yaml.Node, path: Path, depth: int) -> Any:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _Problem(
                "not-a-record", _mark(node), f"the file has more than {MAX_NODES:,} values (alias expansion?)"
            )
        if depth > MAX_NESTING:
            raise _Problem("not-a-record", _mark(node), f"values nest deeper than {MAX_NESTING} levels")
        positions = self.positions
        if positions is not None:
            positions.values[path] = node.start_mark
        if node.tag == _STR:
            if positions is not None:
                positions.spans[path] = ScalarSpan(node.start_mark.index, node.end_mark.index, node.style)
            return node.value
        if isinstance(node, yaml.ScalarNode):
            return self._typed_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index), depth + 1) for index, item in enumerate(node.value)]
        return self._mapping(node, path, depth)

    def plain(self, node: yaml.Node, depth: int) -> Any:
        """`build` without positions: no data paths are made (the parse that builds every file's data records none)."""
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _Problem(
                "not-a-record", _mark(node), f"the file has more than {MAX_NODES:,} values (alias expansion?)"
            )
        if depth > MAX_NESTING:
            raise _Problem("not-a-record", _mark(node), f"values nest deeper than {MAX_NESTING} levels")
        if node.tag == _STR:
            return node.value
        if isinstance(node, yaml.ScalarNode):
            return self._typed_scalar(node)
        depth += 1
        if isinstance(node, yaml.SequenceNode):
            return [self.plain(item, depth) for item in node.value]
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _STR and isinstance(key_node, yaml.ScalarNode):
                key = key_node.value
            elif isinstance(key_node, yaml.ScalarNode):
                key = str(self._typed_scalar(key_node))
            else:
                raise _Problem("invalid-value", _mark(key_node), "a mapping key must be a plain name, not a collection")
            if key in result:
                line, column = _mark(key_node)
                self.diagnostics.append(
                    make(
                        "duplicate-key", self.path, line, column, f"the key '{key}' is repeated", "keep one of the two"
                    )
                )
                continue
            result[key] = self.plain(value_node, depth)
        return result

    def _typed_scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag not in _ALLOWED_TAGS:
            raise _Problem("invalid-value", _mark(node), f"the tag {node.tag} is not allowed in a record")
        # Dates and times stay text: records quote them, they are never computed with.
        if node.tag.endswith(":timestamp"):
            return node.value
        return _SCALAR_CONSTRUCTORS[node.tag](self._constructor, node)

    def _mapping(self, node: yaml.MappingNode, path: Path, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Problem("invalid-value", _mark(key_node), "a mapping key must be a plain name, not a collection")
            key = key_node.value if key_node.tag == _STR else str(self._typed_scalar(key_node))
            key_path = (*path, key)
            if key in result:
                line, column = _mark(key_node)
                self.diagnostics.append(
                    make(
                        "duplicate-key", self.path, line, column, f"the key '{key}' is repeated", "keep one of the two"
                    )
                )
                continue
            if self.positions is not None:
                self.positions.keys[key_path] = key_node.start_mark
            result[key] = self.build(value_node, key_path, depth + 1)
        return result

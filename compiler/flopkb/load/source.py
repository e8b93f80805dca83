"""Load one record file into plain data that remembers where every key and value stands.

Parsing uses libyaml through PyYAML's C-backed composer: it is the fastest
parser that keeps positions (`start_mark`) on every node, about 2.5 times
faster than ruamel.yaml's C loader on this project's benchmark (see
docs/architecture.md). The node tree is walked once into plain Python values;
the positions of keys and values are kept beside them, keyed by path.
ruamel.yaml's round-trip mode is used where comments matter (`flopkb fmt`).

Where libyaml does not bound nesting itself (before 0.2.6), PyYAML's compiled
composer recurses on the C stack, so every text is composed by a guarded
Python composer (`_Loader`), which is most of a cold check's time. A text that
cannot nest deeper than `C_SAFE_DEPTH` (`flopkb.load.nesting`) is composed by the compiled composer
instead (`_FastLoader`): both compose the same libyaml events into the same
nodes. Any text the fast parse does not make a record of (an error, a nesting
too deep, an empty file) is parsed again by the guarded one, whose errors and
positions are the ones reported: so a diagnostic never depends on which
composer ran (tests/fuzz/test_fast_compose.py holds it).

Every failure is a diagnostic, never an exception: bad encoding, invalid YAML,
repeated keys, a top level that is not a mapping, hostile sizes or nesting,
explicit tags whose text is not of their type, numbers too long to convert.
Positions come from mark indexes through one line index (`flopkb.load.positions`),
never from libyaml's line numbers, which count breaks that editors and git do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from flopkb.load.files import MAX_FILE_BYTES
from flopkb.load.nesting import C_SAFE_DEPTH, libyaml_bounds_nesting, nesting_bound
from flopkb.load.positions import LineIndex, ScalarMap
from flopkb.load.tabs import indenting_tab, tab_message, untabbed
from flopkb.report.diagnostics import Diagnostic, make

if TYPE_CHECKING:
    from flopkb.load.sources import Witness

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
_SCALAR_CONSTRUCTORS = SafeConstructor.yaml_constructors
_MAX_INT_BITS = 14_000
"""Whole numbers are refused above about 10^4214: Python will not turn more than 4,300 digits into text."""
_COLLECTION_TAGS: dict[type[yaml.Node], str] = {yaml.SequenceNode: _SEQ, yaml.MappingNode: _MAP}
# What YAML allows in a stream (its c-printable set); libyaml refuses the rest, reporting only a byte offset.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
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

    __slots__ = ("_data", "_later", "_lines", "_positions", "_scalars", "_text", "path", "witness")

    def __init__(self, path: str, text: str, data: dict[str, Any], witness: Witness | None = None) -> None:
        self.path = path
        self.witness = witness
        """What reading the file told of the bytes `text` was decoded from, when asked for
        (`flopkb.pipeline.compile.load_entries`)."""
        self._text: str | None = text
        self._data: dict[str, Any] | None = data
        self._positions: _Positions | None = None
        self._lines: LineIndex | None = None
        self._scalars: dict[tuple[Path, re.Pattern[str]], ScalarMap] | None = None
        self._later: Later | None = None

    @classmethod
    def deferred(cls, path: str, later: Later) -> Source:
        """A source whose text is `later.text()` and data `later.data()`, each asked for once, when first needed."""
        source = cls.__new__(cls)
        source.path, source.witness = path, None
        source._text = source._data = source._positions = source._lines = source._scalars = None
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
        return (self.path, self.text, self.data) == (other.path, other.text, other.data)

    __hash__ = None  # type: ignore[assignment]  # mutable (positions are filled in), as before

    def __repr__(self) -> str:
        return f"Source(path={self.path!r}, text={self.text!r}, data={self.data!r})"

    def __reduce__(self) -> tuple[type[Source], tuple[str, str, dict[str, Any], Witness | None]]:
        # Parse workers send sources back: the text and data, never the positions or what a deferred one asks.
        return Source, (self.path, self.text, self.data, self.witness)

    def position(self, path: Path, *, key: bool = False) -> Mark:
        """The 1-based (line, column) of the value at `path` (or of its key), else of its nearest ancestor."""
        positions = self._index()
        table = positions.keys if key else positions.values
        while path:
            mark = table.get(path) or positions.values.get(path)
            if mark is not None:
                return self.lines.position(mark.index)
            path = path[:-1]
        root = positions.values.get(())
        return self.lines.position(root.index) if root else (1, 1)

    def span(self, path: Path) -> ScalarSpan | None:
        """Where the source text of the string scalar at `path` stands."""
        return self._index().spans.get(path)

    @property
    def lines(self) -> LineIndex:
        """The line index of the text: every position in this file is found through it."""
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def scalar_map(self, path: Path, value: str, anchor: re.Pattern[str]) -> ScalarMap | None:
        """Maps offsets in `value`, the string scalar at `path`, to positions in the file; built once per scalar."""
        span = self.span(path)
        if span is None:
            return None
        if self._scalars is None:
            self._scalars = {}
        found = self._scalars.get((path, anchor))
        if found is None:
            found = self._scalars[path, anchor] = ScalarMap(self.lines, span.start, span.end, span.style, value, anchor)
        return found

    def _index(self) -> _Positions:
        if self._positions is None:
            builder = _Builder(self.path, self.lines, record_positions=True)
            root = compose(self.text, _loader_for(self.text))
            if root is not None:  # None: the text of a deferred source whose file changed since (flopkb.pipeline.cache)
                builder.build(root, (), 0)
            assert builder.positions is not None
            self._positions = builder.positions
        return self._positions


@dataclass(slots=True)
class _Positions:
    values: dict[Path, yaml.Mark] = field(default_factory=dict)
    keys: dict[Path, yaml.Mark] = field(default_factory=dict)
    spans: dict[Path, ScalarSpan] = field(default_factory=dict)


class _Problem(Exception):
    """A problem that makes the file no record, at a mark index."""

    def __init__(self, code: str, index: int, message: str) -> None:
        super().__init__(message)
        self.code, self.index, self.message = code, index, message


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
    lines = LineIndex(text)
    fast = _loader_for(text)
    if fast is not _Loader:
        parsed = _parse(text, path, lines, fast)
        if parsed[0] is not None:
            return parsed
    return _parse(text, path, lines, _Loader)


def _parse(text: str, path: str, lines: LineIndex, loader: type) -> tuple[Source | None, list[Diagnostic]]:
    try:
        root = compose(text, loader)
    except _Problem as problem:
        return None, [make(problem.code, path, *lines.inside(problem.index), problem.message)]
    except yaml.reader.ReaderError as err:
        return None, [_not_printable(text, path, lines, err)]
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, column = lines.inside(mark.index) if mark else (1, 1)
        message = " ".join(part for part in (err.context, err.problem) if part) or str(err)
        if "maximum nesting depth" in message:  # libyaml's own bound, far above ours
            return None, [make("not-a-record", path, line, column, f"values nest deeper than {MAX_NESTING} levels")]
        return None, [_syntax_error(text, path, line, column, message)]
    except yaml.YAMLError as err:
        return None, [make("yaml-syntax", path, 1, 1, str(err))]
    if root is None:
        return None, [make("not-a-record", path, 1, 1, "the file is empty; a record is a mapping of fields")]
    if not isinstance(root, yaml.MappingNode):
        return None, [
            make(
                "not-a-record",
                path,
                *lines.inside(root.start_mark.index),
                "the top level is not a mapping; a record is a mapping of fields",
            )
        ]
    builder = _Builder(path, lines)
    try:
        data = builder.plain(root, 0)
    except _Problem as problem:
        return None, [make(problem.code, path, *lines.inside(problem.index), problem.message)]
    source = Source(path, text, data)
    source._lines = lines
    return source, builder.diagnostics


def _not_printable(text: str, path: str, lines: LineIndex, err: yaml.reader.ReaderError) -> Diagnostic:
    """libyaml's reader gives a byte offset, if any: find the refused character in the text instead."""
    found = _NOT_PRINTABLE.search(text)
    if found is None:
        return make("yaml-syntax", path, 1, 1, str(err.reason))
    return make(
        "yaml-syntax",
        path,
        *lines.position(found.start()),
        f"the character U+{ord(found.group()):04X} is not allowed in YAML",
        "delete it, or write it as an escape (\\uXXXX) inside a double-quoted value",
    )


def _syntax_error(text: str, path: str, line: int, column: int, message: str) -> Diagnostic:
    """libyaml's message, or what an author needs to read instead: a tab where spaces indent."""
    lines = text.split("\n")
    tab = indenting_tab(lines[line - 1]) if 0 < line <= len(lines) else None
    if tab is not None:
        fixable = untabbed(text, lambda replaced: parse(replaced, path)[0] is not None) is not None
        return make("yaml-syntax", path, line, tab + 1, *tab_message(line, tab + 1, fixable))
    return make("yaml-syntax", path, line, column, message, _syntax_hint(text, line))


def _syntax_hint(text: str, line: int) -> str | None:
    """The one syntax slip authors make most in records: a plain value that starts with a wikilink."""
    lines = text.split("\n")
    if 0 < line <= len(lines) and _VALUE_STARTS_WITH_LINK.search(lines[line - 1]):
        return LINK_AS_LIST_HINT
    return None


def compose(text: str, loader: type | None = None) -> yaml.Node | None:
    """The node tree of one YAML document, its nesting bounded (by `_Loader`, unless another `loader` is given).

    libyaml reads YAML 1.1, where U+0085, U+2028 and U+2029 break lines; in
    YAML 1.2, as in editors and git, they are characters like others. They are
    handed to libyaml as private-use characters of the same length (so every
    mark index stays), and given back in the values.
    """
    # `in`, not a regular expression: a text of narrower characters is ruled out at once, the rest by memchr.
    hidden = ("\x85" in text or "\u2028" in text or "\u2029" in text) and _PLACEHOLDERS.search(text) is None
    composer = (loader or _Loader)(text.translate(_HIDE) if hidden else text)
    try:
        root = composer.get_single_node()
    finally:
        composer.dispose()
    if hidden and root is not None:
        _give_back(root)
    return root


_PLACEHOLDERS = re.compile("[\uf8fd-\uf8ff]")
_HIDE = str.maketrans("\x85\u2028\u2029", "\uf8fd\uf8fe\uf8ff")
_GIVE_BACK = str.maketrans("\uf8fd\uf8fe\uf8ff", "\x85\u2028\u2029")


def _give_back(root: yaml.Node) -> None:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: the same node again
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            node.value = node.value.translate(_GIVE_BACK)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        else:
            stack.extend(part for pair in node.value for part in pair)


class _TypedPlainResolver(Resolver):
    """The tag of plain text without PyYAML's table of regular expressions.

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


class _DepthGuard(Composer):
    """PyYAML's composer, refusing nesting deeper than the builder would take before it recurses any further.

    Used where the parser itself does not bound nesting: libyaml before 0.2.6
    (whose compiled composer would recurse until the C stack overflows) and
    the pure-Python parser (until RecursionError).
    """

    _depth = 0
    peek_event: Callable[[], yaml.Event]
    """The parser's, which every loader class built from this guard has."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self._depth > MAX_NESTING:
            mark = self.peek_event().start_mark
            raise _Problem("not-a-record", mark.index if mark is not None else 0, _TOO_DEEP)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _loader_class(libyaml: bool, bounded: bool) -> type:
    """The fastest loader that keeps positions: libyaml's own composer when it bounds nesting, else a guarded one."""
    if libyaml and bounded:
        return type("_Loader", (yaml.CSafeLoader, _TypedPlainResolver), {})
    parser: Any = yaml.cyaml.CParser if libyaml else yaml.parser.Parser  # type: ignore[attr-defined]  # stubs hide it
    reader: tuple[type, ...] = () if libyaml else (yaml.reader.Reader, yaml.scanner.Scanner)

    def __init__(self: Any, stream: str) -> None:
        if libyaml:
            parser.__init__(self, stream)
        else:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            parser.__init__(self)
        _DepthGuard.__init__(self)
        SafeConstructor.__init__(self)
        _TypedPlainResolver.__init__(self)

    def dispose(self: Any) -> None:
        if libyaml:
            parser.dispose(self)

    return type(
        "_Loader",
        (_DepthGuard, *reader, parser, SafeConstructor, _TypedPlainResolver),  # the guard's composer before CParser's
        {"__init__": __init__, "dispose": dispose},
    )


_Loader = _loader_class(yaml.__with_libyaml__, libyaml_bounds_nesting())
_FastLoader: type | None = (
    type("_FastLoader", (yaml.CSafeLoader, _TypedPlainResolver), {})
    if yaml.__with_libyaml__ and not libyaml_bounds_nesting()
    else None
)
"""libyaml's compiled composer, for texts that cannot nest deep enough to overflow the C stack; None where `_Loader`
is it already (libyaml 0.2.6 and later) or there is no libyaml."""
_TOO_DEEP = f"values nest deeper than {MAX_NESTING} levels"


def _loader_for(text: str) -> type:
    """The compiled composer for a text that cannot nest beyond `C_SAFE_DEPTH` levels; the guarded one otherwise."""
    if _FastLoader is not None and nesting_bound(text.encode("utf-8", "surrogatepass")) <= C_SAFE_DEPTH:
        return _FastLoader
    return _Loader


def _may_be_typed(plain: str) -> bool:
    """Whether a plain scalar could resolve to something other than text (bool, null, number, date...)."""
    first = plain[0]
    if first in _WORD_LITERAL_FIRST_CHARACTERS:
        return len(plain) <= _LONGEST_WORD_LITERAL
    return first in _IMPLICIT_FIRST_CHARACTERS


class _Builder:
    """Walks a composed node tree into plain values, recording where each value and key starts.

    Positions are kept as libyaml's own mark objects and turned into
    (line, column) only when asked: most are never needed.
    """

    def __init__(self, path: str, lines: LineIndex, *, record_positions: bool = False) -> None:
        self.path = path
        self.lines = lines
        self.positions = _Positions() if record_positions else None
        self.diagnostics: list[Diagnostic] = []
        self._nodes = 0
        self._constructor = SafeConstructor()

    def _enter(self, node: yaml.Node, depth: int) -> None:
        if self._nodes > MAX_NODES:
            raise _Problem(
                "not-a-record", node.start_mark.index, f"the file has more than {MAX_NODES:,} values (alias expansion?)"
            )
        if depth > MAX_NESTING:
            raise _Problem("not-a-record", node.start_mark.index, _TOO_DEEP)

    def build(self, node: yaml.Node, path: Path, depth: int) -> Any:
        self._nodes += 1
        self._enter(node, depth)
        positions = self.positions
        if positions is not None:
            positions.values[path] = node.start_mark
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _STR:
                if positions is not None:
                    positions.spans[path] = ScalarSpan(node.start_mark.index, node.end_mark.index, node.style)
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
                    positions.keys[key_path] = key_node.start_mark
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
        if tag == _STR and type(node) is yaml.ScalarNode:
            return node.value
        if type(node) is yaml.ScalarNode:
            return self._typed_scalar(node)
        if tag != _COLLECTION_TAGS[type(node)]:
            self._collection_tag(node)
        depth += 1
        if tag == _SEQ:
            return [self.plain(item, depth) for item in node.value]
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _STR and type(key_node) is yaml.ScalarNode and key_node.value not in result:
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
            raise _Problem(
                "invalid-value", node.start_mark.index, "a mapping key must be a plain name, not a collection"
            )
        key = self._key_text(node)
        if key in seen:
            first = next(
                other
                for other, _ in mapping.value
                if isinstance(other, yaml.ScalarNode) and self._key_text(other) == key
            )
            first_line = self.lines.position(first.start_mark.index)[0]
            line, column = self.lines.position(node.start_mark.index)
            self.diagnostics.append(
                make(
                    "duplicate-key",
                    self.path,
                    line,
                    column,
                    f"the key '{key}' is repeated; its first copy is on line {first_line}",
                    f"keep one of the two: delete this line or line {first_line}, or merge their values",
                )
            )
            return None
        return key

    def _key_text(self, node: yaml.ScalarNode) -> str:
        return node.value if node.tag == _STR else str(self._typed_scalar(node))

    def _collection_tag(self, node: yaml.Node) -> None:
        if node.tag != _COLLECTION_TAGS[type(node)]:
            what = "list" if isinstance(node, yaml.SequenceNode) else "mapping"
            raise _Problem("invalid-value", node.start_mark.index, f"the tag {_shown(node.tag)} cannot be on a {what}")

    def _typed_scalar(self, node: yaml.ScalarNode) -> Any:
        """The value of a scalar that is not text: the one path for implicit types and explicit tags alike."""
        if node.tag not in _ALLOWED_TAGS:
            raise _Problem(
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
            raise _Problem("invalid-value", node.start_mark.index, _unreadable(node, too_long)) from error
        if type(value) is int and value.bit_length() > _MAX_INT_BITS:  # 1:0:0:...: fine to read, never to print
            raise _Problem("invalid-value", node.start_mark.index, _unreadable(node, True))
        return value


def _unreadable(node: yaml.ScalarNode, too_long: bool) -> str:
    shown = node.value if len(node.value) <= 40 else f"{node.value[:40]}... ({len(node.value):,} characters)"
    return f"'{shown}' is {'a number too long to read' if too_long else f'not a valid {_shown(node.tag)}'}"


def _shown(tag: str) -> str:
    """A tag as authors write it: `!!int`, not `tag:yaml.org,2002:int`."""
    return tag.replace("tag:yaml.org,2002:", "!!", 1)

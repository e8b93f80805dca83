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

A file that does not parse only because tabs start some of its lines, and
parses with each of them replaced by two spaces (as `flopkb fmt` replaces
them: `flopkb.load.tabs`), is read from the replaced text: the tab is still
reported (`yaml-syntax`), and the record is checked as any other. Its
`Source.text` stays the file's own text, and every position found in the
replaced text is turned into one in the file's own
(`flopkb.load.builder.Builder._at`), so no reader of a source sees the
replaced text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from flopkb.kb.building import FILE_PARTS
from flopkb.load.builder import MAP, MAX_NESTING, SEQ, STR, TOO_DEEP, Builder, Path, Positions, Problem, ScalarSpan
from flopkb.load.files import MAX_FILE_BYTES, no_mapping
from flopkb.load.nesting import C_SAFE_DEPTH, libyaml_bounds_nesting, nesting_bound
from flopkb.load.omitted import NOTHING_OMITTED, Omitted, left_out, remapped, view_path, without_items, written_path
from flopkb.load.positions import LineIndex, ScalarMap
from flopkb.load.slips import explained
from flopkb.load.tabs import Untabbing, has_line_start_tabs, indenting_tab, replace_line_start_tabs, tab_message
from flopkb.report.diagnostics import Diagnostic, make

if TYPE_CHECKING:
    from flopkb.load.sources import Witness

Mark = tuple[int, int]

_IMPLICIT_FIRST_CHARACTERS = frozenset(key for key in yaml.resolver.Resolver.yaml_implicit_resolvers if key)
# Plain scalars starting with one of these letters are typed only as yes/no/true/false/on/off/null.
_WORD_LITERAL_FIRST_CHARACTERS = frozenset("yYnNtTfFoO")
_LONGEST_WORD_LITERAL = len("false")
# What YAML allows in a stream (its c-printable set); libyaml refuses the rest, reporting only a byte offset.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
LINK_AS_LIST_HINT = "a value that starts with [[ is read as a YAML list: quote the text or write it as a block (|)"
_VALUE_STARTS_WITH_LINK = re.compile(r"(^|:)\s+(- )?\[\[")


class Later(Protocol):
    """What a deferred `Source` asks for its text and data."""

    def text(self) -> str: ...

    def data(self) -> dict[str, Any]: ...


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

    __slots__ = (
        "_data",
        "_later",
        "_lines",
        "_positions",
        "_scalars",
        "_text",
        "_untabbed",
        "omitted",
        "path",
        "witness",
    )

    def __init__(
        self,
        path: str,
        text: str,
        data: dict[str, Any],
        witness: Witness | None = None,
        untabbed: bool | None = None,
        omitted: Omitted = NOTHING_OMITTED,
    ) -> None:
        self.path = path
        self.omitted = omitted or NOTHING_OMITTED
        """The list items of the file that `data` is without (`flopkb.load.omitted`): its positions are those of
        the file's other parts; and the fields validation left out (`rejects`), which `data` keeps as written."""
        self.witness = witness
        """What reading the file told of the bytes `text` was decoded from, when asked for
        (`flopkb.pipeline.compile.load_entries`)."""
        self._text: str | None = text
        self._data: dict[str, Any] | None = data
        self._positions: Positions | None = None
        self._lines: LineIndex | None = None
        self._scalars: dict[tuple[Path, re.Pattern[str]], ScalarMap] | None = None
        self._later: Later | None = None
        self._untabbed = untabbed

    @classmethod
    def deferred(cls, path: str, later: Later, omitted: Omitted | None = None) -> Source:
        """A source whose text is `later.text()` and data `later.data()`, each asked for once, when first needed;
        `omitted`: what validation left out of it, as `without` names it."""
        source = cls.__new__(cls)
        source.path, source.witness, source.omitted = path, None, omitted or NOTHING_OMITTED
        source._text = source._data = source._positions = source._lines = source._scalars = source._untabbed = None
        source._later = later
        return source

    @property
    def text(self) -> str:
        text = self._text
        if text is None:
            with FILE_PARTS:  # read once for every thread that asks (`flopkb.kb.building`): the file may change
                text = self._text
                if text is None:
                    assert self._later is not None
                    text = self._text = self._later.text()
        return text

    @property
    def data(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            with FILE_PARTS:  # one model, unpickled once (as `Entry.record`, which shares it)
                data = self._data
                if data is None:
                    assert self._later is not None
                    data = self._data = self._later.data()
        return data

    @property
    def untabbed(self) -> bool:
        """Whether `data` was read from `text` with the tabs that start its lines replaced (`parse`): the text as it
        is does not parse. Found out from the text when the parse did not tell (a deferred source)."""
        untabbed = self._untabbed
        if untabbed is None:
            untabbed = self._untabbed = _parses_only_untabbed(self.text)
        return untabbed

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.path, self.text, self.data) == (other.path, other.text, other.data)

    __hash__ = None  # type: ignore[assignment]  # mutable (positions are filled in), as before

    def __repr__(self) -> str:
        return f"Source(path={self.path!r}, text={self.text!r}, data={self.data!r})"

    def __reduce__(
        self,
    ) -> tuple[type[Source], tuple[str, str, dict[str, Any], Witness | None, bool | None, Omitted]]:
        # Parse workers send sources back: the text and data, never the positions or what a deferred one asks.
        return Source, (self.path, self.text, self.data, self.witness, self._untabbed, self.omitted)

    def without(self, items: Omitted) -> Source:
        """This source, read from its file, as if the list items at `items` (paths in its data, to their values) were
        absent: its data without them, every other part where it stands in the file."""
        if not items:
            return self
        return Source(self.path, self.text, without_items(self.data, items), self.witness, self._untabbed, items)

    def position(self, path: Path, *, key: bool = False) -> Mark:
        """The 1-based (line, column) of the value at `path` (or of its key), else of its nearest ancestor."""
        positions = self._index()
        table = positions.keys if key else positions.values
        while path:
            offset = table.get(path)
            if offset is None:
                offset = positions.values.get(path)
            if offset is not None:
                return self.lines.position(offset)
            path = path[:-1]
        root = positions.values.get(())
        return (1, 1) if root is None else self.lines.position(root)

    def written(self, path: Path) -> Path:
        """The path in the file's data of the part at `path` in `data`: they differ after an item left out."""
        return written_path(path, self.omitted) if self.omitted else path

    def rejects(self, path: Path) -> bool:
        """Whether validation left out the part at `path` (a path in `data`), the part that holds it, or a part of
        it: the schema told it wrong, and the model holds the field's default, or the rest, in its place
        (`flopkb.load.omitted`)."""
        return bool(self.omitted) and self.omitted.touches(self.written(path))

    def left_out(self, path: Path) -> list[Any]:
        """The items, as written, that `data` is without in the list at `path` (a path in the file's data)."""
        return left_out(path, self.omitted) if self.omitted else []

    def view(self, path: Path) -> Path | None:
        """The path in `data` of the part at `path` in the file's data; None when it is in a list item left out."""
        return view_path(path, self.omitted) if self.omitted else path

    def path_at(self, line: int, column: int) -> Path | None:
        """The data path of the deepest value or key that starts at the 1-based (line, column); None when none does
        (a position inside a value, or not in the text)."""
        lines = self.lines
        if not 1 <= line <= len(lines.starts):
            return None
        offset = lines.offset(line, column)
        positions = self._index()
        found = [path for table in (positions.values, positions.keys) for path, at in table.items() if at == offset]
        return max(found, key=len, default=None)

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

    def _index(self) -> Positions:
        if self._positions is None:
            text, untabbing = self.text, None
            if self.untabbed:  # parsed as `parse` parsed it, its positions turned into the file's own
                text, untabbing = replace_line_start_tabs(text), Untabbing(text)
            builder = Builder(self.path, self.lines, untabbing, record_positions=True)
            root = compose(text)
            if root is not None:  # None: the text of a deferred source whose file changed since (flopkb.pipeline.cache)
                builder.walk(root)
            assert builder.positions is not None
            self._positions = remapped(builder.positions, self.omitted) if self.omitted else builder.positions
        return self._positions


def parse(text: str, path: str, trees: list[yaml.Node] | None = None) -> tuple[Source | None, list[Diagnostic]]:
    """Parse record text into a Source (None when it cannot be one) and the problems found on the way; the node tree
    it was read from is added to `trees`, if given, when the text as it is makes a record (`fmt` lays it out)."""
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
    return _load(text, path, LineIndex(text), trees=trees)


def _load(
    text: str, path: str, lines: LineIndex, untabbing: Untabbing | None = None, trees: list[yaml.Node] | None = None
) -> tuple[Source | None, list[Diagnostic]]:
    """Parse `text`: the file's own (`lines.text`), or, with `untabbing`, that text with its line-start tabs
    replaced."""
    fast = _loader_for(text)
    if fast is not _Loader:
        parsed = _parse(text, path, lines, fast, untabbing, explain=False, trees=trees)
        if parsed[0] is not None:
            return parsed
    return _parse(text, path, lines, _Loader, untabbing, trees=trees)


def _parse(
    text: str,
    path: str,
    lines: LineIndex,
    loader: type,
    untabbing: Untabbing | None,
    *,
    explain: bool = True,
    trees: list[yaml.Node] | None = None,
) -> tuple[Source | None, list[Diagnostic]]:
    """The source of `text`, or None with its problems; without `explain`, a syntax error is left to the caller's next
    attempt (with the guarded composer) to explain, once: a tab read past, a slip guessed at."""

    def inside(index: int) -> tuple[int, int]:
        return lines.inside(index if untabbing is None else untabbing.original(index))

    try:
        root = compose(text, loader)
    except Problem as problem:
        return None, [make(problem.code, path, *inside(problem.index), problem.message)]
    except yaml.reader.ReaderError as err:
        return None, [_not_printable(text, path, lines, err)]
    except yaml.MarkedYAMLError as err:
        if not explain:
            return None, []
        mark = err.problem_mark or err.context_mark
        line, column = inside(mark.index) if mark else (1, 1)
        message = " ".join(part for part in (err.context, err.problem) if part) or str(err)
        if "maximum nesting depth" in message:  # libyaml's own bound, far above ours
            return None, [make("not-a-record", path, line, column, f"values nest deeper than {MAX_NESTING} levels")]
        if untabbing is not None:  # the replaced text does not parse either: the file's own error is reported
            return None, [make("yaml-syntax", path, line, column, message)]
        opened = inside(err.context_mark.index)[0] if err.context_mark is not None else None
        return _syntax_error(text, path, lines, line, column, message, opened)
    except yaml.YAMLError as err:
        return None, [make("yaml-syntax", path, 1, 1, str(err))]
    if root is None:
        return None, [no_mapping(path, 1, 1, empty=True)]
    if not isinstance(root, yaml.MappingNode):
        return None, [no_mapping(path, *inside(root.start_mark.index), empty=False)]
    builder = Builder(path, lines, untabbing)
    try:
        data = builder.walk(root)
    except Problem as problem:
        return None, [make(problem.code, path, *inside(problem.index), problem.message)]
    source = Source(path, lines.text, data, untabbed=untabbing is not None)
    source._lines = lines
    if trees is not None:
        trees.append(root)
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


def _syntax_error(
    text: str, path: str, lines: LineIndex, line: int, column: int, message: str, opened: int | None = None
) -> tuple[Source | None, list[Diagnostic]]:
    """libyaml's message, or what an author needs to read instead: a tab where spaces indent, or one of the slips
    authors make most (`flopkb.load.slips`). When the text parses with the tabs that start its lines replaced
    (`fmt`'s replacement, which changes no value), the record is read from that text, the tab reported with its other
    problems."""
    split = text.split("\n")
    tab = indenting_tab(split[line - 1]) if 0 < line <= len(split) else None
    if tab is None:
        slip = explained(text, line, _holds, opened)
        if slip is not None:
            return None, [make("yaml-syntax", path, *slip)]
        return None, [make("yaml-syntax", path, line, column, message, _syntax_hint(text, line))]
    source, problems = _untabbed(text, path, lines)
    error = make("yaml-syntax", path, line, tab + 1, *tab_message(line, tab + 1, source is not None))
    return source, [error, *problems]


def _untabbed(text: str, path: str, lines: LineIndex) -> tuple[Source | None, list[Diagnostic]]:
    """The record of `text` with the tabs that start its lines replaced, and its problems, at their places in `text`;
    (None, []) when no line starts with a tab, or the replaced text is too large or makes no record either."""
    if not has_line_start_tabs(text):
        return None, []
    replaced = replace_line_start_tabs(text)
    if len(replaced) > MAX_FILE_BYTES:
        return None, []
    source, problems = _load(replaced, path, lines, Untabbing(text))
    return (source, problems) if source is not None else (None, [])


def _parses_only_untabbed(text: str) -> bool:
    """Whether the text of a source (`parse` made a record of it) was read with its line-start tabs replaced: then,
    and only then, the text as it is does not compose."""
    if not has_line_start_tabs(text):
        return False
    try:
        compose(text)
    except yaml.YAMLError:
        return True
    return False


def _holds(text: str, line: int, as_text: bool) -> bool:
    """Whether `text` parses with its `line` (1-based) read as a repair means it (`flopkb.load.slips.explained`): no
    key on it that no record could have, and unless it may be text, not inside a scalar that starts above it. Tabs
    that start lines are read as `fmt` replaces them: a slip above a tab is told first, the tab once it is mended."""
    text = replace_line_start_tabs(text)  # the same lines, and no line starts with a tab any more
    try:
        root = compose(text)
    except Exception:
        return False
    starts = LineIndex(text).starts  # lines as the file counts them: libyaml's marks also break lines at a lone '\r'
    begins, ends = starts[line - 1], starts[line] if line < len(starts) else len(text) + 1
    for node in _each_node(root) if root is not None else ():
        if isinstance(node, yaml.ScalarNode):
            if not as_text and node.start_mark.index < begins < node.end_mark.index:
                return False
        elif isinstance(node, yaml.MappingNode):
            for key, _ in node.value:
                on_line = begins <= key.start_mark.index < ends
                if on_line and isinstance(key, yaml.ScalarNode) and _KEY_NAME.fullmatch(key.value) is None:
                    return False
    return True


_KEY_NAME = re.compile(r"[A-Za-z_][\w.-]*")
"""A key a record may have: a field, a parameter, an input (never words with spaces)."""


def _syntax_hint(text: str, line: int) -> str | None:
    """The one syntax slip authors make most in records: a plain value that starts with a wikilink."""
    lines = text.split("\n")
    if 0 < line <= len(lines) and _VALUE_STARTS_WITH_LINK.search(lines[line - 1]):
        return LINK_AS_LIST_HINT
    return None


def compose(text: str, loader: type | None = None) -> yaml.Node | None:
    """The node tree of one YAML document, its nesting bounded (by `_loader_for(text)`, unless another `loader` is
    given).

    libyaml reads YAML 1.1, where U+0085, U+2028 and U+2029 break lines; in
    YAML 1.2, as in editors and git, they are characters like others. They are
    handed to libyaml as private-use characters of the same length (so every
    mark index stays), and given back in the values.
    """
    # `in`, not a regular expression: a text of narrower characters is ruled out at once, the rest by memchr.
    hidden = ("\x85" in text or "\u2028" in text or "\u2029" in text) and _PLACEHOLDERS.search(text) is None
    composer = (loader or _loader_for(text))(text.translate(HIDDEN_BREAKS) if hidden else text)
    try:
        root = composer.get_single_node()
    finally:
        composer.dispose()
    if hidden and root is not None:
        _give_back(root)
    return root


_PLACEHOLDERS = re.compile("[\uf8fd-\uf8ff]")
HIDDEN_BREAKS = str.maketrans("\x85\u2028\u2029", "\uf8fd\uf8fe\uf8ff")
"""What libyaml would read as line breaks (YAML 1.1) and check does not, as private-use characters (`compose`)."""
_GIVE_BACK = str.maketrans("\uf8fd\uf8fe\uf8ff", "\x85\u2028\u2029")


def _give_back(root: yaml.Node) -> None:
    for node in _each_node(root):
        if isinstance(node, yaml.ScalarNode):
            node.value = node.value.translate(_GIVE_BACK)


def _each_node(root: yaml.Node) -> Iterator[yaml.Node]:
    """Every node of the tree under `root`, once: an alias is the same node again, and a node may hold itself."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
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
            return STR
        return SEQ if kind is yaml.SequenceNode else MAP


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
            raise Problem("not-a-record", mark.index if mark is not None else 0, TOO_DEEP)
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

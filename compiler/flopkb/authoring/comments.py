"""Comments of a YAML file, detached by the data path they belong to and put back into a new layout of the same data.

YAML comments carry no data, and a formatter that moves keys around has to
carry them itself: a comment belongs to what it stands above or beside, not
to the line number it had. This module reads, from a file's text and its
composed node tree (PyYAML, which keeps every node's start and end):

- where every *slot* stands (a mapping key with its value, or a sequence
  item), by data path;
- every comment: a *full-line* comment (with the blank lines around it)
  belongs to the slot it stands above; an *end-of-line* comment belongs to
  the last slot that starts on or before its line (for `key:  # c` over a
  block, that is `key`; for `- a  # c`, the item `a`);
- the file's *head* (comment and blank lines above the first key, such as the
  `yaml-language-server` line) and *end* (those after the last value).

`attach` puts them into another text of the same data, laid out anew: full
lines above the slot's new line, in their own indentation; end-of-line
comments after the slot's key line (when its value is a block) or after its
value (a block scalar's comment goes on its header line, where YAML allows
one). Nothing here knows about records.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

import yaml

Path = tuple[str | int, ...]

_COMMENT_START = re.compile(r"(?:^|(?<=[ \t]))#", re.MULTILINE)
_LINE_START = re.compile(r"^", re.MULTILINE)
_EOL_GAP = 2
"""Spaces between a value and its end-of-line comment, at least."""


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a mapping entry or a sequence item stands (0-based lines)."""

    path: Path
    line: int
    """The line of its key, or of the item's first token."""
    first: int
    """The line where its value starts (a block scalar's header)."""
    last: int
    """The last line holding its value."""
    block: bool
    """Its value is a non-empty block mapping or sequence."""
    block_scalar: bool
    """Its value is a literal or folded block scalar."""


@dataclass(frozen=True, slots=True)
class EndOfLine:
    column: int
    text: str


@dataclass(slots=True)
class Comments:
    """A file's comments and blank lines, by what they belong to."""

    head: list[str] = field(default_factory=list)
    before: dict[Path, list[str]] = field(default_factory=dict)
    after: dict[Path, list[EndOfLine]] = field(default_factory=dict)
    end: list[str] = field(default_factory=list)

    def enclosing(self) -> set[Path]:
        """Every path that a comment belongs strictly below (a slot's ancestors, the slot itself not)."""
        return {key[:depth] for key in (*self.before, *self.after) for depth in range(len(key))}


@dataclass(slots=True)
class _Layout:
    slots: list[Slot]
    spans: list[tuple[int, int]]
    """Character ranges holding scalar content, where a `#` is text and a blank line is data."""


def _last_line(node: yaml.Node) -> int:
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _content_span(node: yaml.ScalarNode, text: str) -> tuple[int, int]:
    start, end = node.start_mark.index, node.end_mark.index
    if node.style not in ("|", ">"):
        return start, end
    header_end = text.find("\n", start, end)
    if header_end < 0:
        return end, end
    header = text[start:header_end].split("#", 1)[0]
    if "+" not in header:  # trailing blank lines are not content: they separate what follows
        end = start + len(text[start:end].rstrip(" \t\n")) if text[header_end:end].strip() else header_end
    return header_end + 1, end


def _layout(root: yaml.Node, text: str) -> _Layout:
    layout = _Layout([], [])

    def walk(node: yaml.Node, path: Path | None) -> None:
        """Record the spans of every scalar under `node`, and the slots of its block collections (`path` None: inside
        flow)."""
        if isinstance(node, yaml.ScalarNode):
            layout.spans.append(_content_span(node, text))
            return
        if isinstance(node, yaml.SequenceNode):
            entries: list[tuple[str | int, int, yaml.Node]] = [
                (index, item.start_mark.line, item) for index, item in enumerate(node.value)
            ]
        else:
            assert isinstance(node, yaml.MappingNode)  # the composer makes no other kind of node
            entries = [(key.value, key.start_mark.line, value) for key, value in node.value]
            for key, _ in node.value:
                walk(key, None)
        if path is None or node.flow_style:  # a flow collection's comments belong to its slot: it may be on one line
            for _, _, value in entries:
                walk(value, None)
            return
        for key, line, value in entries:
            child = (*path, key)
            is_block = (
                isinstance(value, (yaml.MappingNode, yaml.SequenceNode)) and not value.flow_style and bool(value.value)
            )
            is_block_scalar = isinstance(value, yaml.ScalarNode) and value.style in ("|", ">")
            layout.slots.append(Slot(child, line, value.start_mark.line, _last_line(value), is_block, is_block_scalar))
            walk(value, child)

    walk(root, ())
    layout.spans.sort()
    return layout


def _in_spans(spans: list[tuple[int, int]], index: int) -> bool:
    at = bisect_right(spans, (index, float("inf"))) - 1
    return at >= 0 and spans[at][0] <= index < spans[at][1]


def detach(text: str, root: yaml.Node) -> Comments:
    """Every comment and blank line of `text` (whose node tree is `root`), by the slot it belongs to."""
    layout = _layout(root, text)
    starts = [match.start() for match in _LINE_START.finditer(text)]
    lines = text.split("\n")
    slot_lines = [slot.line for slot in layout.slots]
    comments = Comments()
    standalone: dict[int, str] = {}
    for number, line in enumerate(lines):
        if not line.strip() and not _in_spans(layout.spans, starts[number]) and number < len(lines) - 1:
            standalone[number] = ""
    for match in _COMMENT_START.finditer(text):
        if _in_spans(layout.spans, match.start()):
            continue
        number = bisect_right(starts, match.start()) - 1
        line = lines[number]
        column = match.start() - starts[number]
        owner = bisect_right(slot_lines, number) - 1
        if not line[:column].strip():
            standalone[number] = line.rstrip()
        elif owner < 0:  # on a line that starts no slot: inside a flow collection at the top
            standalone[number] = line[column:].rstrip()
        else:
            comments.after.setdefault(layout.slots[owner].path, []).append(EndOfLine(column, line[column:].rstrip()))
    last = max((slot.last for slot in layout.slots), default=-1)
    for number in sorted(standalone):
        next_slot = bisect_right(slot_lines, number)
        if next_slot == 0:
            comments.head.append(standalone[number])
        elif number > last or next_slot == len(layout.slots):
            comments.end.append(standalone[number])
        else:
            comments.before.setdefault(layout.slots[next_slot].path, []).append(standalone[number])
    comments.head = comments.head[_first_text(comments.head) :]  # a file starts with its first word
    comments.end = comments.end[: len(comments.end) - _first_text(comments.end[::-1])]  # and ends with its last
    return comments


def _first_text(lines: list[str]) -> int:
    """The index of the first line that is not blank (len(lines) when none)."""
    return next((index for index, line in enumerate(lines) if line), len(lines))


def attach(text: str, root: yaml.Node, comments: Comments) -> str:
    """`text` (with no comments; `root` its node tree) with `comments` put back where they belong."""
    slots = {slot.path: slot for slot in _layout(root, text).slots}
    lines = text.rstrip("\n").split("\n")
    above: dict[int, list[str]] = {}
    for path, slot in slots.items():  # document order: a parent's lines come before its first child's
        if path in comments.before:
            above.setdefault(slot.line, []).extend(comments.before[path])
    for path in comments.before.keys() - slots.keys():  # a slot the new layout does not have: inside a flow collection
        above.setdefault(_nearest(slots, path).line, []).extend(comments.before[path])
    commented: set[int] = set()
    for path, notes in comments.after.items():
        slot = _nearest(slots, path)
        number = slot.line if slot.block else slot.first if slot.block_scalar else slot.last
        for note in notes:
            content = lines[number]
            if number in commented:  # one comment per line: the others go above it
                above.setdefault(number, []).append(" " * (len(content) - len(content.lstrip(" "))) + note.text)
                continue
            commented.add(number)
            lines[number] = content.ljust(max(note.column, len(content) + _EOL_GAP)) + note.text
    out = list(comments.head)
    for number, line in enumerate(lines):
        out.extend(above.get(number, []))
        out.append(line)
    out.extend(comments.end)
    return "\n".join(out) + "\n"


def _nearest(slots: dict[Path, Slot], path: Path) -> Slot:
    """The slot at `path`, or at its nearest ancestor that the layout has (the first slot for none)."""
    while path and path not in slots:
        path = path[:-1]
    return slots[path] if path else next(iter(slots.values()))


def comment_texts(text: str, root: yaml.Node) -> list[str]:
    """The text of every comment in `text`, sorted: what a layout change must keep."""
    spans = _layout(root, text).spans
    found = []
    for match in _COMMENT_START.finditer(text):
        if not _in_spans(spans, match.start()):
            end = text.find("\n", match.start())
            found.append(text[match.start() : end if end >= 0 else len(text)].rstrip())
    return sorted(found)

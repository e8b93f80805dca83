"""Which field's value is being typed at the cursor, read from libyaml's events over the text before it.

The text before the cursor is an unfinished document (a flow list still
open on a later line, a quote not closed), so it is not composed: its
events are followed, as far as libyaml reads them, on a stack of the
mappings and lists open at each point. A probe letter is put at the cursor,
so that a value not yet begun is a scalar too: the value being typed is the
plain scalar that ends with the probe, or the quoted scalar the text ends
inside. Its field is the key it is the value of, or, for an item, the key
of the list holding it; none for a key or a list of lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import yaml

from flopkb.load.builder import MAX_NESTING
from flopkb.load.source import HIDDEN_BREAKS

_PROBE = "x"
_QUOTED = "while scanning a quoted scalar"


@dataclass(frozen=True)
class Typed:
    """A scalar being typed at the cursor."""

    field: str | None
    """The key whose value (or list item) the scalar is; None where it is a key or holds none."""
    typed: str
    """The scalar's text from its start to the cursor, as written (in quotes: after the opening quote)."""
    quote: str
    """The quote the scalar is inside (`"` or `'`), or "" for a plain scalar."""


@dataclass
class _Open:
    """A mapping or list open at a point of the text, or the document (`is_list` False, `field` None)."""

    is_list: bool
    field: str | None
    """For a list: the key it is the value of. For a mapping: its last key."""
    nodes: int = 0

    def next_field(self) -> str | None:
        """The field of the next node in it: a list's key, or a mapping's last key where a value comes next."""
        return self.field if self.is_list or self.nodes % 2 else None


def value_at(before: str) -> Typed | None:
    """The scalar being typed at the end of `before` (the text up to the cursor), or None where the cursor is not
    in one (a comment, a block scalar, after a closed quote). Past a syntax error above the cursor (another edit not
    finished), read again from the line of the error, then from the line after it: the field is found if its key is
    not above the error."""
    before = before.removeprefix("\ufeff")  # libyaml's marks count from after it
    start: int | None = 0
    while start is not None:
        found, start = _read(before, start)
        if found is not None:
            return found
    return None


def _read(before: str, start: int) -> tuple[Typed | None, int | None]:
    """The scalar being typed at the end of `before`, read from `start`; else where to read again from (after a
    syntax error), if anywhere. The text read ends inside a quoted scalar: read again with the quote closed, so that
    libyaml, which reads a flow collection to its end before it tells what it is, tells what holds the scalar."""
    text = before[start:] + _PROBE
    found, error = _scalar_at_end(text)
    if found is not None or error is None:
        return found, None
    quote = _unclosed_quote(error, len(text))
    if quote is not None:
        return _scalar_at_end(text + text[quote])[0], None
    return None, _again(before, start, error)


def _scalar_at_end(text: str) -> tuple[Typed | None, yaml.MarkedYAMLError | None]:
    """The scalar that ends where `text` ends (a plain one, or a quoted one `text` closes), or the error that stopped
    libyaml before it."""
    stack = [_Open(is_list=False, field=None, nodes=1)]
    try:
        for event in _events(text.translate(HIDDEN_BREAKS)):  # line breaks as check reads them
            if isinstance(event, yaml.ScalarEvent) and event.end_mark and event.end_mark.index == len(text):
                assert event.start_mark is not None  # libyaml marks every event
                return _typed(text, event.start_mark.index, event.style, stack[-1].next_field()), None
            _follow(stack, event)
            if len(stack) > MAX_NESTING + 1:  # no record nests deeper (and libyaml 0.2.5 reads on in quadratic time)
                return None, None
    except yaml.MarkedYAMLError as error:
        return None, error
    except yaml.YAMLError:  # a character YAML does not allow
        pass
    return None, None


def _typed(text: str, start: int, style: str | None, field: str | None) -> Typed | None:
    """The scalar from `start` to the end of `text` (the probe, and the quote that closes it): plain or quoted."""
    if not style:
        return Typed(field, text[start : -len(_PROBE)], "")
    if style in ('"', "'") and text[start] == style:
        return Typed(field, text[start + 1 : -len(_PROBE) - 1], style)
    return None  # a block scalar, or a tag or anchor before the quote


def _events(text: str) -> Iterator[yaml.Event]:
    """libyaml's events of `text`, as far as it reads them."""
    parser = yaml.CSafeLoader(text)
    try:
        while (event := parser.get_event()) is not None:
            yield event
    finally:
        parser.dispose()


def _again(before: str, start: int, error: yaml.MarkedYAMLError) -> int | None:
    """Where to read `before` again from after `error` in what was read from `start`: the start of the line of the
    error (the lines above it may be what is wrong: a list not closed), else the next line; None past the end."""
    if error.problem_mark is None:
        return None
    at = start + error.problem_mark.index
    line = before.rfind("\n", 0, at) + 1
    if line > start:
        return line
    line = before.find("\n", at) + 1
    return line or None


def _unclosed_quote(error: yaml.MarkedYAMLError, end: int) -> int | None:
    """Where the quoted scalar that `error` says the text ends inside starts, if it says so."""
    if error.context != _QUOTED:
        return None
    if error.context_mark is None or error.problem_mark is None or error.problem_mark.index != end:
        return None
    return int(error.context_mark.index)


def _follow(stack: list[_Open], event: yaml.Event) -> None:
    """`stack` after `event`: a node counted in the mapping or list it is in, a collection opened or closed."""
    top = stack[-1]
    if isinstance(event, yaml.CollectionEndEvent):
        stack.pop()
    if not isinstance(event, yaml.NodeEvent):
        return
    field = top.next_field()
    if not top.is_list and top.nodes % 2 == 0:  # a key
        top.field = event.value if isinstance(event, yaml.ScalarEvent) else None
    top.nodes += 1
    if isinstance(event, yaml.SequenceStartEvent):
        stack.append(_Open(is_list=True, field=None if top.is_list else field))
    elif isinstance(event, yaml.MappingStartEvent):
        stack.append(_Open(is_list=False, field=None))

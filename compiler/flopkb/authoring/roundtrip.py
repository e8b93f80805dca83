"""ruamel.yaml's round trip of a record, as `flopkb fmt` does it: quotes, block scalars and number spellings kept.

Two of ruamel.yaml's steps are replaced where that gives the same result
faster. Reading: ruamel.yaml reads round-trip data with its own scanner and
parser, in pure Python: two thirds of `flopkb fmt`'s load of a record (6 of
9 s for a 1 MB record of claims). Its composer and constructor only need the
parser's events, and libyaml's parser gives the same events, minus what
`fmt` drops anyway (comments, which `flopkb.authoring.comments` carries) or
what only ruamel.yaml's scanner records:

- where a folded block scalar (`>`) was folded, which ruamel.yaml marks in
  the scalar's text;
- a `%YAML` directive, which its resolver reads from its scanner;
- anchors, aliases and tags, spelled in ruamel.yaml's own types;
- line breaks YAML 1.2 does not count as such (U+0085, U+2028, U+2029),
  which libyaml (YAML 1.1) breaks lines at, and a lone carriage return.

A text holding any of these is read by ruamel.yaml's own parser, as is a
text libyaml or ruamel.yaml refuses (for ruamel.yaml's own words on why) and
every text where PyYAML runs without libyaml.

Writing: ruamel.yaml marks where a folded block scalar folds by copying the
whole text once a fold (15,000 folds of a 1 MB string: 1.5 s); `_Representer`
marks them all in one copy.

Both ways, ruamel.yaml's components spend a third of their time finding one
another and their tags again for each node: the composer asks the `YAML`
object for its parser and resolver through properties that look them up by
name, the serializer does so for its emitter and resolver, the resolver
works out the YAML version read, and each tag is a new `Tag` whose suffix is
decoded from percent-escapes a character at a time. `_LEAN` holds
components that do the same work and keep what they looked up once: nothing
changes it mid-way through a dump or a load of one document (a `%YAML`
directive, which changes the version read and with it ruamel.yaml's
resolver, is read before the document's first node, where the lean
components first look).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cached_property, lru_cache
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml import events as rt
from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.emitter import RoundTripEmitter
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import FoldedScalarString
from ruamel.yaml.serializer import Serializer
from ruamel.yaml.tag import Tag

INDENT = 2
_FOLD = "\a"
"""What ruamel.yaml's emitter reads as "fold here" in a folded block scalar's text."""

_OWN_PARSER_CHARACTERS = ("\r", "\x85", "\u2028", "\u2029")


class _Events:
    """A parser for ruamel.yaml's composer that hands on events read beforehand (`YAML.Parser`)."""

    def __init__(self, loader: Any) -> None:
        self.pending: list[Any] = []

    def check_event(self, *choices: type) -> bool:
        return bool(self.pending) and isinstance(self.pending[-1], choices)

    def peek_event(self) -> Any:
        return self.pending[-1]

    def get_event(self) -> Any:
        return self.pending.pop()

    def dispose(self) -> None:
        self.pending.clear()


class _OwnParserNeeded(Exception):
    """The text holds something that only ruamel.yaml's own parser reads as it means."""


def _node(event: Any) -> None:
    if event.anchor is not None or event.tag is not None:
        raise _OwnParserNeeded


def _scalar(event: Any) -> rt.ScalarEvent:
    _node(event)
    if event.style == ">":
        raise _OwnParserNeeded
    return rt.ScalarEvent(None, None, event.implicit, event.value, event.start_mark, event.end_mark, event.style)


def _sequence(event: Any) -> rt.SequenceStartEvent:
    _node(event)
    return rt.SequenceStartEvent(None, None, event.implicit, event.start_mark, event.end_mark, event.flow_style)


def _mapping(event: Any) -> rt.MappingStartEvent:
    _node(event)
    return rt.MappingStartEvent(None, None, event.implicit, event.start_mark, event.end_mark, event.flow_style)


def _document(event: Any) -> rt.DocumentStartEvent:
    if event.version is not None or event.tags:
        raise _OwnParserNeeded
    return rt.DocumentStartEvent(event.start_mark, event.end_mark, explicit=event.explicit)


def _alias(event: Any) -> rt.AliasEvent:
    raise _OwnParserNeeded


_CONVERT: dict[type, Callable[[Any], Any]] = {
    yaml.ScalarEvent: _scalar,
    yaml.SequenceStartEvent: _sequence,
    yaml.MappingStartEvent: _mapping,
    yaml.SequenceEndEvent: lambda event: rt.SequenceEndEvent(event.start_mark, event.end_mark),
    yaml.MappingEndEvent: lambda event: rt.MappingEndEvent(event.start_mark, event.end_mark),
    yaml.DocumentStartEvent: _document,
    yaml.DocumentEndEvent: lambda event: rt.DocumentEndEvent(event.start_mark, event.end_mark, explicit=event.explicit),
    yaml.StreamStartEvent: lambda event: rt.StreamStartEvent(event.start_mark, event.end_mark),
    yaml.StreamEndEvent: lambda event: rt.StreamEndEvent(event.start_mark, event.end_mark),
    yaml.AliasEvent: _alias,
}


def _events(text: str) -> list[Any]:
    """ruamel.yaml's events of `text` as libyaml reads them, the last first."""
    if not yaml.__with_libyaml__ or any(character in text for character in _OWN_PARSER_CHARACTERS):
        raise _OwnParserNeeded
    parser = yaml.cyaml.CParser(text)  # type: ignore[attr-defined]  # the stubs leave out the compiled parser
    try:
        converted = [_CONVERT[type(event)](event) for event in iter(parser.get_event, None)]
    except yaml.YAMLError as error:
        raise _OwnParserNeeded from error
    finally:
        parser.dispose()
    converted.reverse()
    return converted


def handler() -> YAML:
    """ruamel.yaml's round trip: quotes kept, no line folded that the author did not fold, sequences indented; its
    components lean (`_LEAN`), for a dump or a load of one document."""
    made = YAML(typ="rt")
    made.Constructor = _Constructor
    made.Representer = _Representer
    for name, component in _LEAN.items():
        setattr(made, name, component)
    made.preserve_quotes = True
    made.width = 1 << 16
    made.indent(mapping=INDENT, sequence=2 * INDENT, offset=INDENT)
    return made


def load(text: str) -> Any:
    """What `handler().load(text)` gives, comments left out (they are not read)."""
    try:
        pending = _events(text)
    except _OwnParserNeeded:
        return handler().load(text)
    reader = handler()
    reader.Parser = _Events
    reader.parser.pending = pending
    try:
        return reader.constructor.get_single_data()
    except YAMLError:  # told in ruamel.yaml's own words
        return handler().load(text)


def dump(data: Any) -> str:
    stream = io.StringIO()
    handler().dump(data, stream)
    return stream.getvalue()


class _Representer(RoundTripRepresenter):
    def represent_folded(self, data: FoldedScalarString) -> ScalarNode:
        """ruamel.yaml's `represent_folded_scalarstring`: a fold mark at each fold position that is a lone space."""
        pieces, start = [], 0
        for position in sorted(set(getattr(data, "fold_pos", ()))):
            if _lone_space(data, position):
                pieces.append(data[start:position])
                start = position
        pieces.append(data[start:])
        return self.represent_scalar(
            "tag:yaml.org,2002:str", _FOLD.join(pieces), style=">", anchor=data.yaml_anchor(any=True)
        )


def _lone_space(text: str, position: int) -> bool:
    """Whether `text` holds a space at `position` with no white space on either side (a fold ruamel.yaml keeps)."""
    return (
        text[position] == " " and position > 0 and not text[position - 1].isspace() and not text[position + 1].isspace()
    )


_Representer.add_representer(FoldedScalarString, _Representer.represent_folded)


class _Constructor(RoundTripConstructor):
    def construct_dateless(self, node: ScalarNode) -> Any:
        """A timestamp, or the text of one that is no date (`2026-13-45`): records read dates as text
        (`flopkb.load.builder`), and `check` takes it; ruamel.yaml's constructor stopped on it with a `ValueError`."""
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


_Constructor.add_constructor("tag:yaml.org,2002:timestamp", _Constructor.construct_dateless)


@lru_cache(maxsize=64)
def _tag(suffix: str) -> Tag:
    return Tag(suffix=suffix)


def _interned(tag: Any) -> Any:
    """One `Tag` for each tag without a handle (what a dump and libyaml's events give), its decoded suffix kept:
    ruamel.yaml makes a new one for each node, and decodes its suffix when it is first compared."""
    if isinstance(tag, str):
        return _tag(tag)
    if isinstance(tag, Tag) and tag.handle is None and isinstance(tag.suffix, str):
        return _tag(tag.suffix)
    return tag


class _LeanRepresenter(_Representer):
    def represent_scalar(self, tag: Any, value: Any, style: Any = None, anchor: Any = None) -> ScalarNode:
        return super().represent_scalar(_interned(tag), value, style, anchor)

    def represent_sequence(self, tag: Any, sequence: Any, flow_style: Any = None) -> SequenceNode:
        return super().represent_sequence(_interned(tag), sequence, flow_style)

    def represent_mapping(self, tag: Any, mapping: Any, flow_style: Any = None) -> MappingNode:
        return super().represent_mapping(_interned(tag), mapping, flow_style)


def _once(looked_up: Any) -> Any:
    """ruamel.yaml's property `looked_up`, looked up once."""
    return cached_property(looked_up.fget)


class _LeanResolver(VersionedResolver):
    versioned_resolver = _once(VersionedResolver.versioned_resolver)  # the version is known before the first node

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        return _interned(super().resolve(kind, value, implicit))


class _LeanComposer(Composer):
    parser = _once(Composer.parser)
    resolver = _once(Composer.resolver)


class _LeanSerializer(Serializer):
    emitter = _once(Serializer.emitter)
    resolver = _once(Serializer.resolver)


class _LeanEmitter(RoundTripEmitter):
    def emit(self, event: Any) -> None:
        """ruamel.yaml's, without asking the environment for `YAMLDEBUG` at each event."""
        self.events.append(event)
        while not self.need_more_events():
            self.event = self.events.pop(0)
            self.state()
            self.event = None


_LEAN: dict[str, type] = {
    "Composer": _LeanComposer,
    "Resolver": _LeanResolver,
    "Representer": _LeanRepresenter,
    "Serializer": _LeanSerializer,
    "Emitter": _LeanEmitter,
}

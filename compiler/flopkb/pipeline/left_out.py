"""What the later stages tell of a list item that validation left out (`flopkb.load.omitted`), told in the same run
as its schema problems, where it can be told without the item in the record's model: the links and refs written in
it, as the link stage tells them (`flopkb.links.resolve.link_problem`: dangling, ambiguous, of a kind the field does
not take, to no formula or measurement), with the warnings about its prose read in the same walk; a formula's `expr`
and `valid_when` that do not parse, as the formula stage tells them (`formula-syntax`); and a measurement's value that
is no quantity, as the measurements stage tells it (`flopkb.formulas.measurements.read_value`). Each is located
where it is written in the file (`whole`).

So an author who fixes an item's schema problem meets no second round of these. What needs the item in the model is
told once it is fixed (docs/cli.md): a formula's evaluation and claims, a claim's point and accelerator against its
formula's inputs and scope, a row's or a measurement's evidence, a measurement's id against the other ids of its
source. A part of the item that the schema told wrong itself (a ref with spaces around it) is told that alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

from flopkb.formulas.expr import ExprSyntaxError, parse
from flopkb.formulas.measurements import read_value
from flopkb.formulas.positions import expression_position
from flopkb.formulas.regime import parse_condition
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import Link, extract_part
from flopkb.links.resolve import link_problem
from flopkb.links.resolver import Resolver
from flopkb.load.omitted import Omitted, with_items
from flopkb.load.source import Path, Source
from flopkb.report.diagnostics import Diagnostic, make

_PARSED: tuple[tuple[str, Callable[[str], object]], ...] = (("expr", parse), ("valid_when", parse_condition))
"""The fields of a formula the formula stage parses, each with its grammar."""


def check_left_out(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """The stage: what the link and formula stages tell of every list item left out of a record, that they can tell
    of it as written."""
    resolver = Resolver.of(kb)
    for entry in kb.entries.values():
        source = entry.source
        kind = entry.summary.kind if source is not None and source.omitted.has_items else None
        if source is None or kind is None:
            continue
        whole = Source.deferred(source.path, _Whole(source))
        for path, item in source.omitted.items():
            if isinstance(path[-1], int) and isinstance(item, dict):  # a ref or a text left out: told wrong itself
                yield from _links(entry.id, kind, whole, (path, item), source.omitted, resolver)
                if kind in ("flop", "fact") and len(path) == 2 and path[0] == "formulas":
                    yield from _syntax(whole, path, item, source.omitted)
                elif kind == "source" and len(path) == 2 and path[0] == "measurements":
                    yield from _value(whole, path, item, source.omitted)


def _links(
    record_id: str, kind: str, whole: Source, part: tuple[Path, Any], omitted: Omitted, resolver: Resolver
) -> Iterator[Diagnostic]:
    suspects: list[Link] = []
    warnings: list[Diagnostic] = []
    extract_part(record_id, kind, whole, part, (resolver.target, resolver.kinds, suspects, warnings))
    for link in suspects:
        depths = range(len(part[0]) + 1, len(link.field) + 1)
        if not any(link.field[:depth] in omitted for depth in depths):  # not in a part told wrong
            problem = link_problem(link, resolver)
            if problem is not None:
                yield problem
    yield from warnings


def _syntax(whole: Source, path: Path, formula: dict[str, Any], omitted: Omitted) -> Iterator[Diagnostic]:
    for name, grammar in _PARSED:
        text = formula.get(name)
        if isinstance(text, str) and (*path, name) not in omitted:
            try:
                grammar(text)
            except ExprSyntaxError as error:
                at = expression_position(whole, (*path, name), text, error.offset)
                yield make("formula-syntax", whole.path, *at, f"{name}: {error.message}", error.hint)


def _value(whole: Source, path: Path, measurement: dict[str, Any], omitted: Omitted) -> Iterator[Diagnostic]:
    if "value" in measurement and (*path, "value") not in omitted:
        quantity = read_value(whole, path, measurement["value"])
        if isinstance(quantity, Diagnostic):
            yield quantity


class _Whole:
    """A record's source as its file has it (`Source.deferred`): the text of the source read without some list items,
    and its data with them back in their lists, each read when first asked for (most items left out tell nothing
    more)."""

    __slots__ = ("_source",)

    def __init__(self, source: Source) -> None:
        self._source = source

    def text(self) -> str:
        return self._source.text

    def data(self) -> dict[str, Any]:
        return cast(dict[str, Any], with_items(self._source.data, self._source.omitted))

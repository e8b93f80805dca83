"""The link stage's walk over every file, through the load cache: a file's links as written and what they resolved
to are kept in its `Entry.derived` data and taken back while they hold (`link_all`).

What a file's links are, as written, depends on that file alone (`flopkb.links.extract`); what they resolve to
depends on every id, kind and alias of the base, which `Resolver.signature` digests. The graph's edges of a file
(`edges_of`) and its computing references (`flopkb.links.memo`) are kept with its resolution, so that neither the
links nor the file's data need be built again for them.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from flopkb.kb.building import FILE_PARTS
from flopkb.links.extract import MEASURED, Link, Resolve, extract
from flopkb.load.source import Source
from flopkb.report.diagnostics import Diagnostic

_new_link = tuple.__new__
"""Builds a `Link` from a tuple without NamedTuple's argument handling (a base has about ten per record)."""

MEMO = "links"
"""`Entry.derived` key of a file's links as written, unresolved (a `LazyPickle`: most runs never make nor unpickle
them; see `link_all`)."""
PROSE_WARNINGS = "prose-warnings"
"""`Entry.derived` key of a file's warnings about its prose, `ambiguous-emphasis` and `split-link` (absent when it has
none): like its links as written, they depend on that file alone."""
RESOLVED = "links-resolved"
"""`Entry.derived` key of what a file's links resolved to: (`Resolver.signature`, the ids they reach, the suspects
among them as (index, resolved id), every computing reference as (origin, target, resolved id), and the file's edges
of the link graph (`edges_of`))."""
COMPUTING_ORIGINS = frozenset(
    {"values_for", "affected_by_hardware", "formula-hardware", "formula-ref", "expect-hardware", MEASURED}
)
"""Origins of the references that a record's evidence and formulas compute with (`flopkb.links.memo`)."""


class LazyPickle:
    """A value that is made (`make`) only when asked for, pickled on its own when what holds it is pickled (the load
    cache writes a shard), and unpickled only when asked for (`value`): a run that never writes the cache and never
    asks (a diff's first side) neither makes nor pickles it, and a run that reads it from the cache unpickles only the
    few it uses."""

    __slots__ = ("_make", "_pickled", "_value")

    def __init__(self, make: Callable[[], Any] | None = None, pickled: bytes | None = None) -> None:
        self._make, self._pickled, self._value = make, pickled, None

    @property
    def value(self) -> Any:
        if self._value is None:
            with FILE_PARTS:  # made or unpickled once, for every thread that asks (`flopkb.kb.building`)
                if self._value is None and self._make is not None:
                    self._value, self._make = self._make(), None
                elif self._value is None:
                    assert self._pickled is not None
                    self._value = pickle.loads(self._pickled)
        return self._value

    def __reduce__(self) -> tuple[Any, tuple[None, bytes]]:
        if self._pickled is None:
            self._pickled = pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL)
        return LazyPickle, (None, self._pickled)


class Linked(NamedTuple):
    """What `link_all` found: the links it built, the ids they reach, and the entries whose links it did not build."""

    built: dict[str, list[Link]]
    referenced: set[str]
    """Ids some link or ref of another record resolves to."""
    deferred: frozenset[str]
    """Entries whose links resolve as the load cache says they did: built only when `links` is asked for."""
    prose_warnings: list[Diagnostic]
    """The warnings about every entry's prose (`ambiguous-emphasis`, `split-link`)."""

    def edges(self, entries: Any) -> dict[str, tuple[Edge, ...]]:
        """Every entry's edges of the link graph (`edges_of`), without building the deferred links."""
        result: dict[str, tuple[Edge, ...]] = {}
        for record_id, entry in entries.items():
            if record_id in self.deferred:
                found = entry.derived[RESOLVED][4]
            else:
                links = self.built.get(record_id, ())
                found = edges_of([link.origin for link in links], [link.resolved for link in links])
            if found:
                result[record_id] = found
        return result

    def links(self, entries: Any, resolve: Resolve) -> dict[str, list[Link]]:
        """Every entry's links (as `extract_all` finds them), building the deferred ones."""
        result: dict[str, list[Link]] = {}
        for record_id, entry in entries.items():
            found = self.links_of(record_id, entry, resolve)
            if found:
                result[record_id] = found
        return result

    def links_of(self, record_id: str, entry: Any, resolve: Resolve) -> list[Link]:
        """One entry's links, built when deferred."""
        if entry.source is None:
            return []
        if record_id in self.deferred:
            written = unwritten(entry.derived[MEMO].value, entry.source)
            return _resolved(record_id, entry.source, written, resolve, {}, [])
        return self.built.get(record_id, [])


def link_all(entries: Any, resolver: Any, suspects: list[Link]) -> Linked:
    """Every entry's links resolved with `resolver` (a `flopkb.links.resolve.Resolver`), the suspects appended to
    `suspects`.

    What a file's links are, as written, depends on that file alone; what
    they resolve to depends on every id, kind and alias of the base, which
    `resolver.signature` digests. So an entry the load cache keeps (one with
    a `digest`) keeps, in its `derived` data, its links as written (`MEMO`)
    and what they resolved to under that signature (`RESOLVED`). While the
    signature is the same, a later run takes the ids they reach and the
    suspects from there, without resolving anything: only the suspects are
    built now (to be reported), the other links when `kb.links` is first
    asked for. A file whose links resolve under another signature is
    resolved again from its links as written; a changed file is walked again.
    The warnings about a file's prose are kept beside its links
    (`PROSE_WARNINGS`), as they are read in the same walk.
    """
    resolve, kind_of = resolver.target, resolver.kinds
    signature: bytes | None = None
    built: dict[str, list[Link]] = {}
    referenced: set[str] = set()
    deferred: set[str] = set()
    prose_warnings: list[Diagnostic] = []
    for record_id, entry in entries.items():
        source = entry.source
        if source is None:
            continue
        derived = entry.derived
        kept = derived.get(RESOLVED)
        if kept is not None or entry.digest is not None:
            signature = signature or resolver.signature
        if kept is None or kept[0] != signature:
            written = derived.get(MEMO)
            if written is None:  # a changed file (or no cache): walk its data
                mine: list[Link] = []
                warnings: list[Diagnostic] = []
                found = built[record_id] = extract(record_id, source, resolve, kind_of, mine, warnings)
                suspects.extend(mine)
                prose_warnings.extend(warnings)
                referenced.update(
                    link.resolved for link in found if link.resolved is not None and link.resolved != record_id
                )
                if entry.digest is not None:
                    if warnings:
                        derived[PROSE_WARNINGS] = tuple(warnings)
                    derived[MEMO] = LazyPickle(partial(written_links, found))
                    derived[RESOLVED] = _resolution(signature, record_id, found, kind_of)
                continue
            # an unchanged file whose links may now resolve elsewhere: resolve them again, as written
            links = written.value
            kept = derived[RESOLVED] = _resolution(
                signature, record_id, [(record_id, *link, None, resolve(link[1])) for link in links], kind_of
            )
        referenced.update(kept[1])
        prose_warnings.extend(derived.get(PROSE_WARNINGS, ()))
        deferred.add(record_id)
        if kept[2]:  # to be reported: built now, as they resolved
            links = unwritten(derived[MEMO].value, source, [index for index, _ in kept[2]])
            suspects.extend(
                _new_link(Link, (record_id, *links[index], source, resolved)) for index, resolved in kept[2]
            )
    return Linked(built, referenced, frozenset(deferred), prose_warnings)


def resolution_now(record_id: str, source: Source, resolver: Any) -> tuple[Any, ...]:
    """What `RESOLVED` keeps of a file's links under `resolver`, found now and kept nowhere: the edited buffer's check
    of a base whose link stage has not run yet (`flopkb.editor.focus`), which must not write into the entries that the
    stage then reads."""
    found = extract(record_id, source, resolver.target)
    return _resolution(resolver.signature, record_id, found, resolver.kinds)


def _resolution(
    signature: bytes | None, record_id: str, links: list[Link] | list[tuple[Any, ...]], kind_of: dict[str, str]
) -> tuple[Any, ...]:
    """What `RESOLVED` keeps of a file's links (`Link`s, or tuples of their fields: only origin, target, anchor,
    kinds and resolved are read).

    One pass over the links (every file's, on a diff's first side and on a first run with the load cache)."""
    suspects: list[tuple[int, str | None]] = []
    computing = []
    groups: dict[str, list[str]] = {}
    for index, (_, origin, target, anchor, _, _, _, _, kinds, _, _, resolved) in enumerate(links):
        if resolved is None:
            suspects.append((index, resolved))
        else:
            if anchor is not None or (kinds and kind_of.get(resolved, kinds[0]) not in kinds):
                suspects.append((index, resolved))
            group = groups.get(resolved)
            if group is None:
                groups[resolved] = [origin]
            else:
                group.append(origin)
        if origin in COMPUTING_ORIGINS:
            computing.append((origin, target, resolved))
    reached = set(groups)
    reached.discard(record_id)
    return signature, tuple(reached), tuple(suspects), tuple(computing), _edges(groups)


Edge = tuple[str, tuple[str, ...], int]
"""An edge of the link graph from a record: (the record it reaches, the sorted distinct origins of its links there,
how many links)."""


def edges_of(origins: list[str], targets: list[str | None]) -> tuple[Edge, ...]:
    """The edges of one record's links (their origins and resolved targets, in link order), by first target."""
    groups: dict[str, list[str]] = {}
    for origin, target in zip(origins, targets, strict=True):
        if target is not None:
            group = groups.get(target)
            if group is None:
                groups[target] = [origin]
            else:
                group.append(origin)
    return _edges(groups)


def _edges(groups: dict[str, list[str]]) -> tuple[Edge, ...]:
    """The edges of the origins of a record's links, grouped by the target they reach (in order of first link)."""
    # most targets are reached by one link, whose origin needs no set nor sort (every record's edges are built on a
    # first run with the load cache, and on the first side of a diff)
    return tuple(
        (target, (group[0],) if len(group) == 1 else tuple(sorted(set(group))), len(group))
        for target, group in groups.items()
    )


def written_links(found: list[Link]) -> tuple[tuple[Any, ...], ...]:
    """What `link_all` keeps of links: all but their record, source and resolution, and the value of prose links.

    A prose link's value is its whole markdown field, about nine tenths of
    what would be kept; `unwritten` takes it from the file's data again.
    """
    return tuple([(*link[1:9], None if link[6] >= 0 else link[9]) for link in found])  # [6]: offset, [9]: value


def unwritten(
    written: tuple[tuple[Any, ...], ...], source: Source, only: list[int] | None = None
) -> tuple[tuple[Any, ...], ...]:
    """Links kept by `written_links`, with the value of each prose link again (of those at `only`, when given)."""
    wanted = range(len(written)) if only is None else only
    if all(written[index][8] is not None for index in wanted):
        return written
    data = source.data
    result = list(written)
    for index in wanted:
        link = written[index]
        if link[8] is None:
            value: Any = data
            for part in link[4]:
                value = value[part]
            result[index] = (*link[:8], value)
    return tuple(result)


def _resolved(
    record_id: str,
    source: Source,
    written: tuple[tuple[Any, ...], ...],
    resolve: Resolve,
    kind_of: dict[str, str],
    suspects: list[Link],
) -> list[Link]:
    """The links kept by `link_all`, resolved: the same links, and suspects, as `extract` finds."""
    found: list[Link] = []
    append = found.append
    for origin, target, anchor, label, path, offset, end, kinds, value in written:
        resolved = resolve(target)
        link = _new_link(
            Link, (record_id, origin, target, anchor, label, path, offset, end, kinds, value, source, resolved)
        )
        append(link)
        if resolved is None or anchor is not None or (kinds and kind_of.get(resolved, kinds[0]) not in kinds):
            suspects.append(link)
    return found

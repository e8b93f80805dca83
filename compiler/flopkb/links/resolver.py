"""Resolve link targets to records, in the spec's order, and check every link of the base.

Resolution of a target (spec "Links and refs"), exact and case-sensitive:

1. the record whose id is the target;
2. the one record whose id ends with `/<target>` (any number of trailing
   segments: `h100-sxm` or `nvidia/h100-sxm`); two or more are ambiguous;
3. the record that lists the target in `aliases`.

Every record file counts, including one that failed to parse or validate:
its id is known from its path, so a broken file never turns the links to it
into `dangling-link` errors elsewhere (its anchors and kind cannot be
checked, and are not).

The index is built once per knowledge base (`Resolver.of(kb)`), every
distinct target is resolved once (a dict cache), and "did you mean" hints
are computed with rapidfuzz only for targets that resolve to nothing.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from flopkb.kb.entry import Entry
from flopkb.report.hints import Suggestion, scored, suggest


class Indexed(Protocol):
    """What resolution reads of a knowledge base: its entries, and where it keeps the resolver it builds."""

    entries: dict[str, Entry]
    resolver: Resolver | None


ID, SUFFIX, ALIAS, AMBIGUOUS, DANGLING = "id", "suffix", "alias", "ambiguous", "dangling"
_HINT_CUTOFF = 70.0
_HINT_COUNT = 3
_HINT_SPREAD = 5.0
"""A hint names the best match and the others that score within this many points of it (at most `_HINT_COUNT`)."""


class Resolution(NamedTuple):
    """What a target resolves to: `id` (None unless `step` is id, suffix or alias) and, when ambiguous, the
    candidates."""

    id: str | None
    step: str
    candidates: tuple[str, ...] = ()


class Resolver:
    """The resolution index of one knowledge base: ids, id suffixes, aliases, kinds and formula ids."""

    def __init__(
        self,
        ids: Iterable[str],
        aliases: dict[str, str],
        kinds: dict[str, str],
        entries: dict[str, Entry] | None = None,
    ) -> None:
        self.entries = entries or {}
        self.ids: frozenset[str] = frozenset(ids)
        self.aliases = aliases
        """Alias -> id of the record that lists it (the first one, when two do: that is a duplicate-id)."""
        self.kinds = kinds
        """Kind of every record that validated; a broken record has no known kind."""
        self._suffixes: dict[str, list[str]] | None = None
        self._signature: bytes | None = None
        self._cache: dict[str, Resolution] = {}
        self._hint_texts: dict[tuple[str, tuple[str, ...]], Suggestion | None] = {}
        self._hints: dict[tuple[int, frozenset[str]], tuple[dict[str, str], list[str], dict[str, list[str]]]] = {}

    @property
    def suffixes(self) -> dict[str, list[str]]:
        """Every trailing part of an id (`h100-sxm`, `nvidia/h100-sxm`) -> the ids that end with it.

        Built on first use: a check whose links all come from the load cache resolves none (see `signature`).
        """
        if self._suffixes is None:
            suffixes: dict[str, list[str]] = {}
            for record_id in self.ids:
                rest = record_id
                while "/" in rest:
                    rest = rest.split("/", 1)[1]
                    suffixes.setdefault(rest, []).append(record_id)
            self._suffixes = suffixes
        return self._suffixes

    @property
    def signature(self) -> bytes:
        """A digest of everything resolution and the link checks depend on: every id, its kind and the aliases.

        While it is unchanged, a file's links resolve as they did (what the load cache keeps:
        `flopkb.links.extract.extract_all`).
        """
        if self._signature is None:
            digest = hashlib.blake2b(digest_size=16)
            digest.update(
                "\n".join(sorted(f"{record_id}\t{self.kinds.get(record_id, '')}" for record_id in self.ids)).encode()
            )
            digest.update(b"\0")
            digest.update("\n".join(f"{alias}\t{owner}" for alias, owner in sorted(self.aliases.items())).encode())
            self._signature = digest.digest()
        return self._signature

    @classmethod
    def from_entries(cls, entries: dict[str, Entry]) -> Resolver:
        aliases: dict[str, str] = {}
        kinds: dict[str, str] = {}
        for record_id, entry in entries.items():
            kind, listed = entry.summary[:2]  # the model's kind and aliases, or a broken record's listed aliases
            if kind is not None:
                kinds[record_id] = kind
            for alias in listed:
                aliases.setdefault(alias, record_id)
        return cls(entries, aliases, kinds, entries)

    def with_entries(self, entries: dict[str, Entry]) -> Resolver:
        """This index over other entries of the same ids, kinds and aliases (one file's new text: the same
        `signature`), sharing what it built and resolved; only anchors are read from `entries`."""
        shared = copy.copy(self)
        shared.entries = entries
        shared._suffixes = self.suffixes
        shared._signature = self.signature
        return shared

    @classmethod
    def of(cls, kb: Indexed) -> Resolver:
        """The knowledge base's resolver, built (and stored on it) on first use."""
        if kb.resolver is None:
            kb.resolver = cls.from_entries(kb.entries)
        return kb.resolver

    def resolve(self, target: str) -> Resolution:
        found = self._cache.get(target)
        if found is None:
            found = self._cache[target] = self._resolve(target)
        return found

    def _resolve(self, target: str) -> Resolution:
        if target in self.ids:
            return Resolution(target, ID)
        candidates = self.suffixes.get(target)
        if candidates:
            if len(candidates) == 1:
                return Resolution(candidates[0], SUFFIX)
            return Resolution(None, AMBIGUOUS, tuple(sorted(candidates)))
        owner = self.aliases.get(target)
        if owner is not None:
            return Resolution(owner, ALIAS)
        return Resolution(None, DANGLING)

    def target(self, target: str) -> str | None:
        """The id of the record `target` resolves to, or None."""
        return self.resolve(target).id

    def anchors(self, record_id: str) -> tuple[str, ...] | None:
        """The formula and measurement ids of a record; None when it did not validate (they are unknown)."""
        entry = self.entries.get(record_id)
        return entry.summary.anchors if entry is not None else None

    def closest(self, target: str, kinds: Iterable[str] = ()) -> list[str]:
        """Ids and aliases closest to `target` (records of `kinds` only, when given), best first.

        A target is compared with whole ids and with the same number of
        trailing segments of each id, so `h100-sxn` finds `accelerators/h100-sxm`; one
        that begins a few names, or is whole words of them (`h100` of `nvidia-h100-sxm`),
        suggests those.
        """
        keys, names, folded = self._hint_keys(target.count("/") + 1, frozenset(kinds))
        same_but_case = folded.get(target.lower(), [])
        found = scored(target, names, limit=_HINT_COUNT * 3, cutoff=_HINT_CUTOFF)
        best = found[0][1] if found else 0.0
        near = [keys[name] for name, score in found if score >= best - _HINT_SPREAD]
        result: list[str] = []
        for choice in [*same_but_case, *_begun(target, names, keys), *_worded(target, names, keys), *near]:
            if choice not in result:
                result.append(choice)
        return result[:_HINT_COUNT]

    def _hint_keys(self, depth: int, wanted: frozenset[str]) -> tuple[dict[str, str], list[str], dict[str, list[str]]]:
        """The names a target of `depth` segments is compared with (name -> id or alias to suggest), built once per
        depth and kinds."""
        cached = self._hints.get((depth, wanted))
        if cached is not None:
            return cached
        keys: dict[str, str] = {}
        for record_id in sorted(self.ids):
            kind = self.kinds.get(record_id)
            if wanted and kind is not None and kind not in wanted:
                continue
            keys.setdefault(record_id, record_id)
            parts = record_id.split("/")
            if len(parts) > depth:
                keys.setdefault("/".join(parts[-depth:]), record_id)
        for alias, owner in sorted(self.aliases.items()):
            kind = self.kinds.get(owner)
            if not wanted or kind is None or kind in wanted:
                keys.setdefault(alias, alias)
        folded: dict[str, list[str]] = {}
        for name, choice in keys.items():
            folded.setdefault(name.lower(), []).append(choice)
        self._hints[(depth, wanted)] = cached = (keys, sorted(keys), folded)
        return cached

    def hint(self, target: str, kinds: Iterable[str] = ()) -> Suggestion | None:
        """ "did you mean ...?" naming the closest ids and aliases, or None; computed once per target and kinds."""
        key = (target, tuple(kinds))
        if key not in self._hint_texts:
            close = self.closest(target, key[1])
            self._hint_texts[key] = suggest(target, close) if close else None
        return self._hint_texts[key]


_SHORTEST_BEGINNING = 3
"""A target this long or longer that begins a few names (`sd-speedup`) suggests them: it is a name half typed."""


def _begun(target: str, names: list[str], keys: dict[str, str]) -> list[str]:
    """The ids of the names (sorted) that `target` begins, when at most `_HINT_COUNT` do."""
    if len(target) < _SHORTEST_BEGINNING:
        return []
    begun: list[str] = []
    index = bisect.bisect_left(names, target)
    while index < len(names) and names[index].startswith(target) and len(begun) <= _HINT_COUNT:
        begun.append(keys[names[index]])
        index += 1
    return begun if len(begun) <= _HINT_COUNT else []


def _worded(target: str, names: list[str], keys: dict[str, str]) -> list[str]:
    """The ids of the names that hold `target` as whole words between dashes (`h100` in `nvidia-h100-sxm`), when at
    most `_HINT_COUNT` do."""
    if len(target) < _SHORTEST_BEGINNING:
        return []
    words = f"-{target}-"
    worded = list(dict.fromkeys(keys[name] for name in names if words in f"-{name}-"))
    return worded if len(worded) <= _HINT_COUNT else []

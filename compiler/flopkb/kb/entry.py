"""One record file as the pipeline holds it: its id, source, model and what stages derived from it."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from flopkb.kb.building import FILE_PARTS
from flopkb.load.models import FORMULA_ID, Record, formulas_of, measurements_of
from flopkb.load.source import Source


class RecordSummary(NamedTuple):
    """What other files need to know of a record file without its model: resolution's part of it, and its title."""

    kind: str | None
    """The record's kind; None when the file did not validate (its kind is not known)."""
    aliases: tuple[str, ...]
    """Its aliases: the model's, or the text items of its data's `aliases` when it did not validate."""
    formula_ids: tuple[str, ...] | None
    """Its formula ids in order; None when it did not validate."""
    measurement_ids: tuple[str, ...] | None = ()
    """A source's measurement ids in order; None when it did not validate."""
    title: str | None = None
    """The record's own title (None: untitled, or it did not validate), so that a rebuild lists every record
    without its model."""
    category: str | None = None
    """A flop's category (None for other kinds), so that a rebuild knows every category page without the models."""
    left_out_ids: tuple[str, ...] = ()
    """The ids of its formulas and measurements that validation left out (`flopkb.load.omitted`), each told wrong
    where it is: a link to one is not told to dangle as well."""

    @property
    def anchors(self) -> tuple[str, ...] | None:
        """What `[[id#anchor]]` may name: its formula ids and measurement ids, those of the items left out included;
        None when it did not validate."""
        if self.formula_ids is None or self.measurement_ids is None:
            return None
        return self.formula_ids + self.measurement_ids + self.left_out_ids


def summarize(source: Source | None, record: Record | None) -> RecordSummary:
    if record is not None:
        return RecordSummary(
            record.kind,
            tuple(record.aliases),
            tuple(formula.id for formula in formulas_of(record)),
            tuple(measurement.id for measurement in measurements_of(record)),
            record.title,
            getattr(record, "category", None),
            _left_out_ids(source) if source is not None and source.omitted else (),
        )
    listed = source.data.get("aliases") if source is not None else None
    return RecordSummary(
        None, tuple(alias for alias in listed if isinstance(alias, str)) if isinstance(listed, list) else (), None, None
    )


def _left_out_ids(source: Source) -> tuple[str, ...]:
    """The ids, as written, of the formulas and measurements validation left out (ids that are ids only)."""
    items = (item for field in ("formulas", "measurements") for item in source.left_out((field,)))
    ids = (item.get("id") for item in items if type(item) is dict)
    return tuple(dict.fromkeys(id for id in ids if type(id) is str and FORMULA_ID.fullmatch(id)))


class LaterRecord(Protocol):
    """What a deferred `Entry` asks for its model."""

    def record(self) -> Record | None: ...


class Entry:
    """One record file: its id (from its path), its source and its model, either absent when it failed.

    The load cache makes *deferred* entries (`Entry.deferred`) for unchanged
    files: their model is unpickled when first used, and their `summary`
    is known without it, so that stages which keep their results in
    `derived` never touch the models of files that did not change.
    """

    __slots__ = ("_later", "_record", "_summary", "derived", "digest", "id", "path", "source")

    def __init__(
        self,
        id: str,
        path: str,
        source: Source | None,
        record: Record | None,
        digest: bytes | None = None,
        derived: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.path = path
        self.source = source
        self._record = record
        self.digest = digest
        """The digest of the file's bytes when the load cache read it (`flopkb.pipeline.cache`): a key for a stage's
        own memo."""
        self.derived: dict[str, Any] = {} if derived is None else derived
        """What later stages computed from this file, by stage (picklable): the load cache keeps it while the file is
        unchanged."""
        self._summary: RecordSummary | None = None
        self._later: LaterRecord | None = None

    @classmethod
    def deferred(
        cls,
        id: str,
        path: str,
        source: Source | None,
        later: LaterRecord,
        summary: RecordSummary,
        digest: bytes | None,
        derived: dict[str, Any],
    ) -> Entry:
        """An entry whose model is `later.record()`, asked for when first needed."""
        entry = cls(id, path, source, None, digest, derived)
        entry._later = later
        entry._summary = summary
        return entry

    @property
    def record(self) -> Record | None:
        if self._later is not None:
            with FILE_PARTS:  # one model, unpickled once, for every thread that asks (`flopkb.kb.building`)
                later = self._later
                if later is not None:
                    self._record = later.record()
                    self._later = None  # after: a reader that finds no `_later` finds the model
        return self._record

    @property
    def summary(self) -> RecordSummary:
        """Kind, aliases, formula ids and title, without loading a deferred model."""
        if self._summary is None:
            self._summary = summarize(self.source, self.record)
        return self._summary

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        fields = ("id", "path", "source", "record", "digest", "derived")
        return all(getattr(self, name) == getattr(other, name) for name in fields)

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a class with __eq__ is; typeshed types it as a method

    def __repr__(self) -> str:
        return (
            f"Entry(id={self.id!r}, path={self.path!r}, source={self.source!r}, record={self.record!r}, "
            f"digest={self.digest!r}, derived={self.derived!r})"
        )

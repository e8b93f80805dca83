"""Which edit changed which value or claim: the blast radius of every edit.

A value of record R's formula computed on accelerator H changed because of
the edits it reads, and only those; so did the verdict of a claim on it,
which reads the same, and the source of the measurement it names:

- when R was added (or removed), that alone: every value of a new record is
  new because the record is;
- a spec of H it computes with (a `HardwareFigure` of its formula) whose
  value or basis differs: "`memory_bandwidth` of hw/h200: 4.8 TB/s → 4.9 TB/s";
  H itself when it was added, removed, or edited with no such spec;
- R, and the records whose formula it borrows by `ref` (the formula's
  `chain`), where an edit changed what they compute with (not their prose);
- otherwise (the vocabulary changed: every record was evaluated again),
  the settings.

An edit of another accelerator, of a source, or of a record R links to is
not one: the value does not read it. Nor is an edit of R's prose, though it
was edited in the same change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from flopkb.formulas.results import FormulaResult
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.memo import reached
from flopkb.load.models import AcceleratorRecord, Record
from flopkb.review.matching import Matching
from flopkb.review.model import Cause, Place, SpecEdit, ValueChange
from flopkb.review.wording import spec_what

SETTINGS = "settings"


class SpecChange(NamedTuple):
    edit: SpecEdit
    place: Place


def spec_changes(match: Matching) -> dict[tuple[str, str], SpecChange]:
    """Every spec whose value or basis differs between the sides, by (head accelerator id, parameter)."""
    found: dict[tuple[str, str], SpecChange] = {}
    for record_id in match.edited():
        before = match.base.entries[match.old(record_id)].record
        entry = match.head.entries[record_id]
        after = entry.record
        if not isinstance(before, AcceleratorRecord) or not isinstance(after, AcceleratorRecord):
            continue
        for parameter in sorted(before.specs.keys() | after.specs.keys()):
            was, now = before.specs.get(parameter), after.specs.get(parameter)
            if (was and (was.value, was.basis)) == (now and (now.value, now.basis)):
                continue
            line = 1
            if entry.source is not None:
                line = entry.source.position(("specs", parameter) if now is not None else ("id",))[0]
            edit = SpecEdit(
                record_id,
                parameter,
                None if was is None else _spec_text(was.value, was.basis),
                None if now is None else _spec_text(now.value, now.basis),
            )
            found[record_id, parameter] = SpecChange(edit, Place(entry.path, line))
    return found


def _spec_text(value: object, basis: str) -> str:
    return f"{value} ({basis})"


def _spec_id(accelerator: str, parameter: str) -> str:
    return f"spec:{accelerator}:{parameter}"


class Attribution:
    """The causes of changed values and statuses, and each cause's blast radius."""

    def __init__(
        self,
        match: Matching,
        changed: set[str],
        removed: Iterable[str],
        specs: dict[tuple[str, str], SpecChange],
        same_settings: bool,
    ) -> None:
        self.match = match
        self.changed = changed
        """Head ids of records edited or added."""
        self.removed = set(removed)
        self.specs = {_spec_id(*key): change for key, change in specs.items()}
        self.same_settings = same_settings
        self._reaching: dict[str, tuple[str, ...]] = {}

    def edits_reaching(self, record_id: str) -> tuple[str, ...]:
        """The edited, added or removed records that `record_id` (a head id, or a removed base id) computes with,
        itself included."""
        found = self._reaching.get(record_id)
        if found is None:
            match = self.match
            mine = {record_id} | set(reached(match.head, record_id) or ()) if record_id in match.head.entries else set()
            old = match.old(record_id)
            theirs = set(reached(match.base, old) or ()) | {old} if old in match.base.entries else set()
            candidates = mine | {match.new(other) for other in theirs}
            found = self._reaching[record_id] = tuple(
                sorted(other for other in candidates if other in self.changed or other in self.removed)
            )
        return found

    def causes_of(
        self,
        record_id: str,
        hardware: str | None,
        old: FormulaResult | None,
        new: FormulaResult | None,
        others: Iterable[str] = (),
    ) -> tuple[str, ...]:
        """The ids of the causes of a changed value (or claim verdict) of `record_id` computed on `hardware`: the edits
        it reads (see the module); `others`, more records it reads (the source of a claim's measurement)."""
        if self.match.old(record_id) not in self.match.base.entries or record_id in self.removed:
            return (f"record:{record_id}",)
        causes: list[str] = []
        if hardware is not None:
            used = {
                figure.parameter
                for result, rename in ((old, self.match.new), (new, str))
                if result is not None
                for figure in result.figures
                if rename(figure.accelerator) == hardware
            }
            causes = [_spec_id(hardware, parameter) for parameter in sorted(used)]
            causes = [cause for cause in causes if cause in self.specs]
        records = self._edits_read(record_id, None if causes else hardware, old, new, others)
        causes += [f"record:{other}" for other in records]
        if not causes:
            causes = [SETTINGS if not self.same_settings else f"record:{record_id}"]
        return tuple(causes)

    def edited_records(self, causes: Iterable[str]) -> tuple[str, ...]:
        """The records edited, added or removed that `causes` name (a spec's accelerator), sorted: the settings are
        none."""
        named = {
            self.specs[cause].edit.accelerator if cause in self.specs else cause.partition(":")[2] for cause in causes
        }
        return tuple(sorted(named & (self.changed | self.removed)))

    def _edits_read(
        self,
        record_id: str,
        hardware: str | None,
        old: FormulaResult | None,
        new: FormulaResult | None,
        others: Iterable[str],
    ) -> tuple[str, ...]:
        """The edited, added or removed records among `record_id`, the records its formula borrows by `ref`, `hardware`
        and `others`, sorted; an edit of a record but `hardware` that changed its prose alone is not one."""
        read = {record_id, *others} | {key[0] for key in (new.chain if new is not None else ())}
        read |= {self.match.new(key[0]) for key in (old.chain if old is not None else ())}
        found = {other for other in read if self._computes_differently(other)}
        if hardware is not None and (hardware in self.changed or hardware in self.removed):
            found.add(hardware)
        return tuple(sorted(found))

    def _computes_differently(self, record_id: str) -> bool:
        """Whether `record_id` (a head id, or a removed base id) was added or removed, or edited in what it computes
        with."""
        if record_id in self.removed:
            return True
        if record_id not in self.changed:
            return False
        before = self.match.base.entries.get(self.match.old(record_id))
        after = self.match.head.entries[record_id]
        return before is None or computing_part(before.record) != computing_part(after.record)

    def causes(self, values: Iterable[ValueChange]) -> tuple[Cause, ...]:
        """Every cause of `values`, with its blast radius, the ones that changed most values first."""
        counts: dict[str, int] = {}
        records: dict[str, set[str]] = {}
        for change in values:
            for cause in change.causes:
                counts[cause] = counts.get(cause, 0) + 1
                records.setdefault(cause, set()).add(change.record)
        found = []
        for cause, count in counts.items():
            touched = records[cause]
            record, what, place = self._describe(cause)
            spec = self.specs.get(cause)
            edit = None if spec is None else spec.edit
            found.append(
                Cause(cause, record, what, place, count, tuple(sorted(touched)), len(touched - self.changed), edit)
            )
        return tuple(sorted(found, key=lambda cause: (-cause.values, cause.id)))

    def _describe(self, cause: str) -> tuple[str, str, Place | None]:
        if cause == SETTINGS:
            return "", "the vocabulary changed: every formula was evaluated again", None
        spec = self.specs.get(cause)
        if spec is not None:
            return spec.edit.accelerator, spec_what(spec.edit), spec.place
        rest = cause.partition(":")[2]
        match = self.match
        if rest in self.removed:
            return rest, f"{rest} removed", record_place(match.base, rest)
        if rest in match.old_of:
            return rest, f"{match.old_of[rest]} renamed to {rest}", record_place(match.head, rest)
        verb = "edited" if match.old(rest) in match.base.entries else "added"
        return rest, f"{rest} {verb}", record_place(match.head, rest)


def computing_part(record: Record | None) -> tuple[object, ...] | None:
    """What of a record formulas and claims compute with (its own formulas, a source's measurements that claims
    name): every field but its prose."""
    if record is None:
        return None
    return tuple(getattr(record, name, None) for name in _COMPUTING_FIELDS)


_COMPUTING_FIELDS = ("kind", "formulas", "hardware_parameters", "affected_by_hardware", "measurements")


def record_place(kb: KnowledgeBase, record_id: str) -> Place | None:
    """The line of a record's id."""
    entry = kb.entries.get(record_id)
    if entry is None:
        return None
    line = entry.source.position(("id",))[0] if entry.source is not None else 1
    return Place(entry.path, line)

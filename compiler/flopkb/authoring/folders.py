"""The folder convention of `records/`: each kind's records under the plural of the kind (`flops/`, `sources/`).

Nothing checks it: an id is any path. `flopkb new` warns when an id leaves its kind's folder, as an author who
types `flopkb new flop h1` most likely meant `flops/h1`, and `flopkb mv` when a move takes a record out of it. The
editor's "create the missing record" creates a record where the convention has it (`created_as`).
"""

from __future__ import annotations

from dataclasses import dataclass

from flopkb.load.models import KINDS


def kind_folder(kind: str) -> str:
    """The folder under `records/` whose records are of `kind`: `flop` → `flops`."""
    return f"{kind}s"


def folder_kind(record_id: str) -> str | None:
    """The kind whose folder `record_id` is in (`flops/h1` → `flop`), or None: at the top, or in no kind's folder."""
    head, slash, _ = record_id.partition("/")
    return next((kind for kind in KINDS if slash and kind_folder(kind) == head), None)


def conventional_id(kind: str, record_id: str) -> str:
    """The id that follows the convention of `kind` for `record_id`: itself when in the kind's folder, else its path
    below its first folder in the kind's folder (`h1`, `facts/h1` → `flops/h1` for a flop)."""
    head, _, rest = record_id.partition("/")
    return record_id if rest and head == kind_folder(kind) else f"{kind_folder(kind)}/{rest or head}"


def folder_warning(kind: str, record_id: str, *, made: bool = True) -> str | None:
    """Why `record_id` does not follow the convention of `kind`, with the id that would (the `flopkb mv` that moves it
    there, when the record is `made`); None when it does."""
    to = conventional_id(kind, record_id)
    if to == record_id:
        return None
    head, _, rest = record_id.partition("/")
    where = f"in {head}/" if rest else "at the top of records/"
    follow = f"flopkb mv {record_id} {to}" if made else to
    return f"{kind} records live in {kind_folder(kind)}/ and {record_id} {'is' if made else 'would be'} {where}; " + (
        f"to follow the convention: {follow}"
    )


def move_warning(kind: str, old: str, new: str, *, dry_run: bool = False) -> str | None:
    """Why a move from `old` to `new` leaves the convention of `kind`, in a base that follows it (`old` does); for a
    `dry_run`, with the id that would follow it rather than a move of a record that is not there."""
    return folder_warning(kind, new, made=not dry_run) if folder_warning(kind, old) is None else None


@dataclass(frozen=True, slots=True)
class Creatable:
    """A record a link that resolves to nothing may be created as: its kind and id, and whether the link must be
    rewritten to that id to resolve to it."""

    kind: str
    record_id: str
    rewrite: bool


def created_as(target: str, kinds: tuple[str, ...], field: str) -> list[Creatable] | str:
    """The records the dangling `target` of `field` (which takes `kinds`; none: a prose link, any kind) may be created
    as where the convention has them, or why none (its kind is unknown). A short target is created in each kind's
    folder (the link resolves to it as written: its id ends with it); one in the folder of a kind the field takes
    as written; one elsewhere, where the field takes one kind, in that kind's folder, the link rewritten to it."""
    if "/" not in target:
        return [Creatable(kind, conventional_id(kind, target), False) for kind in kinds or KINDS]
    head = target.partition("/")[0]
    written = folder_kind(target)
    if written is not None and written in (kinds or KINDS):
        return [Creatable(written, target, False)]
    if len(kinds) == 1:
        return [Creatable(kinds[0], conventional_id(kinds[0], target), True)]
    folders = " or ".join(conventional_id(kind, target) for kind in kinds or KINDS)
    takes = f" {field} takes" if kinds else ""
    return (
        f"{head}/ is the folder of no kind{takes}: to create the record, write its id in its kind's folder ({folders})"
    )

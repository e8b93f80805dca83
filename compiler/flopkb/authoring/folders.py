"""The folder convention of `records/`: each kind's records under the plural of the kind (`flops/`, `sources/`).

Nothing checks it: an id is any path. `flopkb new` warns when an id leaves its kind's folder, as an author who
types `flopkb new flop h1` most likely meant `flops/h1`, and `flopkb mv` when a move takes a record out of it.
"""

from __future__ import annotations


def kind_folder(kind: str) -> str:
    """The folder under `records/` whose records are of `kind`: `flop` → `flops`."""
    return f"{kind}s"


def folder_warning(kind: str, record_id: str, *, made: bool = True) -> str | None:
    """Why `record_id` does not follow the convention of `kind`, with the id that would (the `flopkb mv` that moves it
    there, when the record is `made`); None when it does."""
    folder = kind_folder(kind)
    head, _, rest = record_id.partition("/")
    if rest and head == folder:
        return None
    where = f"in {head}/" if rest else "at the top of records/"
    to = f"{folder}/{rest or head}"
    follow = f"flopkb mv {record_id} {to}" if made else to
    return f"{kind} records live in {folder}/ and {record_id} {'is' if made else 'would be'} {where}; " + (
        f"to follow the convention: {follow}"
    )


def move_warning(kind: str, old: str, new: str, *, dry_run: bool = False) -> str | None:
    """Why a move from `old` to `new` leaves the convention of `kind`, in a base that follows it (`old` does); for a
    `dry_run`, with the id that would follow it rather than a move of a record that is not there."""
    return folder_warning(kind, new, made=not dry_run) if folder_warning(kind, old) is None else None

"""A record's data as if some of its list items were absent: the items validation left out, each malformed as a whole.

A list item left out (`flopkb.load.validate`) is reported where it stands and
taken out of its list, so that its list's other items are still checked. Every
later stage reads the record's model, in which the item is absent, and its
source (`flopkb.load.source.Source.without`), whose data and positions are the
file's without the item: an index into a list is one in the model and in the
source's data alike, and its position is the one of that item in the file. The
items are named by their paths in the file's data (`Path`, ending in an index), each with its value as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar, cast

from flopkb.load.builder import Path, Positions

Omitted = Mapping[Path, Any]
NOTHING_OMITTED: Omitted = MappingProxyType({})
_T = TypeVar("_T")


def without_items(data: Any, items: Omitted, at: Path = ()) -> Any:
    """`data` without the list items at `items` (copied where they are, shared elsewhere)."""
    if not any(path[: len(at)] == at for path in items):
        return data
    if isinstance(data, dict):
        return {key: without_items(value, items, (*at, key)) for key, value in data.items()}
    if isinstance(data, list):
        kept = (index for index in range(len(data)) if (*at, index) not in items)
        return [without_items(data[index], items, (*at, index)) for index in kept]
    return data


def file_loc(data: Any, loc: tuple[Any, ...], items: Omitted) -> tuple[Any, ...]:
    """`loc`, a place in `without_items(data, items)` as pydantic tells it (union labels and a missing key
    included), as the place in `data`."""
    node, path, found = data, cast(Path, ()), []
    for part in loc:
        if isinstance(node, list) and isinstance(part, int):
            part = _kept(path, part, items)
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node, path = node[part], (*path, part)
        found.append(part)
    return tuple(found)


def written_path(path: Path, items: Omitted) -> Path:
    """The path in `data` of the part at `path` in `without_items(data, items)`."""
    found: list[str | int] = []
    for part in path:
        found.append(_kept(tuple(found), part, items) if isinstance(part, int) else part)
    return tuple(found)


def _kept(at: Path, index: int, items: Omitted) -> int:
    """The index in the list at `at` of its `index`-th item that is not left out."""
    for left_out in _left_out(at, items):
        index += left_out <= index
    return index


def left_out(at: Path, items: Omitted) -> list[Any]:
    """The items left out of the list at `at`, as written, in order."""
    return [items[(*at, index)] for index in _left_out(at, items)]


def _left_out(at: Path, items: Omitted) -> list[int]:
    """The indexes of the items left out of the list at `at`, in order."""
    return sorted(item[-1] for item in items if item[:-1] == at and isinstance(item[-1], int))


def view_path(path: Path, items: Omitted) -> Path | None:
    """The path in `without_items(data, items)` of the part of `data` at `path`; None when it is in an item left
    out."""
    found: list[str | int] = []
    for depth, part in enumerate(path):
        if isinstance(part, int):
            if path[: depth + 1] in items:
                return None
            part -= sum(1 for left_out in _left_out(path[:depth], items) if left_out < part)
        found.append(part)
    return tuple(found)


def remapped(positions: Positions, items: Omitted) -> Positions:
    """`positions` of the file's data as those of `without_items(data, items)`."""
    return Positions(_moved(positions.values, items), _moved(positions.keys, items), _moved(positions.spans, items))


def _moved(table: dict[Path, _T], items: Omitted) -> dict[Path, _T]:
    return {moved: at for path, at in table.items() if (moved := view_path(path, items)) is not None}

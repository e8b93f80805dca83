"""A record's data as if some of its list items were absent: the items validation left out, each malformed as a whole.

It also names the fields validation left out, each wrong (a claim's `where: [1]`), so that a later stage does not
judge what the model holds in its place (the field's default), which the schema already told wrong (`touches`);
the data keeps those fields as written.

A list item left out (`flopkb.load.validate`) is reported where it stands and
taken out of its list, so that its list's other items are still checked. Every
later stage reads the record's model, in which the item is absent, and its
source (`flopkb.load.source.Source.without`), whose data and positions are the
file's without the item: an index into a list is one in the model and in the
source's data alike, and its position is the one of that item in the file. The
items are named by their paths in the file's data (`Path`, ending in an index), each with its value as written.

A file may hold many thousands of items left out, and every position of the
file is moved past them: the items are indexed once, by their list, so that
moving a path costs a look-up and a binary search, not a scan of the items.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast

from flopkb.load.builder import Path, Positions

_T = TypeVar("_T")
_NO_LIST: tuple[list[int], list[int]] = ([], [])


def prefixes(paths: Iterable[Path]) -> set[Path]:
    """Every path that is one of `paths` or holds one."""
    return {path[:depth] for path in paths for depth in range(len(path) + 1)}


class Omitted(Mapping[Path, Any]):
    """The list items left out, and the fields left out: each one's path in the file's data to its value as written."""

    __slots__ = ("_holding", "_items", "_lists")

    def __init__(self, items: Mapping[Path, Any] | None = None) -> None:
        self._items: dict[Path, Any] = dict(items or {})
        lists: dict[Path, list[int]] = {}
        for path in self._items:
            if isinstance(index := path[-1], int):
                lists.setdefault(path[:-1], []).append(index)
        # Per list, its indexes left out in order, and each one minus its rank: the items kept before it.
        self._lists: dict[Path, tuple[list[int], list[int]]] = {}
        for at, indexes in lists.items():
            indexes.sort()
            self._lists[at] = (indexes, [index - rank for rank, index in enumerate(indexes)])
        self._holding = prefixes(self._items)

    def __getitem__(self, path: Path) -> Any:
        return self._items[path]

    def __iter__(self) -> Iterator[Path]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __reduce__(self) -> tuple[type[Omitted], tuple[dict[Path, Any]]]:
        return Omitted, (self._items,)

    @property
    def has_items(self) -> bool:
        """Whether a list item is left out (not only fields)."""
        return bool(self._lists)

    def indexes(self, at: Path) -> list[int]:
        """The indexes of the items left out of the list at `at`, in order."""
        return self._lists.get(at, _NO_LIST)[0]

    def touches(self, path: Path) -> bool:
        """Whether the part at `path` (in the file's data) was left out, is inside one that was, or holds one."""
        return path in self._holding or any(path[:depth] in self._items for depth in range(1, len(path)))

    def kept(self, at: Path, index: int) -> int:
        """The index in the list at `at` of its `index`-th item that is not left out."""
        return index + bisect_right(self._lists.get(at, _NO_LIST)[1], index)


NOTHING_OMITTED = Omitted()


def without(data: Any, paths: Collection[Path], of: type[dict[Any, Any]] | type[list[Any]]) -> Any:
    """`data` without the entries at `paths` of its mappings (`of` dict: their keys) or of its lists (`of` list:
    their items), copied where they are, shared elsewhere."""
    holding = prefixes(paths)

    def copied(node: Any, at: Path) -> Any:
        if at not in holding or not isinstance(node, (dict, list)):
            return node
        entries = node.items() if isinstance(node, dict) else enumerate(node)
        dropping = isinstance(node, of)
        kept = [(key, copied(value, (*at, key))) for key, value in entries if not (dropping and (*at, key) in paths)]
        return dict(kept) if isinstance(node, dict) else [value for _, value in kept]

    return copied(data, ())


def without_items(data: Any, items: Omitted) -> Any:
    """`data` without the list items at `items` (copied where they are, shared elsewhere)."""
    return without(data, items, list)


def with_items(data: Any, items: Omitted) -> Any:
    """`without_items(data, items)`, the file's data read without the list items at `items`, with them back in their
    lists: the file's data (its lists copied where an item goes back, the rest shared)."""
    holding = prefixes(path[:-1] for path in items if isinstance(path[-1], int))

    def copied(node: Any, at: Path) -> Any:
        if at not in holding:
            return node
        if isinstance(node, dict):
            return {key: copied(value, (*at, key)) for key, value in node.items()}
        if not isinstance(node, list):
            return node
        kept = iter(node)
        whole = []
        for index in range(len(node) + len(items.indexes(at))):
            path = (*at, index)
            whole.append(items[path] if path in items else copied(next(kept), path))
        return whole

    return copied(data, ())


def file_loc(data: Any, loc: tuple[Any, ...], items: Omitted) -> tuple[Any, ...]:
    """`loc`, a place in `without_items(data, items)` as pydantic tells it (union labels and a missing key
    included), as the place in `data`."""
    node, path, found = data, cast(Path, ()), []
    for part in loc:
        if isinstance(node, list) and isinstance(part, int):
            part = items.kept(path, part)
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
        found.append(items.kept(tuple(found), part) if isinstance(part, int) else part)
    return tuple(found)


def left_out(at: Path, items: Omitted) -> list[Any]:
    """The items left out of the list at `at`, as written, in order."""
    return [items[(*at, index)] for index in items.indexes(at)]


def view_path(path: Path, items: Omitted) -> Path | None:
    """The path in `without_items(data, items)` of the part of `data` at `path`; None when it is in an item left
    out."""
    found: list[str | int] = []
    for depth, part in enumerate(path):
        if isinstance(part, int):
            if path[: depth + 1] in items:
                return None
            part -= bisect_left(items.indexes(path[:depth]), part)
        found.append(part)
    return tuple(found)


def remapped(positions: Positions, items: Omitted) -> Positions:
    """`positions` of the file's data as those of `without_items(data, items)`."""
    return Positions(_moved(positions.values, items), _moved(positions.keys, items), _moved(positions.spans, items))


def _moved(table: dict[Path, _T], items: Omitted) -> dict[Path, _T]:
    return {moved: at for path, at in table.items() if (moved := view_path(path, items)) is not None}

"""A file's links as written are kept in the load cache pickled on their own: made and pickled only when the cache
writes a shard or someone asks for them (a diff, which writes none, never makes them for an unchanged file without
suspects), and unpickled only when asked for."""

from __future__ import annotations

import pickle
from pathlib import Path

from flopkb.links.cached import MEMO, LazyPickle
from kbfixture import H100, compile_warm, write_kb

UNPICKLED: list[str] = []


class Recorded:
    """Says when it is unpickled."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __setstate__(self, state: dict[str, str]) -> None:
        UNPICKLED.append(state["name"])
        self.__dict__.update(state)


def test_a_lazy_pickle_is_unpickled_only_when_its_value_is_asked_for() -> None:
    UNPICKLED.clear()
    held = {"links": LazyPickle(lambda: (Recorded("a"),))}
    stored = pickle.loads(pickle.dumps(held))
    assert UNPICKLED == []
    assert [item.name for item in stored["links"].value] == ["a"]
    assert UNPICKLED == ["a"]
    again = pickle.loads(pickle.dumps(stored))  # pickled again as it was read: not unpickled to be pickled
    assert UNPICKLED == ["a"]
    assert [item.name for item in again["links"].value] == ["a"]


def test_a_lazy_pickle_is_made_only_when_its_value_is_asked_for_or_it_is_pickled() -> None:
    made: list[str] = []

    def make() -> tuple[str, ...]:
        made.append("made")
        return ("a",)

    held = LazyPickle(make)
    assert made == []
    assert held.value == ("a",) and held.value == ("a",)
    assert made == ["made"]
    unasked = LazyPickle(make)
    assert pickle.loads(pickle.dumps(unasked)).value == ("a",)
    assert made == ["made", "made"]


def test_the_links_a_cached_check_keeps_come_back_from_the_cache(tmp_path: Path) -> None:
    fact = "id: facts/a\nkind: fact\ntitle: A\ncategory: memory-bandwidth\nstatement: See [[hw/h100]].\n"
    write_kb(tmp_path, {"records/facts/a.yaml": fact, "records/hw/h100.yaml": H100})
    first = compile_warm(tmp_path)
    kept = first.entries["facts/a"].derived[MEMO]
    assert isinstance(kept, LazyPickle)
    second = compile_warm(tmp_path)
    assert second.entries["facts/a"].derived[MEMO].value == kept.value
    assert [link.resolved for link in second.links["facts/a"]] == ["hw/h100"]

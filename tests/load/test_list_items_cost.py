"""Leaving out malformed list items one at a time costs linear work: each item left out was once looked for among all
the others, for every part of the record and every position of its file (8,000 numbers in a formula's `expect` took
9 s, 16,000 took 43 s)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cost import calls, growth
from flopkb.load.omitted import Omitted, view_path, with_items, without_items, written_path
from flopkb.load.source import Source, parse
from flopkb.load.validate import validate_record
from flopkb.load.vocabulary import Vocabulary

VOCABULARY = Vocabulary({}, {}, {"measured": "Measured.", "derived": "Derived."})
HEAD = "id: facts/many\nkind: fact\nstatement: s\nformulas:\n  - id: f\n    expr: 2 * 3\n    expect:\n"
SHAPES = {
    "numbers": lambda index: f"      - {index}\n",
    "numbers and valid claims": lambda index: f"      - {index}\n" if index % 2 else "      - value: 6\n",
    # Every other item a claim that breaks its own rule once its wrong `value` is left out: left out a round later.
    "numbers and claims": lambda index: f"      - {index}\n" if index % 2 else "      - {value: [6], where: 5}\n",
    # Not left out but read as the ref it stands for, each in place of what is written.
    "refs in brackets": lambda index: '      - {value: 6, hardware: "[[hw/a]]"}\n',
}


def _source(size: int, item: Callable[[int], str]) -> Source:
    source, _ = parse(
        HEAD + "".join(item(index) for index in range(size)) + "      - value: 6\n", "records/facts/m.yaml"
    )
    assert source is not None
    return source


def _checked(source: Source) -> Callable[[], object]:
    """Validate the record, and place each item of the list it was read without, in the file and in its data."""

    def check() -> object:
        record, diagnostics, read = validate_record(source, VOCABULARY, "facts/many")
        kept = read.data["formulas"][0]["expect"]
        paths = [("formulas", 0, "expect", index) for index in range(len(kept))]
        return record, diagnostics, [(read.position(path), read.written(path)) for path in paths]

    return check


@pytest.mark.parametrize("item", SHAPES.values(), ids=SHAPES.keys())
def test_leaving_out_many_items_costs_linear_work(item: Callable[[int], str]) -> None:
    assert growth(lambda size: _checked(_source(size, item)), 1000) < 2.5


def test_20000_items_left_out_cost_a_bounded_work_each() -> None:
    source = _source(20_000, SHAPES["numbers"])
    record, diagnostics, read = validate_record(source, VOCABULARY, "facts/many")
    assert record is not None and len(diagnostics) == 20_000
    last = diagnostics[-1]
    assert (last.line, last.column) == (20_007, 9)
    assert last.message == "formulas[0].expect[19999]: expected a mapping, got the number 19999"
    assert read.position(("formulas", 0, "expect", 0)) == (20_008, 9)
    assert calls(_checked(source)) < 250 * 20_000  # about 190 an item; with a scan of the items left out, 10,000


@given(st.integers(0, 40), st.sets(st.integers(0, 39)))
def test_an_index_left_out_is_moved_as_the_list_without_it_has_it(size: int, gone: set[int]) -> None:
    at = ("formulas", 0, "expect")
    items = Omitted({(*at, index): index for index in gone if index < size})
    kept = [index for index in range(size) if index not in gone]
    for index in range(size):
        view = view_path((*at, index), items)
        assert view == (None if index in gone else (*at, kept.index(index)))
    assert [written_path((*at, index), items)[-1] for index in range(len(kept))] == kept
    assert without_items({"formulas": [{"expect": list(range(size))}]}, items)["formulas"][0]["expect"] == kept


@given(st.lists(st.tuples(st.booleans(), st.lists(st.booleans(), max_size=5)), max_size=5))
def test_the_items_left_out_go_back_where_they_were(formulas: list[tuple[bool, list[bool]]]) -> None:
    """Formulas, each left out or kept, and the claims of those kept, each left out or kept: the data read without
    them, with them back (`with_items`), is the file's."""
    data = {
        "formulas": [{"id": index, "expect": list(range(len(claims)))} for index, (_, claims) in enumerate(formulas)]
    }
    items = Omitted(
        {("formulas", index): data["formulas"][index] for index, (gone, _) in enumerate(formulas) if gone}
        | {
            ("formulas", index, "expect", claim): claim
            for index, (gone, claims) in enumerate(formulas)
            for claim, left in enumerate(claims)
            if left and not gone
        }
    )
    assert with_items(without_items(data, items), items) == data

"""`fmt` of a huge list costs linear work (90,000 tags took 30 s)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from cost import growth
from flopkb.authoring import fmt
from flopkb.authoring.comments import Comments, Path
from flopkb.authoring.fmt import format_text

PATH = "records/facts/a.yaml"
HEAD = "kind: flop\nid: flops/a\ncategory: arithmetic-intensity\ndescription: D.\n"


@pytest.mark.parametrize(
    "tags",
    [
        lambda n: "tags: [" + ", ".join(f"t{index}" for index in range(n)) + "]\n",
        lambda n: "tags:\n" + "".join(f"  - t{index}  # {index}\n" for index in range(n)),
    ],
    ids=["flow", "block-with-comments"],
)
def test_a_huge_list_is_formatted_in_linear_work(tags: Callable[[int], str]) -> None:
    def formatting(size: int) -> Callable[[], object]:
        text = HEAD + tags(size)
        return lambda: format_text(text, "records/flops/a.yaml")

    assert growth(formatting, 300) < 2.3


def test_many_commented_rows_with_lists_of_ids_are_formatted_in_linear_work() -> None:
    """Whether a comment sits inside a list of ids was asked of every comment, for each list (1 MB of such rows:
    9 of 14 s)."""

    def formatting(size: int) -> Callable[[], object]:
        rows = "".join(
            f"  # formula {index}\n  - id: f{index}\n    expr: a\n    unit: FLOP\n    inputs: {{a: 1}}\n"
            f"    hardware: [h{index}]\n"
            for index in range(size)
        )
        text = "id: facts/a\nkind: fact\ntitle: T\nstatement: S.\nformulas:\n" + rows
        return lambda: format_text(text, "records/facts/a.yaml")

    assert growth(formatting, 600) < 2.3


PATHS = st.lists(st.sampled_from(["a", "b", 0, 1]), max_size=4).map(tuple)


@given(st.lists(PATHS, max_size=6), st.lists(PATHS, max_size=6), PATHS)
def test_a_path_encloses_a_comment_when_a_commented_slot_is_strictly_below_it(
    before: list[Path], after: list[Path], path: Path
) -> None:
    comments = Comments(before={key: ["# c"] for key in before}, after={key: [] for key in after})
    below = any(len(key) > len(path) and key[: len(path)] == path for key in (*before, *after))
    assert (path in comments.enclosing()) == below


def test_a_flow_list_fits_in_100_columns_with_its_key() -> None:
    """The line `tags: [...]` is what must fit, not the list alone."""
    items = [f"tag{index:02d}" for index in range(14)]  # `[tag00, ..., tag13]` is 98 columns, 104 with its key
    fits = [*items[:-2], "t1", "t2"]
    for listed, flow in ((items, False), (fits, True)):
        line = f"tags: [{', '.join(listed)}]"
        assert (len(line) <= 100) == flow
        formatted = format_text(HEAD + line + "\n", "records/flops/a.yaml")
        assert isinstance(formatted, str)
        assert (line in formatted.splitlines()) == flow
        assert ("tags:\n" + "".join(f"  - {item}\n" for item in listed) in formatted) != flow


def test_a_models_fields_are_worked_out_once_not_for_each_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """How a field holds rows and whether it is a list of ids come from its annotation (typing's introspection: a
    quarter of the canonical form's time for 10,000 formulas): once a model, whatever the number of rows."""
    looked_at: list[object] = []
    shape = fmt._shape

    def counted(annotation: object) -> tuple[str | None, type[BaseModel] | None]:
        looked_at.append(annotation)
        return shape(annotation)

    monkeypatch.setattr(fmt, "_shape", counted)
    fmt._field_kinds.cache_clear()
    rows = "".join(f"  - id: f{index}\n    expr: a\n    unit: FLOP\n    hardware: [h{index}]\n" for index in range(300))
    assert isinstance(format_text(f"id: facts/a\nkind: fact\ntitle: T\nstatement: S.\nformulas:\n{rows}", PATH), str)
    assert 0 < len(looked_at) < 100

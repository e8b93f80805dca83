"""`fmt` of a huge list costs linear work (90,000 tags took 30 s)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cost import growth
from flopkb.authoring.fmt import format_text

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

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

"""The one way messages name a place in a record: `formulas[0].expect[1].value`, as readers write it."""

from __future__ import annotations

from collections.abc import Iterable


def field_path(parts: Iterable[str | int]) -> str:
    """`("formulas", 0, "unit")` → `formulas[0].unit`; an empty path is `""`."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text

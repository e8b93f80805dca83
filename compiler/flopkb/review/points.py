"""A formula's values keyed by where they were computed: (accelerator, sweep point), comparable across two sides."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from flopkb.formulas.evaluate import QuantityLike
from flopkb.formulas.results import FormulaResult
from flopkb.formulas.units import format_value

Where = tuple[str | None, tuple[tuple[str, str], ...]]
"""(accelerator id, the sweep point's inputs as exact text): equal on both sides when the point is the same."""
Value = tuple[float, str, str]
"""(value, unit, the sweep point as shown)."""


def evaluations_of(result: FormulaResult | None, rename: Callable[[str], str]) -> dict[Where, Value]:
    """Every value of `result`, keyed by accelerator (renamed by `rename`: a base side's ids as the head's) and
    point."""
    if result is None:
        return {}
    found: dict[Where, Value] = {}
    for evaluation in result.evaluations:
        hardware = None if evaluation.hardware is None else rename(evaluation.hardware)
        exact = tuple((name, str(value)) for name, value in evaluation.point)
        found[hardware, exact] = (evaluation.value, evaluation.unit, point_text(evaluation.point))
    return found


def point_text(point: Iterable[tuple[str, QuantityLike | str]]) -> str:
    """`B=1, T=2 TB`: a sweep point (or a claim's pinned inputs) as `flopkb eval` shows inputs; '' for none.

    (`format_value`, as `flopkb.formulas.eval_table.show` does, without importing its terminal tables.)"""
    return ", ".join(f"{name}={value if isinstance(value, str) else format_value(value)}" for name, value in point)


NOISE = 1e-9
"""Values closer than this, relatively, are the same: evaluating in another order may round differently."""


def same(was: Value, now: Value) -> bool:
    """Whether two values of one point are the same: one unit, equal up to `NOISE`."""
    return was[1] == now[1] and (was[0] == now[0] or abs(now[0] - was[0]) <= NOISE * max(abs(was[0]), abs(now[0])))


def relative_change(was: Value | None, now: Value | None) -> float | None:
    """(now - was) / |was|, when both exist in one unit and `was` is not 0."""
    if was is None or now is None or was[1] != now[1] or was[0] == 0 or not math.isfinite(was[0]):
        return None
    return (now[0] - was[0]) / abs(was[0])

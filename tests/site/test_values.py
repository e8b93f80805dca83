"""Computed values as readers see them (`flopkb.site.pages.values`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flopkb.site.pages.values import show_value


@given(st.floats(min_value=0.5, max_value=2.0).filter(lambda v: abs(v - 1) > 1e-11))
def test_a_ratio_that_is_not_1_never_reads_1(value: float) -> None:
    shown = show_value(value, "1")
    assert shown != "1"
    assert float(shown) != 1


def test_values_keep_four_digits_when_they_are_not_near_1() -> None:
    assert show_value(1.0003125, "") == "1.0003"
    assert show_value(0.714285, "") == "0.7143"
    assert show_value(295.28, "") == "295.3"
    assert show_value(1.0, "") == "1"

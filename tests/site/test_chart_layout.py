"""Text on the charts: widths, wrapped titles, labels that overlap nothing (`flopkb.site.charts.layout`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.site.charts.layout import Box, fit_text, place_labels, text_width, wrap_text

BOUNDS = Box(0, 0, 440, 320)
words = st.text(alphabet=st.characters(max_codepoint=0x2FF, blacklist_categories=("Z", "C")), min_size=1, max_size=14)


def test_text_width_is_dejavu_sans() -> None:
    assert text_width("W", 10) == pytest.approx(9.89)
    assert text_width("W", 10, bold=True) == pytest.approx(11.03)
    assert text_width("ii", 12) == pytest.approx(2 * 0.278 * 12)
    assert text_width("—", 12) == 12  # outside ASCII: an em


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=30), st.floats(min_value=60, max_value=700), st.booleans())
def test_wrapped_text_keeps_every_word_and_fits(parts: list[str], width: float, bold: bool) -> None:
    text = " ".join(parts)
    lines = wrap_text(text, 15, width, bold)
    for line in lines:
        assert text_width(line, 15, bold) <= width + 1e-9
    if all(text_width(word, 15, bold) <= width for word in parts):
        assert " ".join(lines).split() == parts  # nothing cut: a title shows whole


def test_a_long_text_gets_an_ellipsis_only_when_lines_run_out() -> None:
    assert fit_text("NVIDIA B200 (HGX B200)", 13, 1000) == "NVIDIA B200 (HGX B200)"
    short = fit_text("a rather long accelerator name that cannot fit", 13, 120)
    assert short.endswith("…") and text_width(short, 13) <= 120
    assert wrap_text("one two three four five six", 12, 40, max_lines=2)[-1].endswith("…")


points = st.tuples(st.floats(min_value=0, max_value=440), st.floats(min_value=0, max_value=320))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(points, st.floats(min_value=5, max_value=120)), min_size=1, max_size=25))
def test_placed_labels_never_overlap_each_other_or_the_points(items) -> None:
    anchors = [point for point, _ in items]
    widths = [width for _, width in items]
    markers = [Box(x - 6, y - 6, x + 6, y + 6) for x, y in anchors]
    labels = place_labels(anchors, widths, 12, bounds=BOUNDS, obstacles=markers)
    assert len(labels) == len(anchors)
    for i, label in enumerate(labels):
        assert abs(label.box.x1 - label.box.x0 - widths[i]) < 1e-9
        assert not any(label.box.overlaps(marker) for marker in markers)
        for other in labels[i + 1 :]:
            assert not label.box.overlaps(other.box)
        if label.leader is None:
            assert label.box.inside(BOUNDS)  # beside its point, within the plot
    assert labels == place_labels(anchors, widths, 12, bounds=BOUNDS, obstacles=markers)  # deterministic


def test_crowded_points_get_leader_lines() -> None:
    # Four ridge points within 20 px of each other, as on the compare page.
    anchors = [(338, 124), (347, 104), (348, 133), (331, 133)]
    markers = [Box(x - 6, y - 6, x + 6, y + 6) for x, y in anchors]
    labels = place_labels(anchors, [22.0] * 4, 12, bounds=BOUNDS, obstacles=markers)
    assert any(label.leader is not None for label in labels)
    for i, label in enumerate(labels):
        assert all(not label.box.overlaps(other.box) for other in labels[i + 1 :])

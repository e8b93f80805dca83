"""Measurements drawn over a formula's sweep chart (`flopkb.site.charts.svg.line_chart_svg`'s overlay).

Each measurement is a marker at (x, y) in the colour of the line it belongs
to: a filled diamond when its basis is `measured`, a hollow triangle when
`simulated`. Each carries an SVG `<title>` (its source, the place in the
source, the value and the model's value), and the legend gets one row per
basis and line, naming the sources and places it stands for. Pure, like the
charts: the same marks give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from flopkb.site.charts.layout import Box, fit_text
from flopkb.site.charts.scales import _f, _text
from flopkb.site.charts.svg import INK, MUTED, _style

_ROW = 38
"""Legend row of a measurement: its basis, then its sources and places."""


@dataclass(frozen=True, slots=True)
class MeasuredMark:
    """A measurement at (x, y); `label` names it in the legend, `title` is its tooltip; `series` is the style of its
    line (`flopkb.site.charts.svg.style_of`)."""

    x: float
    y: float
    basis: str
    label: str
    title: str
    series: int | None = None


class MeasuredOverlay:
    """The marks that can be drawn on the chart's axes (finite; positive on a logarithmic axis), ready to draw."""

    def __init__(self, marks: Sequence[MeasuredMark], *, log_x: bool = False, log_y: bool = False) -> None:
        self.marks = [
            mark
            for mark in marks
            if math.isfinite(mark.x)
            and math.isfinite(mark.y)
            and not (log_x and mark.x <= 0)
            and not (log_y and mark.y <= 0)
        ]
        self.points = [(mark.x, mark.y) for mark in self.marks]
        rows: dict[tuple[str, int | None], tuple[MeasuredMark, list[str]]] = {}
        for mark in self.marks:
            labels = rows.setdefault((mark.basis, mark.series), (mark, []))[1]
            if mark.label not in labels:
                labels.append(mark.label)
        self.rows = list(rows.values())
        self.legend_height = len(self.rows) * _ROW

    def draw(self, out: list[str], xa: Callable[[float], float], ya: Callable[[float], float], legend: Box) -> None:
        if not self.marks:
            return
        out.append('<g class="measured">')
        for mark in self.marks:
            out.append(f'<g class="mark mark--{_text(mark.basis)}" data-basis="{_text(mark.basis)}">')
            out.append(f"<title>{_text(mark.title)}</title>")
            out.append(_shape(mark, xa(mark.x), ya(mark.y)))
            out.append("</g>")
        out.append("</g>")
        for k, (mark, labels) in enumerate(self.rows):
            detail = "; ".join(labels)
            out.append(f'<g class="legend-mark" transform="translate({_f(legend.x0)} {_f(legend.y0 + k * _ROW)})">')
            out.append(f"<title>{_text(mark.basis)}: {_text(detail)}</title>")
            out.append(_shape(mark, 11, 6))
            out.append(f'<text x="30" y="10" fill="{INK}" font-size="13" font-weight="600">{_text(mark.basis)}</text>')
            shown = fit_text(detail, 12, legend.x1 - legend.x0 - 42)
            out.append(f'<text x="30" y="26" fill="{MUTED}" font-size="12">{_text(shown)}</text>')
            out.append("</g>")


class RegimeOverlay:
    """The points of a sweep outside its formula's regime (`valid_when`): a grey ring on each, one legend row."""

    def __init__(self, points: Sequence[tuple[float, float]], condition: str) -> None:
        self.points = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
        self.condition = condition
        self.legend_height = _ROW if self.points else 0

    def draw(self, out: list[str], xa: Callable[[float], float], ya: Callable[[float], float], legend: Box) -> None:
        if not self.points:
            return
        out.append('<g class="outside-regime">')
        out.append(f"<title>outside the model's regime: valid_when {_text(self.condition)} does not hold</title>")
        out.extend(_ring(xa(x), ya(y)) for x, y in self.points)
        out.append("</g>")
        out.append(f'<g class="legend-mark" transform="translate({_f(legend.x0)} {_f(legend.y0)})">')
        out.append(_ring(11, 6))
        out.append(
            f'<text x="30" y="10" fill="{INK}" font-size="13" font-weight="600">outside the model\'s regime</text>'
        )
        detail = fit_text(f"valid_when {self.condition} does not hold", 12, legend.x1 - legend.x0 - 42)
        out.append(f'<text x="30" y="26" fill="{MUTED}" font-size="12">{_text(detail)}</text>')
        out.append("</g>")


class Overlays:
    """Several overlays drawn in turn, their legend rows one after the other."""

    def __init__(self, *overlays: MeasuredOverlay | RegimeOverlay) -> None:
        self.overlays = overlays
        self.points = [point for overlay in overlays for point in overlay.points]
        self.legend_height = sum(overlay.legend_height for overlay in overlays)

    def draw(self, out: list[str], xa: Callable[[float], float], ya: Callable[[float], float], legend: Box) -> None:
        for overlay in self.overlays:
            overlay.draw(out, xa, ya, legend)
            top = legend.y0 + overlay.legend_height
            legend = Box(legend.x0, top, legend.x1, top)


def _ring(px: float, py: float) -> str:
    return f'<circle cx="{_f(px)}" cy="{_f(py)}" r="6" fill="none" stroke="{MUTED}" stroke-width="2"/>'


def _shape(mark: MeasuredMark, px: float, py: float) -> str:
    colour = _style(mark.series)[0] if mark.series is not None else INK
    if mark.basis == "simulated":
        d = f"M{_f(px)} {_f(py - 6)} L{_f(px + 5.5)} {_f(py + 4)} L{_f(px - 5.5)} {_f(py + 4)} Z"
        return f'<path d="{d}" fill="#ffffff" stroke="{colour}" stroke-width="2"/>'
    d = f"M{_f(px)} {_f(py - 6)} L{_f(px + 6)} {_f(py)} L{_f(px)} {_f(py + 6)} L{_f(px - 6)} {_f(py)} Z"
    return f'<path d="{d}" fill="{colour}" stroke="#ffffff" stroke-width="1.5"/>'

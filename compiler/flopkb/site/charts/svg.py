"""Static SVG charts, drawn by hand: rooflines and formula sweeps.

Every function here is pure: the same arguments give the same string, byte for
byte (coordinates have a fixed number of decimals, element ids are derived
from a hash of the input, nothing reads the clock or the locale). The output
is a complete `<svg>` element without an XML declaration, so it can be written
to a `.svg` file (UTF-8) or inlined into a page.

Every text that comes from a record (series names, titles, labels) is escaped;
link targets are checked (`http(s)` or relative only). Series values must be
finite and, on a logarithmic axis, positive.

Embedding: `<img src="x.svg" alt="...">` shows the chart anywhere; links inside
the chart (roofline `href`) only work when the file is embedded with
`<object type="image/svg+xml" data="x.svg">` or inlined. Links carry
`target="_top"` so that inside an `<object>` they replace the page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from flopkb.site.charts.layout import NARROW, WIDE, Box, Layout, fit_text, place_labels, text_width, wrap_text
from flopkb.site.charts.scales import (
    _Axis,
    _chart_id,
    _decades,
    _f,
    _finite_positive,
    _linear_range,
    _linear_ticks,
    _log_span,
    _log_ticks,
    _safe_href,
    _sig,
    _text,
    _tick_label,
    _y_range,
    format_si,
)
from flopkb.site.charts.series import NEST, mark, over_each_other, runs

__all__ = [
    "NARROW",
    "WIDE",
    "Layout",
    "LineSeries",
    "Overlay",
    "RooflineSeries",
    "format_si",
    "line_chart_svg",
    "roofline_svg",
    "svg_size",
]


@dataclass(frozen=True, slots=True)
class RooflineSeries:
    """One accelerator's roof: `peak_flops` in FLOP/s, `bandwidth` in byte/s."""

    name: str
    peak_flops: float
    bandwidth: float
    href: str | None = None
    style: int | None = None
    """Its colour and dash (`style_of`): one per accelerator across the site; None: its place in the chart."""

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) at which the two roofs meet."""
        return self.peak_flops / self.bandwidth


@dataclass(frozen=True, slots=True)
class LineSeries:
    """One curve of a sweep: (x, y) points, in any order (drawn sorted by x)."""

    name: str
    points: list[tuple[float, float]] = field(default_factory=list)
    style: int | None = None
    """Its colour and dash (`style_of`): one per accelerator across the site; None: its place in the chart."""


class Overlay(Protocol):
    """What a line chart draws over its lines (`flopkb.site.charts.marks`): points its axes must include, legend rows
    below the lines' legend, and the drawing itself."""

    @property
    def points(self) -> Sequence[tuple[float, float]]: ...

    @property
    def legend_height(self) -> float: ...

    def draw(self, out: list[str], xa: Callable[[float], float], ya: Callable[[float], float], legend: Box) -> None:
        """Draw; the legend rows go from `legend`'s top left corner, their text at most its width less 42."""


# ---------------------------------------------------------------------------
# Style. Colour-blind-safe (Okabe–Ito, with black replaced by a dark grey and
# yellow dropped: too pale on white); after eight series the dash pattern
# changes so that every series stays distinguishable.

PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#4d4d4d")
DASHES = ("", "7 4", "2 3")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#d8dee4"
GRID_MINOR = "#eef1f4"

_T = 52  # top edge of the plot area under a one-line title
_PH = 320  # plot height
_LEG_ROW = 54  # legend row height of a roofline (three lines per entry)
_LEG_ROW_LINE = 24  # legend row height of a line chart (one line per entry)
_TITLE_SIZE = 15
_TITLE_LINE = 19
_TICK_SIZE = 12  # the smallest text of a chart; the site never shows a chart below 11/12 of its size
_LABEL_SIZE = 13  # axis labels


@dataclass(frozen=True, slots=True)
class _Frame:
    """Where a chart's parts go: the title's lines above, the plot area, the axis labels, the legend column."""

    title: tuple[str, ...]
    y_label: tuple[str, ...]
    left: float
    top: float
    width: float
    legend: bool
    layout: Layout

    @property
    def legend_top(self) -> float:
        """Where the legend's first entry goes: beside the plot's top, or below the x axis' label."""
        return self.bottom + 62 if self.layout.legend_below else self.top + 6

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + _PH


def _frame(
    title: str, y_label: str, ytick_labels: Sequence[str], *, legend: bool, layout: Layout, note: bool = False
) -> _Frame:
    """The layout of a chart: the whole title wrapped above the plot (and a line for a note under it), the y
    label in up to two lines beside the plot, the plot as wide as the tick labels and the legend leave."""
    title_lines = tuple(wrap_text(title, _TITLE_SIZE, layout.width - 32, bold=True))
    y_lines = tuple(wrap_text(y_label, _LABEL_SIZE, _PH, max_lines=2))
    ticks = max((text_width(label, _TICK_SIZE) for label in ytick_labels), default=0)
    left = max(60.0, 16 + 16 * len(y_lines) + 12 + ticks)
    right = layout.legend_x - 28 if legend and not layout.legend_below else layout.width - 24
    top = _T + _TITLE_LINE * (len(title_lines) - 1) + (16 if note else 0)
    return _Frame(title_lines, y_lines, left, top, right - left, legend, layout)


def _grid_and_axes(
    out: list[str],
    frame: _Frame,
    xa: _Axis,
    ya: _Axis,
    *,
    xticks: list[tuple[float, str]],
    yticks: list[tuple[float, str]],
    xminor: list[float],
    yminor: list[float],
    x_label: str,
) -> None:
    x0, x1 = frame.left, frame.right
    y0, y1 = frame.bottom, frame.top
    out.append(f'<g stroke="{GRID_MINOR}" stroke-width="1">')
    for v in xminor:
        x = _f(xa(v))
        out.append(f'<line x1="{x}" y1="{_f(y1)}" x2="{x}" y2="{_f(y0)}"/>')
    for v in yminor:
        y = _f(ya(v))
        out.append(f'<line x1="{_f(x0)}" y1="{y}" x2="{_f(x1)}" y2="{y}"/>')
    out.append("</g>")
    out.append(f'<g stroke="{GRID}" stroke-width="1">')
    for v, _ in xticks:
        x = _f(xa(v))
        out.append(f'<line x1="{x}" y1="{_f(y1)}" x2="{x}" y2="{_f(y0)}"/>')
    for v, _ in yticks:
        y = _f(ya(v))
        out.append(f'<line x1="{_f(x0)}" y1="{y}" x2="{_f(x1)}" y2="{y}"/>')
    out.append("</g>")
    out.append(
        f'<rect class="plot-frame" x="{_f(x0)}" y="{_f(y1)}" width="{_f(frame.width)}" height="{_f(_PH)}" '
        f'fill="none" stroke="{MUTED}" stroke-width="1"/>'
    )
    out.append(f'<g fill="{MUTED}" font-size="{_TICK_SIZE}" text-anchor="middle">')
    for v, label in xticks:
        out.append(f'<text x="{_f(xa(v))}" y="{_f(y0 + 18)}">{_text(label)}</text>')
    out.append("</g>")
    out.append(f'<g fill="{MUTED}" font-size="{_TICK_SIZE}" text-anchor="end">')
    for v, label in yticks:
        out.append(f'<text x="{_f(x0 - 7)}" y="{_f(ya(v) + 4)}">{_text(label)}</text>')
    out.append("</g>")
    x_text = fit_text(x_label, _LABEL_SIZE, frame.width)
    out.append(
        f'<text x="{_f(x0 + frame.width / 2)}" y="{_f(y0 + 42)}" text-anchor="middle" '
        f'fill="{INK}" font-size="{_LABEL_SIZE}">{_text(x_text)}</text>'
    )
    cy = frame.top + _PH / 2
    for k, line in enumerate(frame.y_label):
        lx = 16 + 16 * k
        out.append(
            f'<text x="{lx}" y="{_f(cy)}" text-anchor="middle" fill="{INK}" font-size="{_LABEL_SIZE}" '
            f'transform="rotate(-90 {lx} {_f(cy)})">{_text(line)}</text>'
        )


def _open_svg(out: list[str], cid: str, height: float, frame: _Frame, title: str, desc: str) -> None:
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {frame.layout.width} {_f(height)}" '
        f'width="{frame.layout.width}" height="{_f(height)}" role="img" aria-labelledby="{cid}-t {cid}-d" '
        f'font-family="{_text(FONT)}" font-size="12" class="flopkb-chart-svg">'
    )
    out.append(f'<title id="{cid}-t">{_text(title)}</title>')
    out.append(f'<desc id="{cid}-d">{_text(desc)}</desc>')
    out.append(f'<rect width="{frame.layout.width}" height="{_f(height)}" rx="8" fill="#ffffff"/>')
    lines = "".join(
        f'<tspan x="16" y="{30 + _TITLE_LINE * k}">{_text(line)}</tspan>' for k, line in enumerate(frame.title)
    )
    out.append(f'<text class="chart-title" fill="{INK}" font-size="{_TITLE_SIZE}" font-weight="600">{lines}</text>')


def style_of(series: RooflineSeries | LineSeries, place: int) -> int:
    """The style a series is drawn in: its own, else its place in the chart."""
    return series.style if series.style is not None else place


def _style(i: int) -> tuple[str, str]:
    colour = PALETTE[i % len(PALETTE)]
    dash = DASHES[(i // len(PALETTE)) % len(DASHES)]
    return colour, (f' stroke-dasharray="{dash}"' if dash else "")


def _legend_entry(
    out: list[str],
    frame: _Frame,
    i: int,
    name: str,
    detail: Sequence[str],
    href: str | None,
    *,
    marker: bool,
    row: float,
    style: int,
) -> None:
    colour, dash = _style(style)
    y = frame.legend_top + i * row
    text = frame.layout.legend_text
    body = [
        f'<g transform="translate({_f(frame.layout.legend_x)} {_f(y)})">',
        f"<title>{_text(' — '.join([name, *detail]))}</title>",
        f'<line x1="0" y1="6" x2="22" y2="6" stroke="{colour}" stroke-width="3"{dash}/>',
    ]
    if marker:
        body.append(mark(style, 11, 6, 3.5, colour))
    body.append(
        f'<text x="30" y="10" fill="{INK}" font-size="13" font-weight="600">'
        f"{_text(fit_text(name, 13, text, bold=True))}</text>"
    )
    for k, line in enumerate(detail):
        shown = _text(fit_text(line, 12, text))
        body.append(f'<text x="30" y="{26 + 15 * k}" fill="{MUTED}" font-size="12">{shown}</text>')
    body.append("</g>")
    if href:
        out.append(f'<a href="{_text(_safe_href(href))}" target="_top">')
        out.extend(body)
        out.append("</a>")
    else:
        out.extend(body)


def _close(out: list[str]) -> str:
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Roofline


def roofline_svg(series: Sequence[RooflineSeries], *, title: str, layout: Layout = WIDE) -> str:
    """A log-log roofline chart: attainable FLOP/s against arithmetic intensity.

    Each series is drawn as its roof (bandwidth slope, then the flat compute
    peak) with the ridge point marked and labelled (labels placed where they
    overlap no other label or marker: `flopkb.site.charts.layout`); the legend
    gives peak, bandwidth and ridge. Series are sorted by name (then values)
    so that the output does not depend on the caller's order; colours follow
    that order. Raises ValueError on an empty list, a non-finite or
    non-positive value, or an unsafe `href`.
    """
    if not series:
        raise ValueError("roofline_svg needs at least one series")
    items = []
    for s in series:
        peak = _finite_positive(s.peak_flops, f"peak_flops of {s.name!r}")
        bw = _finite_positive(s.bandwidth, f"bandwidth of {s.name!r}")
        if s.href is not None:
            _safe_href(s.href)
        items.append(RooflineSeries(str(s.name), peak, bw, s.href, s.style))
    items.sort(key=lambda s: (s.name, s.peak_flops, s.bandwidth, s.href or ""))

    ridges = [s.ridge for s in items]
    xlo, xhi = _decades(min(ridges) / 30, max(ridges) * 10)
    ylo, yhi = _decades(min(s.bandwidth * xlo for s in items), max(s.peak_flops for s in items) * 1.6)
    if math.log10(yhi) - math.log10(ylo) < 2:
        ylo = yhi / 100
    xmaj, xmin = _log_ticks(xlo, xhi)
    ymaj, ymin = _log_ticks(ylo, yhi)
    yticks = [(v, format_si(v)) for v in ymaj]
    frame = _frame(title, "Attainable performance (FLOP/s)", [label for _, label in yticks], legend=True, layout=layout)
    xa = _Axis(xlo, xhi, True, frame.left, frame.right)
    ya = _Axis(ylo, yhi, True, frame.bottom, frame.top)

    height = max(frame.bottom + 60, frame.legend_top + len(items) * _LEG_ROW + 4)
    cid = _chart_id("roofline", title, [(s.name, s.peak_flops, s.bandwidth, s.href) for s in items])
    desc = "Roofline chart, log-log. " + "; ".join(
        f"{s.name}: peak {format_si(s.peak_flops, 'FLOP/s')}, bandwidth {format_si(s.bandwidth, 'B/s')}, "
        f"ridge at {_sig(s.ridge)} FLOP/byte"
        for s in items
    )
    out: list[str] = []
    _open_svg(out, cid, height, frame, title, desc)
    _grid_and_axes(
        out,
        frame,
        xa,
        ya,
        xticks=[(v, _tick_label(v)) for v in xmaj],
        yticks=yticks,
        xminor=xmin,
        yminor=ymin,
        x_label="Arithmetic intensity (FLOP/byte)",
    )

    # One series: "ridge 295 FLOP/B" by the point. Several: the number alone (the legend spells it out).
    ridge_points = [(xa(s.ridge), ya(s.peak_flops)) for s in items]
    texts = [f"ridge {_sig(s.ridge)} FLOP/B" if len(items) == 1 else _sig(s.ridge) for s in items]
    labels = place_labels(
        ridge_points,
        [text_width(text, _TICK_SIZE, bold=True) for text in texts],
        _TICK_SIZE,
        bounds=Box(frame.left + 2, frame.top + 2, frame.right - 2, frame.bottom - 2),
        obstacles=[Box(x - 6, y - 6, x + 6, y + 6) for x, y in ridge_points],
    )
    styles = [style_of(s, i) for i, s in enumerate(items)]
    for i, s in enumerate(items):
        colour, dash = _style(styles[i])
        # The slope enters the plot at xlo unless it is below ylo there.
        x_start = max(xlo, ylo / s.bandwidth)
        pts = [(xa(x_start), ya(s.bandwidth * x_start)), ridge_points[i], (xa(xhi), ya(s.peak_flops))]
        d = "M" + " L".join(f"{_f(px)} {_f(py)}" for px, py in pts)
        rx, ry = ridge_points[i]
        out.append(f'<g class="roof" data-series="{i}">')
        out.append(
            f"<title>{_text(s.name)}: peak {_text(format_si(s.peak_flops, 'FLOP/s'))}, "
            f"bandwidth {_text(format_si(s.bandwidth, 'B/s'))}, ridge {_text(_sig(s.ridge))} FLOP/byte</title>"
        )
        out.append(
            f'<line x1="{_f(rx)}" y1="{_f(ry)}" x2="{_f(rx)}" y2="{_f(frame.bottom)}" '
            f'stroke="{colour}" stroke-width="1" stroke-dasharray="3 3" opacity="0.6"/>'
        )
        out.append(
            f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2.5" '
            f'stroke-linejoin="round" stroke-linecap="round"{dash}/>'
        )
        out.append(f'<circle cx="{_f(rx)}" cy="{_f(ry)}" r="4.5" fill="#ffffff" stroke="{colour}" stroke-width="2.5"/>')
        out.append("</g>")
    # Labels after every roof, so that no line is drawn over one.
    out.append('<g class="ridge-labels">')
    for i, label in enumerate(labels):
        colour = _style(styles[i])[0]
        if label.leader is not None:
            x1, y1, x2, y2 = label.leader
            out.append(
                f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" stroke="{colour}" stroke-width="1"/>'
            )
        out.append(
            f'<text x="{_f(label.x)}" y="{_f(label.baseline)}" fill="{colour}" '
            f'font-size="{_TICK_SIZE}" font-weight="600" stroke="#ffffff" stroke-width="3" paint-order="stroke" '
            f'stroke-linejoin="round">{_text(texts[i])}</text>'
        )
    out.append("</g>")

    for i, s in enumerate(items):
        detail = (
            f"{format_si(s.peak_flops, 'FLOP/s')} · {format_si(s.bandwidth, 'B/s')}",
            f"ridge {_sig(s.ridge)} FLOP/byte",
        )
        _legend_entry(out, frame, i, s.name, detail, s.href, marker=True, row=_LEG_ROW, style=styles[i])
    return _close(out)


# ---------------------------------------------------------------------------
# Line chart (formula sweeps)


def line_chart_svg(
    series: Sequence[LineSeries],
    *,
    x_label: str,
    y_label: str,
    title: str,
    log_x: bool = False,
    log_y: bool = False,
    overlay: Overlay | None = None,
    layout: Layout = WIDE,
) -> str:
    """A line chart of one or more sweeps, and what `overlay` draws over the lines (measurements).

    Series are drawn in the order given (pass them in a deterministic order:
    sweep order or sorted by name); each series' points are sorted by x.
    Points with a non-finite coordinate, or a non-positive one on a log axis,
    are left out. A linear y axis includes zero, unless the data spread over
    less than a fifth of their magnitude (1.0 to 1.1, say): then it spans the
    data and says that it does not start at 0. Both axes include the overlay's
    points. The legend is left out when there is one series and nothing over
    it (the title says what it is). Raises ValueError when no series has a
    plottable point.
    """
    cleaned: list[tuple[str, list[tuple[float, float]]]] = []
    styles = [style_of(s, i) for i, s in enumerate(series)]
    for s in series:
        pts = []
        for x, y in s.points:
            x, y = float(x), float(y)
            if not (math.isfinite(x) and math.isfinite(y)):
                continue
            if (log_x and x <= 0) or (log_y and y <= 0):
                continue
            pts.append((x, y))
        pts.sort()
        cleaned.append((str(s.name), pts))
    allpts = [p for _, pts in cleaned for p in pts]
    if not allpts:
        raise ValueError("line_chart_svg: no plottable point in any series")
    if overlay is not None:
        allpts += overlay.points

    xs = [p[0] for p in allpts]
    ys = [p[1] for p in allpts]
    if log_x:
        xlo, xhi = _log_span(min(xs), max(xs))
        xmaj, xminor = _log_ticks(xlo, xhi)
        xticks = [(v, _tick_label(v)) for v in xmaj]
    else:
        xlo, xhi, step = _linear_range(min(xs), max(xs))
        xticks = [(v, _tick_label(v, step)) for v in _linear_ticks(xlo, xhi, step)]
        xminor = []
    off_zero = False
    if log_y:
        ylo, yhi = _decades(min(ys), max(ys))
        ymaj, yminor = _log_ticks(ylo, yhi)
        yticks = [(v, _tick_label(v)) for v in ymaj]
    else:
        ylo, yhi, step, off_zero = _y_range(ys)
        yticks = [(v, _tick_label(v, step)) for v in _linear_ticks(ylo, yhi, step)]
        yminor = []
    legend = len(cleaned) > 1 or bool(overlay is not None and overlay.points)
    frame = _frame(title, y_label, [label for _, label in yticks], legend=legend, layout=layout, note=off_zero)
    xa = _Axis(xlo, xhi, log_x, frame.left, frame.right)
    ya = _Axis(ylo, yhi, log_y, frame.bottom, frame.top)

    extra = overlay.legend_height if overlay is not None else 0
    height = frame.bottom + 60
    if legend:
        height = max(height, frame.legend_top + len(cleaned) * _LEG_ROW_LINE + extra + 12)
    cid = _chart_id("line", title, x_label, y_label, log_x, log_y, cleaned, overlay.points if overlay else ())
    desc = f"Line chart of {y_label} against {x_label}. " + "; ".join(
        f"{name}: {len(pts)} points"
        + (f", y from {_sig(min(p[1] for p in pts))} to {_sig(max(p[1] for p in pts))}" if pts else "")
        for name, pts in cleaned
    )
    if off_zero:
        desc += f" The y axis starts at {_tick_label(ylo, step)}, not 0."
    out: list[str] = []
    _open_svg(out, cid, height, frame, title, desc)
    _grid_and_axes(out, frame, xa, ya, xticks=xticks, yticks=yticks, xminor=xminor, yminor=yminor, x_label=x_label)
    if off_zero:
        _axis_break(out, frame)
    out.append(
        f'<clipPath id="{cid}-clip"><rect x="{_f(frame.left - 6)}" y="{_f(frame.top - 6)}" '
        f'width="{_f(frame.width + 12)}" height="{_PH + 12}"/></clipPath>'
    )
    # Series lying on each other (the same values on several accelerators): the first drawn is the widest there, each
    # later one narrower over it, so that every series shows (distinct marks as well).
    pixels = [[(xa(x), ya(y)) for x, y in pts] for _, pts in cleaned]
    over = over_each_other(pixels)
    for i, (name, _pts) in enumerate(cleaned):
        colour, dash = _style(styles[i])
        out.append(f'<g class="line" data-series="{i}" clip-path="url(#{cid}-clip)">')
        out.append(f"<title>{_text(name)}</title>")
        for width, run in runs(pixels[i], over[i]):
            d = "M" + " L".join(f"{_f(px)} {_f(py)}" for px, py in run)
            out.append(
                f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{_f(width)}" '
                f'stroke-linejoin="round" stroke-linecap="round"{dash}/>'
            )
        out.append("</g>")
    # Every series' marks over every line.
    for i, (name, pts) in enumerate(cleaned):
        if len(pts) > 40:
            continue
        colour = _style(styles[i])[0]
        out.append(f'<g class="points" data-series="{i}" clip-path="url(#{cid}-clip)">')
        out.append(f"<title>{_text(name)}</title>")
        for (x, y), (px, py), above in zip(pts, pixels[i], over[i], strict=True):
            title = f"{name}: {_sig(x, 4)}, {_sig(y, 4)}"
            out.append(mark(styles[i], px, py, 3.5 + NEST * len(above), colour, title))
        out.append("</g>")
    if legend:
        for i, (name, pts) in enumerate(cleaned):
            _legend_entry(out, frame, i, name, (), None, marker=len(pts) <= 40, row=_LEG_ROW_LINE, style=styles[i])
    if overlay is not None:
        top = frame.legend_top + len(cleaned) * _LEG_ROW_LINE
        overlay.draw(out, xa, ya, Box(layout.legend_x, top, layout.legend_x + layout.legend_text + 42, top))
    return _close(out)


def _axis_break(out: list[str], frame: _Frame) -> None:
    """A zigzag across the foot of the y axis, and a note over the plot: this axis does not start at 0."""
    x, y = frame.left, frame.bottom - 10
    out.append(
        f'<g class="axis-break"><path d="M{_f(x - 6)} {_f(y + 3)} L{_f(x - 2)} {_f(y - 1)} L{_f(x + 2)} {_f(y + 3)} '
        f'L{_f(x + 6)} {_f(y - 1)}" fill="none" stroke="{MUTED}" stroke-width="1.5"/>'
        f'<text x="{_f(frame.right)}" y="{_f(frame.top - 8)}" text-anchor="end" fill="{MUTED}" '
        f'font-size="{_TICK_SIZE}">y axis does not start at 0</text></g>'
    )


def svg_size(svg: str) -> tuple[int, int]:
    """(width, height) of a chart made here, for `<img width=.. height=..>`."""
    m = re.search(r'<svg [^>]*?width="([0-9.]+)" height="([0-9.]+)"', svg)
    if not m:
        raise ValueError("not a flopkb chart: no width/height on the <svg> element")
    return round(float(m.group(1))), round(float(m.group(2)))

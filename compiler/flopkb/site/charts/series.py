"""How a line chart's series are drawn so that none hides another (`flopkb.site.charts.svg.line_chart_svg`).

Each series' point marks have a shape of its own (`MARKS`, by its style, as its colour is); where later series lie
on a series (`over_each_other`), its line and marks are drawn wider and larger (`runs`, `NEST`), so that each shows
as an outline around the ones drawn over it. Pure: the same points give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from flopkb.site.charts.scales import _f, _text

MARKS = ("circle", "square", "triangle", "diamond", "triangle-down")
"""The shape of a series' point markers, by its style: series that share a colour family or lie on each other
still differ by their marks."""
COINCIDE = 3.0
"""Pixels: points of two series nearer than this at the same x lie on each other."""
NEST = 2.0
"""Pixels: how much wider a line, and larger a mark, is drawn for each series drawn over it there."""


def mark(style: int, px: float, py: float, r: float, colour: str, title: str = "") -> str:
    """A series' point marker (its shape: `MARKS`) of radius about `r`, hollow, centred at (px, py), with `title`
    (escaped) as its tooltip."""
    shape = MARKS[style % len(MARKS)]
    paint = f'data-shape="{shape}" fill="#ffffff" stroke="{colour}" stroke-width="2"'
    if shape == "circle":
        tag, where = "circle", f'cx="{_f(px)}" cy="{_f(py)}" r="{_f(r)}"'
    elif shape == "square":
        a = r * 0.9
        tag, where = "rect", f'x="{_f(px - a)}" y="{_f(py - a)}" width="{_f(2 * a)}" height="{_f(2 * a)}"'
    else:
        corners = {
            "triangle": ((0, -1.25), (1.1, 0.75), (-1.1, 0.75)),
            "diamond": ((0, -1.25), (1.2, 0), (0, 1.25), (-1.2, 0)),
            "triangle-down": ((0, 1.25), (1.1, -0.75), (-1.1, -0.75)),
        }[shape]
        tag, where = "path", 'd="M' + " L".join(f"{_f(px + dx * r)} {_f(py + dy * r)}" for dx, dy in corners) + ' Z"'
    if not title:
        return f"<{tag} {where} {paint}/>"
    return f"<{tag} {where} {paint}><title>{_text(title)}</title></{tag}>"


def over_each_other(pixels: Sequence[Sequence[tuple[float, float]]]) -> list[list[frozenset[int]]]:
    """For each point of each series (in pixels), the series drawn after it that have a point on it
    (`COINCIDE`): a line or mark with others over it is drawn wider, so that it shows around them."""
    at: dict[float, list[tuple[int, float]]] = {}
    for i, points in enumerate(pixels):
        for px, py in points:
            at.setdefault(round(px, 1), []).append((i, py))
    return [
        [frozenset(j for j, qy in at[round(px, 1)] if j > i and abs(qy - py) < COINCIDE) for px, py in points]
        for i, points in enumerate(pixels)
    ]


def runs(
    points: Sequence[tuple[float, float]], over: Sequence[frozenset[int]]
) -> list[tuple[float, list[tuple[float, float]]]]:
    """A series' line as runs of segments of one width: 2.5 px, and `NEST` more for each series that lies on the
    segment (on both its ends)."""
    runs: list[tuple[float, list[tuple[float, float]]]] = []
    for k in range(1, len(points)):
        width = 2.5 + NEST * len(over[k - 1] & over[k])
        if runs and runs[-1][0] == width:
            runs[-1][1].append(points[k])
        else:
            runs.append((width, [points[k - 1], points[k]]))
    return runs

"""Text on the charts: how wide it is, titles wrapped to fit, and labels placed where they overlap nothing; and the
two widths a chart is drawn at (`Layout`: `WIDE`, `NARROW`, the legend beside the plot or below it).

Charts are static SVG, so text is measured here, at build time, without a
browser. Widths are those of DejaVu Sans (its advance widths, in thousandths of
an em, regular and bold), the widest of the sans-serif faces a reader's
`system-ui` resolves to: text measured with it fits with any of the others
(Segoe UI, Roboto, Helvetica, Arial are narrower). Characters outside ASCII
count as a full em.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "NARROW",
    "WIDE",
    "Box",
    "Label",
    "Layout",
    "fit_text",
    "place_labels",
    "text_box",
    "text_width",
    "wrap_text",
]

# DejaVu Sans, characters 32 (space) to 126 (~).
_REGULAR = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636, 636,
    636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863,
    748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635,
    615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636,
    337, 636, 838,
)  # fmt: skip
_BOLD = (
    348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365, 696, 696, 696, 696, 696, 696, 696,
    696, 696, 696, 400, 400, 838, 838, 838, 580, 1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995,
    837, 850, 733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 500, 500, 675, 716, 593, 716,
    678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687, 716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712,
    365, 712, 838,
)  # fmt: skip
_ASCENT = 0.93
_DESCENT = 0.24
"""DejaVu Sans' ascent and descent, in em: the box a browser gives a line of text."""


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of `text` set in `size` px (DejaVu Sans, the widest common face)."""
    table = _BOLD if bold else _REGULAR
    total = 0
    for ch in text:
        code = ord(ch)
        total += table[code - 32] if 32 <= code < 127 else 1000
    return total * size / 1000


def fit_text(text: str, size: float, width: float, bold: bool = False) -> str:
    """`text` on one line, shortened with "…" when wider than `width`."""
    text = " ".join(text.split())
    if text_width(text, size, bold) <= width:
        return text
    while text and text_width(text + "…", size, bold) > width:
        text = text[:-1]
    return text.rstrip() + "…"


def wrap_text(text: str, size: float, width: float, bold: bool = False, max_lines: int = 0) -> list[str]:
    """`text` broken between words into lines no wider than `width` (a word wider than that stands alone on its
    line, cut to fit); with `max_lines`, the last line is shortened with "…" when the text does not fit."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size, bold) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    lines = [fit_text(line, size, width, bold) for line in lines] or [""]
    if max_lines and len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], fit_text(" ".join(lines[max_lines - 1 :]) + " …", size, width, bold)]
    return lines


@dataclass(frozen=True, slots=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, other: Box) -> bool:
        return other.x0 <= self.x0 and self.x1 <= other.x1 and other.y0 <= self.y0 and self.y1 <= other.y1


def text_box(x: float, baseline: float, width: float, size: float) -> Box:
    """The box of a line of text starting at `x` on `baseline`."""
    return Box(x, baseline - _ASCENT * size, x + width, baseline + _DESCENT * size)


@dataclass(frozen=True, slots=True)
class Label:
    """Where a label goes: its text starts at `x` on `baseline`; `leader` is the line from its point to it, if any."""

    x: float
    baseline: float
    box: Box
    leader: tuple[float, float, float, float] | None = None


_GAP = 8.0
"""Room between a point and its label."""


def place_labels(
    points: Sequence[tuple[float, float]],
    widths: Sequence[float],
    size: float,
    *,
    bounds: Box,
    obstacles: Sequence[Box] = (),
) -> list[Label]:
    """A place for each point's label (of `widths[i]` px at `size` px) that overlaps no other label and no
    obstacle (the points' markers, say) and stays within `bounds`.

    Points are labelled from the top down. Each label tries the places around
    its point (below right, below left, right, left, above right, above left);
    when all are taken it goes down the column under its point, right then
    left, to the first free row, with a leader line from the point. Labels that
    find no free place at all (a chart more crowded than its size allows) go
    below the lowest one. Deterministic: the same points give the same places.
    """
    height = (_ASCENT + _DESCENT) * size
    taken = list(obstacles)
    placed: dict[int, Label] = {}
    order = sorted(range(len(points)), key=lambda i: (points[i][1], points[i][0], i))
    for i in order:
        px, py = points[i]
        width = widths[i]
        near = [
            (px + _GAP / 2, py + _GAP),
            (px - _GAP / 2 - width, py + _GAP),
            (px + _GAP, py - height / 2),
            (px - _GAP - width, py - height / 2),
            (px + _GAP / 2, py - _GAP - height),
            (px - _GAP / 2 - width, py - _GAP - height),
        ]
        far = [
            (x, py + _GAP + step * (height + 2))
            for step in range(1, 60)
            for x in (px + 1.5 * _GAP, px - 1.5 * _GAP - width)
        ]
        label = None
        for k, (x, top) in enumerate(near + far):
            box = Box(x, top, x + width, top + height)
            if box.inside(bounds) and not any(box.overlaps(other) for other in taken):
                leader = None if k < len(near) else _leader(px, py, box)
                label = Label(x, top + _ASCENT * size, box, leader)
                break
        if label is None:
            lowest = max((other.y1 for other in taken), default=py)
            box = Box(px + _GAP, lowest + 2, px + _GAP + width, lowest + 2 + height)
            label = Label(box.x0, box.y0 + _ASCENT * size, box, _leader(px, py, box))
        taken.append(label.box)
        placed[i] = label
    return [placed[i] for i in range(len(points))]


def _leader(px: float, py: float, box: Box) -> tuple[float, float, float, float]:
    """From just outside the point's marker to the nearer top corner of the label."""
    x = box.x0 if box.x0 >= px else box.x1
    dx, dy = x - px, box.y0 - py
    length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
    return (px + dx / length * 6, py + dy / length * 6, x, box.y0)


@dataclass(frozen=True, slots=True)
class Layout:
    """A chart's width, and where its legend goes: a column right of the plot, or rows below it (`NARROW`, for a
    phone's column, where the wide chart's text would be too small to read)."""

    width: int
    legend_below: bool

    @property
    def legend_x(self) -> float:
        """The left edge of the legend's entries."""
        return 16 if self.legend_below else 544

    @property
    def legend_text(self) -> float:
        """The width of a legend entry's text."""
        return self.width - self.legend_x - 30 - 12


WIDE = Layout(780, legend_below=False)
NARROW = Layout(420, legend_below=True)

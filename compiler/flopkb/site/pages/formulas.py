"""Formulas on a record's page: typeset, evaluated per accelerator and sweep point, their figures and claims.

For each formula of a flop or fact (as compiled by `flopkb.formulas.stage`), the
view a template renders:

- the expression as LaTeX (`Expr.to_latex()`, typeset by KaTeX in the browser)
  and as text (searchable), its unit, its inputs, where a `ref` took it from,
  and which accelerators it is evaluated on and why;
- the results as a table with units: one column per accelerator (or, without
  hardware, the last swept input pivoted into columns when it has a few
  values), one row per sweep point; long sweeps are cut at `MAX_ROWS` rows,
  with a pointer to `flopkb eval`;
- a line chart of a sweep (static SVG, written under `charts/`): the first
  swept input on x, one line per accelerator (or per value of the second swept
  input), further swept inputs held at their first value; its y axis is named
  by the formula's title (`quantity_name`) and unit, its one line (no hardware,
  one swept input) by the formula's id;
- every hardware figure used, linked to the spec row of its accelerator's page;
- every claim (`expect`), with its status.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from flopkb.formulas.units import (
    format_number,
    format_quantity,
    registry,
)
from flopkb.site.charts.marks import MeasuredOverlay, Overlays, RegimeOverlay
from flopkb.site.charts.svg import NARROW, WIDE, Layout, LineSeries, line_chart_svg, svg_size
from flopkb.site.pages.measurements import measured_marks, measured_rows
from flopkb.site.pages.values import show_input, show_value

if TYPE_CHECKING:
    from flopkb.formulas.evaluate import Evaluation
    from flopkb.formulas.results import Claim, FormulaResult
    from flopkb.kb.entry import Entry
    from flopkb.site.pages.common import Page, Site

MAX_ROWS = 60
"""Rows of a results table beyond which the table is cut (every value is in `flopkb eval`)."""
MAX_PIVOT = 8
"""A swept input with at most this many values may become the columns of a table without hardware."""
MAX_SERIES = 8
"""Lines on a sweep chart."""

HARDWARE_FROM = {
    "own": "the accelerators this formula lists",
    "ref": "the accelerators of the formula it reuses",
    "default": "the record's hardware (affected_by_hardware and every row's values_for)",
    "none": "",
}
CLAIM_CODES = frozenset({"measurement-disagrees", "claim-mismatch", "claim-out-of-regime"})
"""Problems of a formula's claims, which its claims list shows: not reasons it was not evaluated."""
CLAIM_WORDS = {
    "ok": "checked",
    "mismatch": "does not match",
    "disagrees": "disagrees with the measurement",
    "unchecked": "not checked",
}


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    href: str | None = None
    num: bool = False
    header: bool = False
    outside: bool = False
    """A value at a point outside the formula's regime (`valid_when`)."""


@dataclass(slots=True)
class Table:
    head: list[Cell]
    rows: list[list[Cell]]
    total: int = 0
    """Rows before the cut (`len(rows)` when nothing was cut)."""

    @property
    def cut(self) -> bool:
        return self.total > len(self.rows)


@dataclass(slots=True)
class Chart:
    """A chart's two drawings (`write_chart`): wide, and narrow (legend below the plot) for a phone's column."""

    src: str
    width: int
    height: int
    narrow: str
    narrow_width: int
    narrow_height: int
    alt: str
    caption: str = ""


@dataclass(slots=True)
class FormulaView:
    id: str
    title: str
    latex: str | None
    text: str | None
    unit: str
    inputs: list[dict[str, Any]] = field(default_factory=list)
    defined_in: Any = None
    hardware: list[Any] = field(default_factory=list)
    hardware_from: str = ""
    table: Table | None = None
    chart: Chart | None = None
    figures: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    measured: list[dict[str, Any]] = field(default_factory=list)
    """The model against each measurement its claims name (`flopkb.site.pages.measurements`)."""
    problems: list[str] = field(default_factory=list)
    eval_command: str = ""
    valid_when: str | None = None
    """The formula's regime, as canonical text."""
    outside: int = 0
    """How many of its values lie outside the regime."""


# ---------------------------------------------------------------------------
# Numbers with units


def show_raw(value: Any) -> str:
    """An input as written in the record: a quantity string, a number, or a sweep of them."""
    if isinstance(value, list):
        return ", ".join(show_raw(item) for item in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_number(float(value), 12)
    return " ".join(str(value).split())


def _magnitude(value: Any, like: Any) -> float | None:
    """`value` as a float for a chart axis: in the unit of `like` (the sweep's first value)."""
    try:
        if hasattr(value, "magnitude"):
            if hasattr(like, "units") and value.units != like.units:
                return float(value.to(like.units).magnitude)
            return float(value.magnitude)
        return float(value)
    except Exception:
        return None


def _axis_unit(value: Any) -> str:
    """The unit of a sweep's values as written (`ms`), or "" for numbers."""
    if hasattr(value, "unit_items") and value.unit_items():
        return format_quantity(registry().Quantity(1.0, value.units), 6).partition(" ")[2]
    return ""


# ---------------------------------------------------------------------------
# Views


def formula_views(site: Site, page: Page, entry: Entry) -> list[FormulaView]:
    """The views of a record's formulas, in record order."""
    results = {result.id: result for result in site.kb.formulas.get(entry.id, ())}
    views = []
    for formula in getattr(entry.record, "formulas", ()):
        result = results.get(formula.id)
        views.append(formula_view(site, page, entry.id, formula, result))
    return views


def formula_view(site: Site, page: Page, record_id: str, formula: Any, result: FormulaResult | None) -> FormulaView:
    if result is None:
        return FormulaView(
            formula.id,
            formula.title or formula.id,
            None,
            formula.expr,
            formula.unit,
            problems=["this formula was not evaluated"],
        )
    expr = result.expr
    view = FormulaView(
        id=result.id,
        title=result.title or result.id,
        latex=expr.to_latex() if expr is not None else None,
        text=str(expr) if expr is not None else (formula.expr or None),
        unit=result.unit,
        eval_command=f"flopkb eval {record_id}",
    )
    swept = set(result.swept)
    for name, raw in result.inputs.items():
        view.inputs.append({"name": name, "value": show_raw(raw), "swept": name in swept})
    if result.defined_in is not None and result.defined_in != result.key:
        defined_record, defined_formula = result.defined_in
        view.defined_in = page.link(defined_record, defined_formula)
    view.hardware = [page.link(accelerator) for accelerator in result.hardware if accelerator in site.entries]
    view.hardware_from = HARDWARE_FROM.get(result.hardware_from, "")
    if result.valid_when is not None:
        view.valid_when = str(result.valid_when)
        view.outside = result.outside_regime
    if result.evaluations:
        view.table = results_table(site, page, result)
        view.chart = sweep_chart(site, page, record_id, result)
    seen: set[tuple[str, str]] = set()
    for figure in result.figures:
        key = (figure.accelerator, figure.parameter)
        if key in seen:
            continue
        seen.add(key)
        view.figures.append(
            {
                "accelerator": page.link(figure.accelerator),
                "parameter": figure.parameter,
                "value": figure.value,
                "basis": figure.basis,
                "href": page.href(figure.accelerator, f"specs.{figure.parameter}"),
            }
        )
    view.claims = [claim_view(page, claim, result.unit) for claim in result.claims]
    view.measured = measured_rows(page, result)
    view.problems = [problem.message for problem in result.problems if problem.code not in CLAIM_CODES]
    return view


def claim_view(page: Page, claim: Claim, unit: str) -> dict[str, Any]:
    where = ", ".join(f"{name} = {show_input(value)}" for name, value in claim.where)
    unit_text = "" if unit.strip() in ("", "1") else f" {unit.strip()}"
    stated = claim.stated_text
    if claim.stated is not None and not any(ch.isalpha() for ch in stated.replace("e", "")):
        stated = f"{stated}{unit_text}"
    return {
        "status": claim.status,
        "word": CLAIM_WORDS.get(claim.status, claim.status),
        "where": where,
        "hardware": page.link(claim.hardware) if claim.hardware else None,
        "stated": stated,
        "computed": show_value(claim.computed, unit) if claim.computed is not None else None,
        "tolerance": f"{format_number(claim.rel_tol * 100, 3)} %",
        "reason": claim.reason,
        "measurement": (
            page.link(claim.measurement.source, claim.measurement.id) if claim.measurement is not None else None
        ),
        "basis": claim.measurement.basis if claim.measurement is not None else None,
        "outside": not claim.in_regime,
    }


def _point_key(point: Sequence[tuple[str, Any]]) -> tuple[str, ...]:
    return tuple(show_input(value) for _, value in point)


def results_table(site: Site, page: Page, result: FormulaResult) -> Table:
    """Values per accelerator (columns) and sweep point (rows), or a pivot of the last swept input without hardware."""
    swept = list(result.swept)
    unit = result.unit
    evaluations = result.evaluations
    value_head = "result"
    if result.hardware:
        accelerators = list(dict.fromkeys(e.hardware for e in evaluations))
        values: dict[tuple[tuple[str, ...], str | None], Evaluation] = {}
        points: dict[tuple[str, ...], None] = {}
        for evaluation in evaluations:
            key = _point_key(evaluation.point)
            points.setdefault(key, None)
            values[(key, evaluation.hardware)] = evaluation
        head = [Cell(name, header=True) for name in swept]
        head += [
            Cell(
                site.titles.get(acc or "", acc or ""),
                page.href(acc) if acc is not None and acc in site.entries else None,
                num=True,
                header=True,
            )
            for acc in accelerators
        ]
        rows = [
            [Cell(text) for text in key]
            + [
                _value_cell(values[(key, acc)], unit) if (key, acc) in values else Cell("–", num=True)
                for acc in accelerators
            ]
            for key in points
        ]
        if not swept:
            head.insert(0, Cell("", header=True))
            rows = [[Cell(value_head), *row] for row in rows]
        return _cut(Table(head, rows))
    keys = [_point_key(e.point) for e in evaluations]
    if len(swept) >= 2:
        last = list(dict.fromkeys(key[-1] for key in keys))
        if len(last) <= MAX_PIVOT:
            grid: dict[tuple[str, ...], dict[str, Evaluation]] = {}
            for key, evaluation in zip(keys, evaluations, strict=True):
                grid.setdefault(key[:-1], {})[key[-1]] = evaluation
            head = [Cell(name, header=True) for name in swept[:-1]] + [
                Cell(f"{swept[-1]} = {value}", num=True, header=True) for value in last
            ]
            rows = [
                [Cell(text) for text in row_key]
                + [_value_cell(cells[value], unit) if value in cells else Cell("–", num=True) for value in last]
                for row_key, cells in grid.items()
            ]
            return _cut(Table(head, rows))
    head = [Cell(name, header=True) for name in swept] + [Cell(value_head, num=True, header=True)]
    rows = [
        [Cell(text) for text in key] + [_value_cell(evaluation, unit)]
        for key, evaluation in zip(keys, evaluations, strict=True)
    ]
    return _cut(Table(head, rows))


def _value_cell(evaluation: Evaluation, unit: str) -> Cell:
    return Cell(show_value(evaluation.value, unit), num=True, outside=not evaluation.in_regime)


def _cut(table: Table) -> Table:
    table.total = len(table.rows)
    if len(table.rows) > MAX_ROWS:
        table.rows = table.rows[:MAX_ROWS]
    return table


def _measured_overlay(
    result: FormulaResult,
    x_name: str,
    like: Any,
    pinned: dict[str, str],
    series_of: Any,
    series: list[Any],
    styles: list[int | None],
    log_x: bool,
    log_y: bool,
) -> MeasuredOverlay | None:
    """The measurements the formula's claims name, where they fall on the chart (None when none does), each in the
    style of its line (`styles`, by line: None is the line's place)."""
    if not any(claim.measurement is not None for claim in result.claims):
        return None

    def claim_series(claim: Claim) -> Any:
        return series_of(claim.hardware, claim.where)

    marks = [
        mark if mark.series is None or styles[mark.series] is None else replace(mark, series=styles[mark.series])
        for mark in measured_marks(result, x_name, lambda value: _magnitude(value, like), pinned, claim_series, series)
    ]
    return MeasuredOverlay(marks, log_x=log_x, log_y=log_y) if marks else None


_DEFINED_SYMBOL = re.compile(r"^(.+?\S) +[A-Z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*(?:\([^()]*\))? = ")
"""A title that names a symbol and defines it: "Speculative speedup S(B) = a * T_base(B) / ..."."""


def quantity_name(result: FormulaResult) -> str:
    """What a formula computes, for a chart's y axis: its title up to the first ": " (what follows is usually the
    expression: "Speedup of a speculative step: S = a * T_base / T_spec"), or the words before a symbol's
    definition ("Speculative speedup S(B) = ..." -> "Speculative speedup"), or its id without a title."""
    if not result.title:
        return result.id
    name = result.title.split(": ", 1)[0].strip() or result.title
    defined = _DEFINED_SYMBOL.match(name)
    return defined.group(1) if defined else name


def chart_path(record_id: str, name: str) -> str:
    return f"charts/{record_id}/{name}.svg"


NARROW_CHARTS = "charts/_narrow/"
"""Where the narrow drawing of `charts/<path>` goes ("_": no record id starts with it)."""


def write_chart(site: Site, page: Page, rel: str, draw: Callable[[Layout], str], alt: str, caption: str = "") -> Chart:
    """Write a chart drawn wide at `rel` and narrow under NARROW_CHARTS (the page shows the narrow one on a phone:
    `<picture>` in the templates' `chart` macro)."""
    wide, narrow = draw(WIDE), draw(NARROW)
    narrow_rel = NARROW_CHARTS + rel.removeprefix("charts/")
    site.write(rel, wide)
    site.write(narrow_rel, narrow)
    return Chart(page.url(rel), *svg_size(wide), page.url(narrow_rel), *svg_size(narrow), alt, caption)


def sweep_chart(site: Site, page: Page, record_id: str, result: FormulaResult) -> Chart | None:
    """A line chart of a sweep, written to `charts/<record>/<formula>.svg`; None when there is nothing to draw."""
    swept = list(result.swept)
    if not swept:
        return None
    evaluations = result.evaluations
    first = {name: value for name, value in evaluations[0].point}
    x_name = swept[0]
    pinned = swept[1:]
    by = pinned.pop(0) if pinned and not result.hardware else None

    def series_of(hardware: str | None, point: Any) -> Any:
        """The line a value belongs to: its accelerator, its value of the second swept input, or the one line."""
        if result.hardware:
            return hardware
        return show_input(dict(point).get(by)) if by is not None else None

    names: dict[str | None, str]
    if result.hardware:
        names = {acc: site.titles.get(acc, acc) for acc in dict.fromkeys(e.hardware for e in evaluations) if acc}
    elif by is not None:
        names = {key: f"{by} = {key}" for key in dict.fromkeys(series_of(e.hardware, e.point) for e in evaluations)}
    else:
        names = {None: result.id}
    names = dict(list(names.items())[:MAX_SERIES])
    pinned_keys = {name: show_input(first[name]) for name in pinned}
    lines: dict[Any, list[tuple[float, float]]] = {key: [] for key in names}
    outside: list[tuple[float, float]] = []
    like = first[x_name]
    for evaluation in evaluations:
        point = dict(evaluation.point)
        if any(show_input(point[name]) != text for name, text in pinned_keys.items()):
            continue
        key = series_of(evaluation.hardware, evaluation.point)
        if key not in lines:
            continue
        x = _magnitude(point[x_name], like)
        if x is not None and math.isfinite(x) and math.isfinite(evaluation.value):
            lines[key].append((x, evaluation.value))
            if not evaluation.in_regime:
                outside.append((x, evaluation.value))
    if max((len({x for x, _ in points}) for points in lines.values()), default=0) < 2:
        return None
    xs = [x for points in lines.values() for x, _ in points]
    ys = [y for points in lines.values() for _, y in points]
    log_x = min(xs) > 0 and max(xs) / min(xs) >= 50
    log_y = min(ys) > 0 and max(ys) / min(ys) >= 100
    styles = [site.accelerator_style(key) if result.hardware else None for key in lines]
    measured = _measured_overlay(result, x_name, like, pinned_keys, series_of, list(names), styles, log_x, log_y)
    regime = RegimeOverlay(outside, str(result.valid_when)) if outside else None
    found = [overlay for overlay in (measured, regime) if overlay is not None]
    overlay = Overlays(*found) if found else None
    x_unit = _axis_unit(like)
    unit = result.unit.strip()
    title = result.title or result.id
    quantity = quantity_name(result)
    series = [
        LineSeries(str(names[key]), points, style) for (key, points), style in zip(lines.items(), styles, strict=True)
    ]

    def draw(layout: Layout) -> str:
        return line_chart_svg(
            series,
            x_label=f"{x_name} ({x_unit})" if x_unit else x_name,
            y_label=quantity if unit in ("", "1") else f"{quantity} ({unit})",
            title=title,
            log_x=log_x,
            log_y=log_y,
            overlay=overlay,
            layout=layout,
        )

    caption = ""
    if pinned_keys:
        caption = (
            "Other swept inputs held at " + ", ".join(f"{name} = {text}" for name, text in pinned_keys.items()) + "."
        )
    if len(names) < len({series_of(e.hardware, e.point) for e in evaluations}):
        caption = (
            caption + " " if caption else ""
        ) + f"The first {MAX_SERIES} lines are drawn; the table has every value."
    try:
        return write_chart(
            site, page, chart_path(record_id, result.id), draw, f"Chart of {title} against {x_name}", caption
        )
    except ValueError:
        return None

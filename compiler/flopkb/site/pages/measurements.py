"""Measurements on the site: a source's measurements as a table, the model against them, and disagreement notices.

- A source's page lists its measurements, one table row each, the row's id
  the measurement's id: `[[source#id]]` links and `measured:` claims land on it.
- A formula whose claims name measurements gets a table of model against
  measurement (where, the measurement, its basis, both values in the
  formula's unit, the relative difference, agreement), and its sweep chart
  draws the measured points over the computed curve (`measured_marks`).
- A record with a formula that disagrees with a measurement carries a notice
  at the top of its page, linking to each measurement's row.
- The evidence page lists every disagreement with the records that rest on it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from flopkb.formulas.results import CLAIM_DISAGREES, CLAIM_OK, Claim, FormulaResult
from flopkb.formulas.units import format_number
from flopkb.site.charts.marks import MeasuredMark
from flopkb.site.pages.values import show_input, show_value

if TYPE_CHECKING:
    from flopkb.load.models import SourceRecord
    from flopkb.site.pages.common import Page, Site

AGREEMENT_WORDS = {CLAIM_OK: "agrees", CLAIM_DISAGREES: "disagrees"}


def measurement_rows(page: Page, record: SourceRecord) -> list[dict[str, Any]]:
    """A source's measurements for its page's table, in record order."""
    return [
        {
            "id": measurement.id,
            "quantity": measurement.quantity,
            "value": measurement.value if isinstance(measurement.value, str) else format(measurement.value, "g"),
            "basis": measurement.basis,
            "where": measurement.where,
            "conditions": [
                {"name": name, "value": page.inline(value) if isinstance(value, str) else format(value, "g")}
                for name, value in measurement.conditions.items()
            ],
        }
        for measurement in record.measurements
    ]


def _show(value: float | None, unit: str) -> str:
    return show_value(value, unit) if value is not None else "–"


def _where(claim: Claim) -> str:
    return ", ".join(f"{name} = {show_input(value)}" for name, value in claim.where)


def measured_rows(page: Page, result: FormulaResult) -> list[dict[str, Any]]:
    """The model against every measurement the formula's claims name."""
    rows = []
    for claim in result.claims:
        point = claim.measurement
        if point is None:
            continue
        off = claim.off_by
        rows.append(
            {
                "where": _where(claim),
                "hardware": page.link(claim.hardware) if claim.hardware else None,
                "measurement": page.link(point.source, point.id),
                "label": f"{point.source_title}, {point.where}",
                "quantity": point.quantity,
                "basis": point.basis,
                "measured": _show(claim.stated, result.unit),
                "model": _show(claim.computed, result.unit),
                "off": f"{format_number(off * 100, 3)} %" if off is not None else "–",
                "status": claim.status,
                "word": AGREEMENT_WORDS.get(claim.status, "not checked"),
            }
        )
    return rows


def _disagreement(page: Page, result: FormulaResult, claim: Claim) -> dict[str, Any]:
    point = claim.measurement
    assert point is not None
    return {
        "formula": result.title or result.id,
        "formula_href": page.href(result.record, result.id),
        "where": _where(claim),
        "model": _show(claim.computed, result.unit),
        "measured": _show(claim.stated, result.unit),
        "measurement": page.link(point.source, point.id),
        "label": f"{point.source_title}, {point.where}",
        "basis": point.basis,
        "off": f"{format_number((claim.off_by or 0) * 100, 3)} %",
    }


def disagreement_notice(page: Page, results: Sequence[FormulaResult]) -> list[dict[str, Any]]:
    """One line per disagreeing claim of a record's formulas, for the notice at the top of its page."""
    return [_disagreement(page, result, claim) for result in results for claim in result.disagreements]


def disagreement_list(site: Site, page: Page) -> list[dict[str, Any]]:
    """Every disagreement of the base for the evidence page, with the records resting on its formula."""
    evidence = site.kb.evidence
    if evidence is None:
        return []
    results = {result.key: result for found in site.kb.formulas.values() for result in found}
    views = []
    for disagreement in evidence.disagreements:
        if disagreement.record not in site.entries:
            continue
        view = _disagreement(page, results[(disagreement.record, disagreement.formula)], disagreement.claim)
        view["record"] = page.link(disagreement.record, disagreement.formula)
        view["dependents"] = [page.link(other) for other in disagreement.dependents if other in site.entries]
        views.append(view)
    return views


def measured_marks(
    result: FormulaResult,
    x_name: str,
    x_of: Callable[[Any], float | None],
    pinned: dict[str, str],
    series_of: Callable[[Claim], Hashable],
    series: Sequence[Hashable],
) -> list[MeasuredMark]:
    """The measurements the formula's claims name that lie on the chart: x the claim's `x_name`, the other swept
    inputs as the chart holds them (`pinned`, as shown), on one of the chart's `series`."""
    marks = []
    for claim in result.claims:
        point = claim.measurement
        if point is None or claim.stated is None:
            continue
        where = dict(claim.where)
        if x_name not in where or any(show_input(where.get(name)) != text for name, text in pinned.items()):
            continue
        key = series_of(claim)
        x = x_of(where[x_name])
        if key not in series or x is None:
            continue
        short = point.source.rsplit("/", 1)[-1]
        title = (
            f"{point.source_title}, {point.where}: {point.quantity} = {point.value} ({point.basis}) "
            f"at {_where(claim)}; the model gives {_show(claim.computed, result.unit)}"
        )
        marks.append(MeasuredMark(x, claim.stated, point.basis, f"{short}, {point.where}", title, series.index(key)))
    return marks

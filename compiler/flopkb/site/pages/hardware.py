"""Accelerators on the site: each one's spec table and roofline, and the page that compares them all.

An accelerator page lists every spec with its basis badge, sources and note;
each row has the anchor `specs.<parameter>`, which formula pages and
hardware-parameter rows link to. The roofline chart draws, for every compute
peak the accelerator has (a parameter whose unit in the vocabulary is a rate of
FLOP), attainable FLOP/s against arithmetic intensity under its
`memory_bandwidth`, ridge point marked. The comparison page puts every
accelerator side by side (one column each) and every accelerator's roofline on
one chart per compute peak.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from flopkb.formulas.specs import AcceleratorSpecs, read_specs
from flopkb.formulas.units import QuantityError, dimension_of, format_number, to_base
from flopkb.load.models import AcceleratorRecord
from flopkb.site.charts.svg import RooflineSeries, roofline_svg
from flopkb.site.pages.common import css_word
from flopkb.site.pages.formulas import chart_path, show_raw, write_chart
from flopkb.site.pages.values import show_input, show_value

if TYPE_CHECKING:
    from flopkb.kb.entry import Entry
    from flopkb.site.pages.common import Page, Site

BANDWIDTH = "memory_bandwidth"
COMPARE_PAGE = "accelerators/compare.md"


@functools.lru_cache(maxsize=64)
def _is_rate_of_flop(unit: str) -> bool:
    try:
        return dimension_of(unit) == dimension_of("FLOP/s")
    except QuantityError:
        return False


def compute_parameters(site: Site) -> list[str]:
    """The vocabulary's compute peaks (unit a rate of FLOP), in vocabulary order."""
    if site.vocabulary is None:
        return []
    return [name for name, parameter in site.vocabulary.parameters.items() if _is_rate_of_flop(parameter.unit)]


def specs_of(site: Site, record_id: str) -> AcceleratorSpecs | None:
    """An accelerator's specs, read once per build."""
    cache = site.cache.setdefault("specs", {})
    if record_id not in cache:
        entry = site.entries.get(record_id)
        cache[record_id] = read_specs(entry, site.vocabulary)[0] if entry is not None else None
    return cache[record_id]


def _base(specs: AcceleratorSpecs, parameter: str) -> float | None:
    figure = specs.figures.get(parameter)
    if figure is None:
        return None
    value = to_base(figure.quantity)[0]
    return value if value > 0 else None


def roofs(site: Site, specs: AcceleratorSpecs) -> list[tuple[str, float, float]]:
    """(names of the peak, peak FLOP/s, bandwidth byte/s) per distinct compute peak; equal peaks share a line."""
    bandwidth = _base(specs, BANDWIDTH)
    if bandwidth is None:
        return []
    found: dict[float, list[str]] = {}
    for parameter in compute_parameters(site):
        peak = _base(specs, parameter)
        if peak is not None:
            found.setdefault(peak, []).append(parameter)
    return [(" / ".join(short_name(name) for name in names), peak, bandwidth) for peak, names in found.items()]


def short_name(parameter: str) -> str:
    """A compute peak's name for a chart legend: `peak_bf16_dense` -> `bf16_dense`."""
    return parameter.removeprefix("peak_")


def formulas_on(site: Site) -> dict[str, list[tuple[str, str, str]]]:
    """Accelerator id -> (record id, formula id, formula title) of every formula evaluated on it, built once."""
    index = site.cache.get("formulas_on")
    if index is None:
        index = {}
        for record_id in sorted(site.kb.formulas):
            for result in site.kb.formulas[record_id]:
                for accelerator in dict.fromkeys(e.hardware for e in result.evaluations if e.hardware):
                    index.setdefault(accelerator, []).append((record_id, result.id, result.title or result.id))
        site.cache["formulas_on"] = index
    return index


MAX_VALUES = 6
"""A formula's values on an accelerator are listed point by point up to this many; beyond, their range is given."""


def values_on(site: Site, page: Page, accelerator: str) -> list[dict[str, Any]]:
    """Every formula evaluated on an accelerator, with its inputs and its values there (from `kb.formulas`)."""
    rows = []
    for record_id, formula_id, formula_title in formulas_on(site).get(accelerator, ()):
        result = next((found for found in site.kb.formulas.get(record_id, ()) if found.id == formula_id), None)
        evaluations = [e for e in result.evaluations if e.hardware == accelerator] if result is not None else []
        if result is None or not evaluations:
            continue
        swept = set(result.swept)
        inputs = [
            {"name": name, "value": sweep_summary(raw) if name in swept else show_raw(raw)}
            for name, raw in result.inputs.items()
        ]
        if len(evaluations) == 1:
            values = [show_value(evaluations[0].value, result.unit)]
        elif len(evaluations) <= MAX_VALUES:
            values = [
                ", ".join(f"{name} = {show_input(value)}" for name, value in e.point if name in swept)
                + f": {show_value(e.value, result.unit)}"
                for e in evaluations
            ]
        else:
            low = min(e.value for e in evaluations)
            high = max(e.value for e in evaluations)
            low_text, high_text = show_value(low, result.unit), show_value(high, result.unit)
            span = f"{low_text} at every one" if low_text == high_text else f"{low_text} to {high_text}"
            values = [f"{span} of {len(evaluations)} points"]
        rows.append(
            {
                "link": page.link(record_id, formula_id),
                "record": page.link(record_id),
                "formula": formula_title,
                "inputs": inputs,
                "results": values,
            }
        )
    return rows


def sweep_summary(raw: Any) -> str:
    """A swept input, short: every value up to four of them, else "1, 2, …, 256 (9 values)"."""
    values = raw if isinstance(raw, list) else [raw]
    if len(values) <= 4:
        return show_raw(values)
    return f"{show_raw(values[:2])}, …, {show_raw(values[-1])} ({len(values)} values)"


def accelerator_context(site: Site, page: Page, entry: Entry) -> dict[str, Any]:
    record = _accelerator(site, entry.id)
    specs = specs_of(site, entry.id)
    vocabulary = site.vocabulary
    rows = []
    for parameter, spec in record.specs.items():
        declared = vocabulary.parameters.get(parameter) if vocabulary else None
        rows.append(
            {
                "anchor": f"specs.{parameter}",
                "parameter": parameter,
                "description": declared.description if declared else "",
                "value": spec.value if isinstance(spec.value, str) else format_number(float(spec.value), 12),
                "basis": spec.basis,
                "sources": page.citations(spec.sources),
                "note": page.inline(spec.note),
            }
        )
    chart = None
    ridges = []
    if specs is not None:
        lines = roofs(site, specs)
        for names, peak, bandwidth in lines:
            ridges.append({"peaks": names, "ridge": format_number(peak / bandwidth, 4)})
        if lines:
            title = site.titles[entry.id]
            roofs_ = [RooflineSeries(names, peak, bandwidth) for names, peak, bandwidth in lines]
            chart = write_chart(
                site,
                page,
                chart_path(entry.id, "roofline"),
                lambda layout: roofline_svg(roofs_, title=f"Roofline of {title}", layout=layout),
                f"Roofline of {title}: attainable FLOP/s against arithmetic intensity",
            )
    used_by = values_on(site, page, entry.id)
    return {
        "vendor": record.vendor,
        "description": page.prose(record.description),
        "specs": rows,
        "roofline": chart,
        "ridges": ridges,
        "bandwidth_parameter": BANDWIDTH,
        "used_by": used_by,
        "compare_href": page.url(COMPARE_PAGE),
    }


def accelerator_ids(site: Site) -> list[str]:
    """Every accelerator, by vendor then title."""
    ids = [record_id for record_id, kind in site.kinds.items() if kind == "accelerator"]
    return sorted(
        ids, key=lambda record_id: (site.record(record_id).vendor.lower(), site.titles[record_id].lower(), record_id)
    )


def render_compare_page(site: Site) -> None:
    page = site.page(COMPARE_PAGE)
    accelerators = accelerator_ids(site)
    vocabulary = site.vocabulary
    parameters = list(vocabulary.parameters) if vocabulary else []
    present = {parameter for record_id in accelerators for parameter in site.record(record_id).specs}
    parameters = [p for p in parameters if p in present] + sorted(present - set(parameters))
    columns = [
        {"link": page.link(record_id), "vendor": _accelerator(site, record_id).vendor} for record_id in accelerators
    ]
    rows = []
    for parameter in parameters:
        declared = vocabulary.parameters.get(parameter) if vocabulary else None
        cells: list[dict[str, Any] | None] = []
        for record_id in accelerators:
            spec = _accelerator(site, record_id).specs.get(parameter)
            if spec is None:
                cells.append(None)
            else:
                value = spec.value if isinstance(spec.value, str) else format_number(float(spec.value), 12)
                cells.append({"value": value, "basis": spec.basis, "href": page.href(record_id, f"specs.{parameter}")})
        rows.append({"parameter": parameter, "description": declared.description if declared else "", "cells": cells})
    charts = []
    ridge_rows = []
    drawn: list[dict[str, float]] = []
    for parameter in compute_parameters(site):
        series, values = [], {}
        ridge_cells: list[str | None] = []
        for record_id in accelerators:
            specs = specs_of(site, record_id)
            peak = _base(specs, parameter) if specs else None
            bandwidth = _base(specs, BANDWIDTH) if specs else None
            if peak is None or bandwidth is None:
                ridge_cells.append(None)
                continue
            values[record_id] = peak
            series.append(
                RooflineSeries(site.titles[record_id], peak, bandwidth, style=site.accelerator_style(record_id))
            )
            ridge_cells.append(format_number(peak / bandwidth, 4))
        if not series:
            continue
        ridge_rows.append({"parameter": parameter, "cells": ridge_cells})
        if values in drawn:
            continue
        drawn.append(values)
        drawn_series = list(series)
        chart = write_chart(
            site,
            page,
            f"charts/_compare/{css_word(parameter)}.svg",  # "_": no record id starts with it
            lambda layout, s=drawn_series, p=parameter: roofline_svg(  # type: ignore[misc]
                s, title=f"Rooflines: {p} over {BANDWIDTH}", layout=layout
            ),
            f"Rooflines of every accelerator: {parameter} against arithmetic intensity under {BANDWIDTH}",
        )
        charts.append({"parameter": parameter, "chart": chart})
    site.render(
        "pages/compare.md.j2",
        COMPARE_PAGE,
        page=page,
        root=page.root,
        columns=columns,
        rows=rows,
        ridge_rows=ridge_rows,
        charts=charts,
        bandwidth_parameter=BANDWIDTH,
    )


def _accelerator(site: Site, record_id: str) -> AcceleratorRecord:
    """The model of an accelerator the page lists (only accelerators that validated are listed)."""
    record = site.record(record_id)
    assert isinstance(record, AcceleratorRecord)
    return record

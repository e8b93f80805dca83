"""Static SVG charts: valid, deterministic, escaped, readable."""

from __future__ import annotations

import html
import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.site.charts.svg import (
    PALETTE,
    LineSeries,
    RooflineSeries,
    format_si,
    line_chart_svg,
    roofline_svg,
    svg_size,
)

NS = "{http://www.w3.org/2000/svg}"

H100 = RooflineSeries("NVIDIA H100 SXM", 989e12, 3.35e12, "../records/accelerators/h100-sxm.html")
MI300X = RooflineSeries("AMD MI300X", 1307e12, 5.3e12)
A100 = RooflineSeries("NVIDIA A100 SXM 80GB", 312e12, 2.039e12)


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(NS + "text")]


# ---------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    "value, unit, expected",
    [
        (989e12, "FLOP/s", "989 TFLOP/s"),
        (3.35e12, "B/s", "3.35 TB/s"),
        (1e15, "", "1 P"),
        (999.96e9, "", "1 T"),
        (1307e12, "FLOP/s", "1.31 PFLOP/s"),
        (819e9, "B/s", "819 GB/s"),
        (0.5, "", "0.5"),
        (295.22, "", "295"),
        (1e3, "", "1 k"),
        (0, "", "0"),
    ],
)
def test_format_si(value: float, unit: str, expected: str) -> None:
    assert format_si(value, unit) == expected


def test_format_si_rejects_nan() -> None:
    with pytest.raises(ValueError):
        format_si(math.nan)


# ------------------------------------------------------------------- roofline


def test_roofline_is_valid_svg_with_titles_ticks_and_ridge() -> None:
    svg = roofline_svg([H100], title="H100 roofline")
    root = parse(svg)
    assert root.find(NS + "title").text == "H100 roofline"
    assert "H100" in root.find(NS + "desc").text
    labels = texts(root)
    for tick in ("1 T", "10 T", "100 T", "1 P", "1", "10", "100", "1 k"):
        assert tick in labels, tick
    assert "ridge 295 FLOP/B" in labels
    assert "Arithmetic intensity (FLOP/byte)" in labels
    assert "Attainable performance (FLOP/s)" in labels
    assert "989 TFLOP/s · 3.35 TB/s" in labels
    # Every series group carries its own <title> for hover and screen readers.
    roof = root.find(f"{NS}g[@class='roof']")
    assert roof.find(NS + "title").text.startswith("NVIDIA H100 SXM: peak 989 TFLOP/s")
    assert svg_size(svg) == (int(root.get("width")), int(root.get("height")))


def test_roofline_geometry_meets_at_the_ridge() -> None:
    root = parse(roofline_svg([H100], title="t"))
    path = root.find(f"{NS}g[@class='roof']/{NS}path").get("d")
    pts = [tuple(map(float, p.strip().split())) for p in path[1:].split("L")]
    circle = root.find(f"{NS}g[@class='roof']/{NS}circle")
    ridge = (float(circle.get("cx")), float(circle.get("cy")))
    assert len(pts) == 3 and pts[1] == ridge
    assert pts[1][1] == pts[2][1]  # flat roof after the ridge
    assert pts[0][0] < pts[1][0] and pts[0][1] > pts[1][1]  # slope climbs to it


def test_roofline_is_deterministic_and_order_independent() -> None:
    a = roofline_svg([H100, MI300X, A100], title="All")
    b = roofline_svg([A100, H100, MI300X], title="All")
    assert a == b
    assert a == roofline_svg([H100, MI300X, A100], title="All")


def test_roofline_series_get_distinct_colours_and_legend_links() -> None:
    root = parse(roofline_svg([H100, MI300X, A100], title="All"))
    colours = [g.find(NS + "path").get("stroke") for g in root.iter(NS + "g") if g.get("class") == "roof"]
    assert len(set(colours)) == 3 and set(colours) <= set(PALETTE)
    links = [a.get("href") for a in root.iter(NS + "a")]
    assert links == ["../records/accelerators/h100-sxm.html"]
    assert all(a.get("target") == "_top" for a in root.iter(NS + "a"))


def test_many_series_stay_distinguishable() -> None:
    series = [RooflineSeries(f"acc {i:02d}", (i + 1) * 1e14, (i + 1) * 5e11) for i in range(20)]
    root = parse(roofline_svg(series, title="twenty"))
    styles = {
        (g.find(NS + "path").get("stroke"), g.find(NS + "path").get("stroke-dasharray"))
        for g in root.iter(NS + "g")
        if g.get("class") == "roof"
    }
    assert len(styles) == 20
    assert int(root.get("height")) > 20 * 50  # the legend grows, it is not cut


def test_untrusted_text_is_escaped() -> None:
    evil = RooflineSeries('<script>alert("x")</script> & \x00\x1b co', 1e15, 1e12)
    svg = roofline_svg([evil], title="T <b>&</b> \"q\" 's'")
    assert "<script" not in svg and "<b>" not in svg and "\x00" not in svg and "\x1b" not in svg
    root = parse(svg)
    assert root.find(NS + "title").text == "T <b>&</b> \"q\" 's'"
    titles = [t.text or "" for t in root.iter(NS + "title")]
    assert any(t.startswith('<script>alert("x")</script> &  co') for t in titles)  # full name on hover
    assert '<script>alert("x")</scri…' in texts(root)  # shortened to fit the legend


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,x",
        " javascript:x",
        "vbscript:x",
    ],
)
def test_unsafe_links_are_refused(href: str) -> None:
    with pytest.raises(ValueError, match="unsafe link"):
        roofline_svg([RooflineSeries("x", 1e15, 1e12, href)], title="t")


@pytest.mark.parametrize("peak, bw", [(0, 1e12), (-1, 1e12), (math.inf, 1e12), (1e15, math.nan)])
def test_bad_values_are_refused(peak: float, bw: float) -> None:
    with pytest.raises(ValueError):
        roofline_svg([RooflineSeries("x", peak, bw)], title="t")


def test_empty_roofline_is_refused() -> None:
    with pytest.raises(ValueError):
        roofline_svg([], title="t")


def test_two_charts_inline_in_one_page_do_not_share_ids() -> None:
    a, b = roofline_svg([H100], title="a"), roofline_svg([MI300X], title="b")

    def ids(s):
        return {e.get("id") for e in parse(s).iter() if e.get("id")}

    assert ids(a) and not ids(a) & ids(b)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=40), st.floats(min_value=1e6, max_value=1e19), st.floats(min_value=1e6, max_value=1e15)
        ),
        min_size=1,
        max_size=6,
    ),
    st.text(max_size=60),
)
def test_any_roofline_parses(series, title) -> None:
    svg = roofline_svg([RooflineSeries(n, p, b) for n, p, b in series], title=title)
    root = parse(svg)
    assert len([g for g in root.iter(NS + "g") if g.get("class") == "roof"]) == len(series)
    assert svg == roofline_svg([RooflineSeries(n, p, b) for n, p, b in reversed(series)], title=title)


# ----------------------------------------------------------------- line chart


def sweep() -> list[LineSeries]:
    return [
        LineSeries("H100", [(b, min(b * 3.35e12, 989e12) / 14e9) for b in (512, 1, 8, 64)]),
        LineSeries("A100", [(b, min(b * 2.039e12, 312e12) / 14e9) for b in (1, 8, 64, 512)]),
    ]


def test_line_chart_is_valid_deterministic_and_labelled() -> None:
    kw = {"x_label": "batch size", "y_label": "token/s", "title": "Decode throughput", "log_x": True}
    svg = line_chart_svg(sweep(), **kw)
    assert svg == line_chart_svg(sweep(), **kw)
    root = parse(svg)
    labels = texts(root)
    assert {"batch size", "token/s", "Decode throughput", "H100", "A100"} <= set(labels)
    assert {"1", "10", "100", "0"} <= set(labels)
    assert "1 k" not in labels  # the data stop at 512: the axis ends at 600, not at the next decade
    # Points are drawn in x order whatever order they came in.
    d = root.find(f"{NS}g[@class='line']/{NS}path").get("d")
    xs = [float(p.strip().split()[0]) for p in d[1:].split("L")]
    assert xs == sorted(xs)


def test_line_chart_linear_ticks_are_round_numbers() -> None:
    root = parse(
        line_chart_svg(
            [LineSeries("t", [(k, 3 + 0.5 * k) for k in range(11)])], x_label="k", y_label="ms", title="latency"
        )
    )
    labels = texts(root)
    assert {"0", "2", "4", "6", "8", "10"} <= set(labels)


def test_line_chart_skips_unplottable_points() -> None:
    svg = line_chart_svg(
        [LineSeries("s", [(0, 1), (1, math.nan), (10, 2), (100, math.inf), (1000, 3)])],
        x_label="x",
        y_label="y",
        title="t",
        log_x=True,
    )
    circles = [c for c in parse(svg).iter(NS + "circle") if c.find(NS + "title") is not None]
    assert len(circles) == 2  # x=0 cannot sit on a log axis; nan and inf are dropped


def test_line_chart_without_points_is_refused() -> None:
    with pytest.raises(ValueError):
        line_chart_svg([LineSeries("s", [(math.nan, 1)])], x_label="x", y_label="y", title="t")


def test_line_chart_single_point_and_flat_series() -> None:
    parse(line_chart_svg([LineSeries("one", [(5, 5)])], x_label="x", y_label="y", title="t"))
    parse(line_chart_svg([LineSeries("flat", [(1, 0), (2, 0)])], x_label="x", y_label="y", title="t"))
    parse(line_chart_svg([LineSeries("neg", [(1, -3), (2, -1e9)])], x_label="x", y_label="y", title="t"))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(allow_nan=True, allow_infinity=True, width=32),
            st.floats(allow_nan=True, allow_infinity=True, width=32),
        ),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
    st.booleans(),
)
def test_any_line_chart_parses_or_refuses(points, log_x, log_y) -> None:
    try:
        svg = line_chart_svg([LineSeries("s", points)], x_label="x", y_label="y", title="t", log_x=log_x, log_y=log_y)
    except ValueError:
        return
    parse(svg)
    assert "nan" not in svg.lower().replace("nanosecond", "") and "inf" not in svg


def test_each_accelerator_has_one_colour_on_every_chart_of_the_site(project_site) -> None:
    """On every chart with a legend, an accelerator's line is drawn in the same colour and dash."""
    accelerators = {
        entry.record.title for entry in project_site.outcome.kb.entries.values() if entry.record.kind == "accelerator"
    }
    entry = re.compile(
        r'<title>([^<]*?)(?: — [^<]*)?</title>\s*<line x1="0" y1="6" x2="22" y2="6" stroke="([^"]+)"([^/]*)/>'
    )
    styles: dict[str, set[tuple[str, str]]] = {}
    for chart in (project_site.site / "charts").rglob("*.svg"):
        for name, colour, dash in entry.findall(html.unescape(chart.read_text(encoding="utf-8"))):
            if name in accelerators:
                styles.setdefault(name, set()).add((colour, dash.strip()))
    assert len(styles) >= 3
    assert {name: found for name, found in styles.items() if len(found) > 1} == {}
    assert len({next(iter(found)) for found in styles.values()}) == len(styles)  # and no two share one


def _plotted(svg: str) -> tuple[float, float, list[float]]:
    """(left, right) of the plot frame and the x of every plotted point, in SVG pixels."""
    root = parse(svg)
    frame = root.find(f".//{NS}rect[@class='plot-frame']")
    assert frame is not None
    left = float(frame.get("x"))
    xs = [float(c.get("cx")) for c in root.iter(NS + "circle") if c.find(NS + "title") is not None]
    return left, left + float(frame.get("width")), xs


@settings(max_examples=60, deadline=None)
@given(
    low=st.floats(min_value=1e-3, max_value=1e6),
    decades=st.floats(min_value=2, max_value=8),
    inner=st.lists(st.floats(min_value=0, max_value=1), max_size=5),
)
def test_a_log_x_axis_ends_near_its_data(low: float, decades: float, inner: list[float]) -> None:
    """Both ends of a log x axis lie within a factor 2 of the data: no empty decade beside the points."""
    high = low * 10**decades
    xs = [low, high] + [low * 10 ** (decades * f) for f in inner]
    svg = line_chart_svg([LineSeries("s", [(x, 1.0) for x in xs])], x_label="x", y_label="y", title="t", log_x=True)
    left, right, plotted = _plotted(svg)
    per_decade = (max(plotted) - min(plotted)) / math.log10(high / low)
    slack = per_decade * math.log10(2) + 0.02  # coordinates carry two decimals
    assert 0 <= min(plotted) - left <= slack
    assert 0 <= right - max(plotted) <= slack

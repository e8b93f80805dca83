"""The link graph in a real browser, at a desktop and a phone width: the most linked records, the ones that matter
most, keep their labels (a crowd of neighbours around them must not hide them), and no two labels shown overlap."""

from __future__ import annotations

import pytest

from site_fixtures import BuiltSite

LABELS = """() => {
    const cy = window.flopkbGraph;
    const ranked = cy.nodes().sort((a, b) => b.degree() - a.degree() || (a.id() < b.id() ? -1 : 1));
    const boxes = cy.nodes().filter(n => !n.hasClass('flopkb-nolabel')).map(n =>
        n.renderedBoundingBox({includeNodes: false, includeLabels: true, includeOverlays: false}));
    let overlaps = 0;
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.x1 < b.x2 - 1 && b.x1 < a.x2 - 1 && a.y1 < b.y2 - 1 && b.y1 < a.y2 - 1) overlaps++;
    }
    return {top: ranked.slice(0, 5).map(n => [n.id(), n.degree(), !n.hasClass('flopkb-nolabel')]),
            shown: boxes.length, overlaps: overlaps, view: [cy.zoom(), cy.width(), cy.height()]};
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_most_linked_records_keep_their_labels(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(serve_dir(project_site.site) + "graph.html")
    page.wait_for_selector('.flopkb-graph[data-state="ready"]')
    page.wait_for_load_state("networkidle")  # the page's styles in: the graph fitted to its box, labels placed
    page.wait_for_timeout(300)
    found = page.evaluate(LABELS)
    shot(page, f"graph-labels-{width}", full_page=False)
    hidden = [node for node, _degree, labelled in found["top"] if not labelled]
    assert not hidden, f"the most linked records without a label: {hidden} ({found})"
    assert found["overlaps"] == 0
    assert found["shown"] >= 5
    page_log.assert_clean()

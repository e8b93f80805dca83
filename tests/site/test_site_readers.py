"""What readers of linked-notes sites expect, in Chromium at desktop and phone widths: link previews that carry
values, old URLs that land on renamed records, charts that fit their column, badges that cover no text.

Screenshots land in build/screenshots/readers-*.png.
"""

from __future__ import annotations

import contextlib
import http.server
import posixpath
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser import arrive, file_url_page
from site_fixtures import BuiltSite, build_base, copy_project_base

ROOFLINE = "records/flops/sd-speedup-vs-batch-roofline.html"
H100 = "records/accelerators/nvidia-h100-sxm.html"
WIDTHS = [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]
# The link of the roofline page to the break-even fact's `speedup` formula.
FORMULA_LINK = '.md-content a[href$="fct-spec-decoding-cost-model-break-even.html#speedup"]'
CONTENT_BOX = "() => { const r = document.querySelector('.md-content').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }"  # noqa: E501


def open_page(page, url: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    page.wait_for_load_state("networkidle")


def preview(page):
    return page.locator("#flopkb-preview")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_preview_of_a_formula_link_shows_its_value_on_hover_and_on_focus(
    project_site: BuiltSite, serve_dir, page, page_log, shot, width: int
) -> None:
    open_page(page, serve_dir(project_site.site) + ROOFLINE, width)
    link = page.locator(FORMULA_LINK).first
    link.scroll_into_view_if_needed()
    before = page.evaluate(CONTENT_BOX)
    link.hover()
    card = preview(page)
    card.wait_for(state="visible")
    text = card.inner_text()
    assert card.locator(".flopkb-kind").text_content() == "fact" and "Speculative decoding cost model" in text
    assert "Speedup of a speculative step" in text and "0.7143" in text  # the formula and its value
    assert card.locator(".katex").count() == 1  # typeset
    assert page.evaluate(CONTENT_BOX) == before  # nothing on the page moved
    box, screen = card.bounding_box(), page.viewport_size
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= screen["width"]
    shot(page, f"readers-preview-{width}", full_page=False)
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")
    # Keyboard: focus shows it, and it describes the focused link for screen readers.
    page.mouse.move(0, 0)
    link.focus()
    card.wait_for(state="visible")
    assert link.get_attribute("aria-describedby") == "flopkb-preview"
    assert card.get_attribute("aria-live") == "polite"
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")
    assert link.get_attribute("aria-describedby") is None
    page_log.assert_clean()


def test_a_preview_of_a_record_link_shows_kind_title_status_and_first_paragraph(
    project_site: BuiltSite, serve_dir, page, page_log
) -> None:
    open_page(page, serve_dir(project_site.site) + ROOFLINE, 1280)
    page.locator('.md-content a[href$="accelerators/nvidia-h100-sxm.html"]').first.hover()
    card = preview(page)
    card.wait_for(state="visible")
    status = project_site.outcome.kb.evidence.standing("accelerators/nvidia-h100-sxm")
    from flopkb.site.pages.common import STATUS_WORDS

    assert card.locator(".flopkb-kind").text_content() == "accelerator"
    assert card.locator(".flopkb-status").text_content() == STATUS_WORDS.get(status, status)
    assert card.locator(".flopkb-preview__title").inner_text() == "NVIDIA H100 SXM"
    assert len(card.locator(".flopkb-preview__summary").inner_text()) > 40
    page_log.assert_clean()


def test_previews_work_from_file_urls(project_site: BuiltSite, browser) -> None:
    with file_url_page(browser, project_site.site) as (page, site, errors):
        page.goto(site + ROOFLINE)
        page.wait_for_load_state("load")
        page.locator(FORMULA_LINK).first.hover()
        preview(page).wait_for(state="visible")
        assert "0.7143" in preview(page).inner_text()
        assert errors == []


def test_on_touch_a_first_tap_previews_and_a_second_follows(project_site: BuiltSite, serve_dir, browser) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        url = serve_dir(project_site.site) + ROOFLINE
        page.goto(url)
        page.wait_for_load_state("networkidle")
        link = page.locator(FORMULA_LINK).first
        link.scroll_into_view_if_needed()
        link.tap()
        preview(page).wait_for(state="visible")
        assert page.url == url
        link.tap()
        arrive(page, "**/fct-spec-decoding-cost-model-break-even.html#speedup")
    finally:
        context.close()


@pytest.fixture(scope="module")
def moved_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The project's base after `flopkb mv facts/ridge-point facts/ridge-point-and-decode-batch`."""
    root = copy_project_base(tmp_path_factory.mktemp("moved") / "kb")
    subprocess.run(
        [sys.executable, "-m", "flopkb", "mv", "facts/ridge-point", "facts/ridge-point-and-decode-batch"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return build_base(root)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_old_url_of_a_renamed_record_lands_on_it(moved_site: BuiltSite, serve_dir, page, width: int) -> None:
    base = serve_dir(moved_site.site)
    open_page(page, base + "records/facts/ridge-point.html", width)
    arrive(page, "**/records/facts/ridge-point-and-decode-batch.html")
    assert (
        page.locator("h1").first.text_content().rstrip("¶")
        == moved_site.outcome.kb.entries["facts/ridge-point-and-decode-batch"].record.title
    )


def test_a_redirect_page_has_a_refresh_a_canonical_link_and_a_visible_link(moved_site: BuiltSite) -> None:
    old = "records/facts/ridge-point.html"
    html = moved_site.html(old)
    new = "records/facts/ridge-point-and-decode-batch.html"
    refresh = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]+)">', html)
    canonical = re.search(r'<link rel="canonical" href="([^"]+)">', html)
    visible = re.search(r'<a href="([^"]+)">Ridge point', html)
    assert refresh and canonical and visible
    assert {posixpath.normpath(posixpath.join("records/facts", m.group(1))) for m in (refresh, canonical, visible)} == {
        new
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_no_chart_is_wider_than_its_column(project_site: BuiltSite, serve_dir, page, shot, width: int) -> None:
    base = serve_dir(project_site.site)
    for rel in (ROOFLINE, H100, "accelerators/compare.html"):
        open_page(page, base + rel, width)
        column = page.evaluate("() => document.querySelector('.md-content__inner').getBoundingClientRect().right")
        charts = page.evaluate(
            "() => [...document.querySelectorAll('.flopkb-chart img')].map(i => i.getBoundingClientRect().right)"
        )
        assert charts, rel
        assert max(charts) <= column + 0.5, rel
    shot(page, f"readers-compare-{width}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_badge_is_drawn_over_the_text_before_it(project_site: BuiltSite, serve_dir, page, shot, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)
    open_page(page, serve_dir(project_site.site) + ROOFLINE, 1280)
    # The word of each badge of a claim against the text just before it on its line.
    overlaps = page.evaluate("""() => [...document.querySelectorAll('.flopkb-claims .flopkb-badge')].flatMap(b => {
        const text = b.previousSibling;
        if (!text) return [];
        const range = document.createRange();
        range.selectNodeContents(text);
        const rects = [...range.getClientRects()];
        const words = document.createRange();
        words.selectNodeContents(b);  // the badge's word as drawn, which may lie outside the badge's own box
        const last = rects[rects.length - 1], badge = words.getBoundingClientRect();
        const sameLine = last && last.top < badge.bottom && badge.top < last.bottom;
        const over = sameLine && badge.left < last.right - 0.5;
        return over ? [b.textContent + ' over ' + text.textContent.slice(-20)] : [];
    })""")
    assert page.locator(".flopkb-claims .flopkb-badge").count() > 0
    assert overlaps == []
    shot(page, f"readers-claims-{scheme}")


def test_the_not_evaluated_box_lists_no_disagreement(project_site: BuiltSite) -> None:
    html = project_site.html(ROOFLINE)
    assert "disagrees" in html  # the disagreements are on the page, in their notice and claims
    boxes = html.split('<p class="admonition-title">Not evaluated</p>')[1:]
    assert all("measured" not in box.split("</div>")[0] for box in boxes)


def test_every_record_has_a_preview_and_nothing_else_does(project_site: BuiltSite) -> None:
    previews = sorted(
        p.relative_to(project_site.site / "previews").as_posix() for p in (project_site.site / "previews").rglob("*.js")
    )
    records = sorted(f"{record_id}.js" for record_id, entry in project_site.outcome.kb.entries.items() if entry.record)
    assert previews == records
    assert Path(project_site.site / "previews" / records[0]).read_text().startswith("flopkbPreview({")


@contextlib.contextmanager
def host_answering_404(site: Path) -> Iterator[str]:
    """A host serving `site` under /kb/ and answering every missing URL, at any depth, with its 404.html."""
    folder = str(site.parent)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=folder, **kwargs)

        def log_message(self, *args) -> None:
            pass

        def send_error(self, code, message=None, explain=None) -> None:
            if code != 404:
                return super().send_error(code, message, explain)
            body = (site / "404.html").read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{site.name}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_404_page_is_styled_at_any_depth(project_site: BuiltSite, tmp_path: Path, page, shot, width: int) -> None:
    site = tmp_path / "kb"
    shutil.copytree(project_site.site, site)
    with host_answering_404(site) as base:
        for missing in ("gone.html", "records/facts/gone.html", "a/b/c/d/gone"):
            open_page(page, base + missing, width)
            assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
            header = page.locator(".md-header").bounding_box()  # unstyled, its logo alone is hundreds of px tall
            assert header is not None and header["height"] < 80, missing
            home = page.locator(".md-header a.md-logo").evaluate("a => a.href")
            assert home.startswith(base) and home.removeprefix(base) in ("", "index.html"), missing
        shot(page, f"readers-404-{width}", full_page=False)


@pytest.mark.parametrize("width", WIDTHS)
def test_display_formulas_fit_their_column(project_site: BuiltSite, serve_dir, page, width: int) -> None:
    """Set smaller to fit (to 0.6 of their size at most), so that no formula is cut at the column's edge."""
    open_page(page, serve_dir(project_site.site) + ROOFLINE, width)
    widths = page.evaluate("""async () => { await document.fonts.ready;
        return [...document.querySelectorAll('.md-content div.arithmatex')]
        .map(e => [e.scrollWidth, e.clientWidth, parseFloat(e.style.fontSize || '0')]); }""")
    assert widths
    overflowing = [w for w in widths if w[0] > w[1] + 1]
    # Whatever still overflows was set smaller (to the smallest size allowed), and scrolls sideways.
    assert all(w[2] > 0 for w in overflowing), overflowing
    if width == 1280:
        assert overflowing == []

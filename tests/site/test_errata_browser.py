"""Errata and standings on the built site, read in a real browser: each quoted span marked where it stands, with
its number, and the correction beside it; badges that say what the evidence says."""

from __future__ import annotations

import re

import pytest

from site_fixtures import BuiltSite

SEEDS = ("flops/sd-batch-dilution-problem", "flops/eng-profile-spec-decoding-engine-break-even-shift")


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("record_id", SEEDS)
def test_each_erratum_marks_the_quoted_words_and_its_correction_stands_beside_them(
    project_site: BuiltSite, serve_dir, page, page_log, shot, record_id: str, width: int
) -> None:
    errata = [item for item in project_site.outcome.kb.evidence.errata if item.record == record_id]
    assert errata, f"{record_id} has no errata"
    page.set_viewport_size({"width": width, "height": 900})
    base = serve_dir(project_site.site)
    page.goto(f"{base}/records/{record_id}.html")
    page.wait_for_selector("article h1")
    for item in errata:
        marks = page.locator(f"mark#erratum-{item.number}")
        note = page.locator(f"#erratum-note-{item.number}")
        if marks.count():
            # the marked words are the quote as the page shows it (code spans without their backticks)
            assert words(marks.inner_text()) == words(note.locator("q").inner_text())
            assert words(marks.inner_text()).replace(" ", "") == item.quote.replace("`", "").replace(" ", "")
            mark_box = marks.bounding_box()
            # the marker follows the quoted words at once, and links to the correction
            ref = page.locator(f"mark#erratum-{item.number} + sup.flopkb-erratum-ref a")
            assert ref.inner_text() == str(item.number)
            assert str(ref.get_attribute("href")).endswith(
                f"#erratum-note-{item.number}"
            )  # absolute: instant navigation
            # the correction is below the marked words, in the same column, before the next section
            note_box = note.bounding_box()
            assert note_box["y"] > mark_box["y"]
            assert note_box["x"] < mark_box["x"] + mark_box["width"]
        assert words(item.quote.replace("`", "")) in words(note.inner_text())
        first_words = re.sub(r"\[\[[^\]]*\]\]", "", item.correction).split()[:3]
        assert words(" ".join(first_words)).strip("*`") in words(note.inner_text())
    shot(page, f"errata-{record_id.rsplit('/', 1)[-1]}-{width}", full_page=False)
    page_log.assert_clean()


def test_badges_never_say_sourced_of_a_record_without_sources(project_site: BuiltSite) -> None:
    evidence = project_site.outcome.kb.evidence
    for record_id in project_site.outcome.kb.entries:
        standing = evidence.standing(record_id)
        html = project_site.html(f"records/{record_id}.html")
        badge = re.search(r'<a class="flopkb-status flopkb-status--([a-z-]+)" href="#Evidence">', html)
        assert badge is not None and badge.group(1) == standing
        if not evidence.of(record_id).cited:
            assert standing != "sourced"
    assert ">verified<" not in project_site.html("index.html")


def test_the_evidence_page_lists_every_erratum_and_the_home_page_counts_them(project_site: BuiltSite) -> None:
    errata = project_site.outcome.kb.evidence.errata
    evidence = project_site.html("evidence.html")
    assert evidence.count("<q>") >= len(errata)
    home = project_site.html("index.html")
    assert re.search(rf"<strong>{len(errata)}</strong><span>errata</span>", home)

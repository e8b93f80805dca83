"""The Recent changes page: what each of the last commits that touched records did to the computed knowledge.

The same report as `flopkb diff` (`flopkb.review.history`), one section a
commit, newest first: its summary line, then each part that has something
(claims, agreement, values by the edit that caused them, evidence,
diagnostics, records, links, pages). Built from commit history only, so every
build of one commit writes the same bytes; outside a git repository, or with
no commit that touched records, there is no page (and no nav entry). The
template escapes every text (commit subjects, messages and ids come from the
repository).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flopkb.review.history import recent_changes
from flopkb.review.text import WORDS, text_sections
from flopkb.review.wording import summary
from flopkb.site.pages.common import link_html

if TYPE_CHECKING:
    from flopkb.site.pages.common import Site

CHANGES_PAGE = "changes.md"
RECENT = 5
"""How many commits the page shows."""
LINES = 40
"""At most this many lines a part of a commit's report; the rest is counted."""


def render_recent_changes(site: Site) -> bool:
    """Write the page; False when there is none."""
    changes = recent_changes(site.config, RECENT)
    if not changes:
        return False
    page = site.page(CHANGES_PAGE)
    commits: list[dict[str, Any]] = []
    for change in changes:
        parts = []
        for heading, lines in text_sections(change.report, WORDS):
            parts.append(
                {
                    "heading": heading,
                    "lines": lines[:LINES],
                    "more": max(0, len(lines) - LINES),
                }
            )
        edited = sorted({*change.report.records.edited, *change.report.records.added} & site.entries.keys())
        commits.append(
            {
                "sha": change.sha[:7],
                "date": change.date,
                "subject": change.subject,
                "summary": summary(change.report),
                "parts": parts,
                "records": [link_html(page.link(record_id)) for record_id in edited],
            }
        )
    site.render("pages/changes.md.j2", CHANGES_PAGE, page=page, root=page.root, commits=commits, recent=RECENT)
    return True

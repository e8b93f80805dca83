"""`flopkb diff --format text` (a terminal) and `--format json` (scripts: the schema of docs/cli.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import NamedTuple

from flopkb.report.reporters import printable
from flopkb.review.model import Report
from flopkb.review.wording import (
    STATUS,
    because,
    cause_line,
    claim_move,
    claim_what,
    diagnostic_text,
    evidence_move,
    number,
    relative,
    summary,
    title,
    value_where,
)

_INDENT = "  "


class Markers(NamedTuple):
    """What starts a line of a diagnostic that is new, fixed or changed, and of a link added or removed."""

    new: str
    fixed: str
    changed: str
    added: str
    removed: str


SIGNS = Markers("+ ", "- ", "~ ", "+ ", "- ")
"""A terminal's, as a diff shows lines (the PR comment escapes them, so that markdown shows them as written)."""
WORDS = Markers("new: ", "fixed: ", "changed: ", "added: ", "removed: ")
"""A web page's: in a list a leading `+` or `-` would read as a nested item's marker and show as nothing."""


def render_text(report: Report) -> str:
    return "".join(printable(line) + "\n" for line in text_lines(report))


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def text_lines(report: Report) -> Iterator[str]:
    yield title(report)
    yield summary(report)
    for heading, lines in text_sections(report):
        yield ""
        yield heading
        for line in lines:
            yield _INDENT + line


def text_sections(report: Report, markers: Markers = SIGNS) -> Iterator[tuple[str, list[str]]]:
    """(heading, lines) of every part of the report that has something, in the order a reviewer reads."""
    for heading, changes in (("Claims", report.claims), ("Agreement with measurements", report.agreement)):
        if changes:
            lines = []
            for change in changes:
                place = f"  {change.place.path}:{change.place.line}" if change.place else ""
                lines.append(f"{STATUS[change.after]} {claim_what(change)}: {claim_move(change)}{place}")
                if change.because:
                    lines.append(f"{_INDENT}{because(change.because, report.files)}")
            yield heading, lines
    if report.values:
        lines = []
        for cause in report.causes:
            lines.append(cause_line(cause))
            for value in report.values:
                if cause.id in value.causes:
                    move = f"{number(value.before, value.unit)} → {number(value.after, value.unit)}"
                    lines.append(f"{_INDENT}{value_where(value)}: {move} {relative(value.relative)}".rstrip())
        yield f"Values changed ({len(report.values)}), by the edit that caused them", lines
    if report.evidence:
        yield (
            "Evidence",
            [
                f"{status.record}: {evidence_move(status)} {because(status.because, report.files)}".rstrip()
                for status in report.evidence
            ],
        )
    new, fixed, changed = report.new_diagnostics, report.fixed_diagnostics, report.changed_diagnostics
    if new or fixed or changed:
        lines = [f"{markers.new}{diagnostic_text(d)}" for d in new]
        lines += [f"{markers.fixed}{diagnostic_text(d)}" for d in fixed]
        for moved in changed:
            lines += [f"{markers.changed}{diagnostic_text(moved.after)}", f"{_INDENT}was: {moved.before.message}"]
        yield f"Diagnostics: {len(new)} new, {len(fixed)} fixed, {len(changed)} changed", lines
    records = report.records
    if records.added or records.removed or records.renamed or records.edited:
        lines = [f"added: {record_id}" for record_id in records.added]
        lines += [f"removed: {record_id}" for record_id in records.removed]
        lines += [f"renamed: {rename.old} → {rename.new}" for rename in records.renamed]
        lines += [f"edited: {record_id}" for record_id in records.edited]
        yield "Records", lines
    links = report.links
    if links.added or links.removed or links.new_orphans:
        lines = [f"{markers.added}{source} → {target}" for source, target in links.added]
        lines += [f"{markers.removed}{source} → {target}" for source, target in links.removed]
        lines += [f"new orphan: {record_id}" for record_id in links.new_orphans]
        yield "Links", lines
    if report.pages:
        yield f"Pages whose content may change ({len(report.pages)})", [f"records/{page}" for page in report.pages]

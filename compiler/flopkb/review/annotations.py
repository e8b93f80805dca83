"""`flopkb diff --format github`: workflow commands that GitHub shows as annotations on the pull request.

On the changed lines (the spec that was edited, a new diagnostic) and on
lines that did not change but whose results did: a claim that now fails
because an accelerator it computes with changed, the id line of a record
whose values or evidence changed without an edit of its own. No text diff
can show the second kind.
"""

from __future__ import annotations

from collections.abc import Iterator

from flopkb.report.reporters import workflow_command
from flopkb.review.model import DiagnosticLine, Place, Report
from flopkb.review.wording import STATUS, because, cause_line, claim_move, claim_what, evidence_move, summary

TITLE = "flopkb diff"


def render_github(report: Report) -> str:
    return "".join(line + "\n" for line in _annotations(report)) + summary(report) + "\n"


def _annotation(level: str, place: Place | None, message: str) -> Iterator[str]:
    if place is None:
        return
    yield workflow_command(level, {"file": place.path, "line": str(place.line), "title": TITLE}, message)


def _annotations(report: Report) -> Iterator[str]:
    for change in (*report.claims, *report.agreement):
        if change.after is None:
            continue  # gone: its place is a line of the base's file, not of the head's
        level = "warning" if change.regressed else "notice"
        reason = because(change.because, report.files)
        message = f"{STATUS[change.after]} {claim_what(change)}: {claim_move(change)}" + (
            f"; {reason}" if reason else ""
        )
        yield from _annotation(level, change.place, message)
    for cause in report.causes:
        yield from _annotation("notice", cause.place, cause_line(cause))
    values_by_record: dict[str, list[str]] = {}
    for value in report.values:
        values_by_record.setdefault(value.record, []).append(value.causes[0])
    causes = {cause.id: cause for cause in report.causes}
    for record_id, ids in sorted(values_by_record.items()):
        if record_id in report.files:  # edited, added or removed: its own lines show in the text diff
            continue
        named = sorted({causes[cause].record for cause in ids if cause in causes and causes[cause].record})
        reason = because(tuple(named), report.files)
        message = f"{len(ids)} computed values of {record_id} changed" + (f", {reason}" if reason else "")
        yield from _annotation("notice", report.places.get(record_id), message)
    for status in report.evidence:
        reason = because(status.because, report.files)
        message = f"evidence of {status.record}: {evidence_move(status)}" + (f", {reason}" if reason else "")
        yield from _annotation("warning" if status.regressed else "notice", status.place, message)
    for line in report.new_diagnostics:
        yield _diagnostic(line, f"new: {line.message}")
    for moved in report.changed_diagnostics:
        yield _diagnostic(moved.after, f"changed: {moved.after.message} (was: {moved.before.message})")


def _diagnostic(line: DiagnosticLine, message: str) -> str:
    return workflow_command(
        line.severity, {"file": line.path, "line": str(line.line), "col": str(line.column), "title": line.code}, message
    )

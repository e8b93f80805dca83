"""The words every format of `flopkb diff` shares: the summary line, statuses, values, causes."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from flopkb.formulas.units import format_value
from flopkb.review.model import (
    Cause,
    ClaimChange,
    Commit,
    DiagnosticLine,
    EvidenceChange,
    Report,
    SpecEdit,
    ValueChange,
    summary_counts,
)


class Markup(NamedTuple):
    """How a format shows the parts of a line that come from records: as code (a parameter), and as text."""

    code: Callable[[str], str]
    text: Callable[[str], str]


PLAIN = Markup(lambda part: f"`{part}`", str)
"""A terminal's, an annotation's and the JSON's: code between backticks, text as it is."""

STATUS = {"ok": "✓", "mismatch": "✗", "disagrees": "≠", "unchecked": "?", None: "—"}
MARKER = "<!-- flopkb-diff -->"


def commit_text(commit: Commit) -> str:
    return commit.label if commit.sha is None else f"{commit.label}@{commit.sha[:7]}"


def title(report: Report) -> str:
    """`flopkb diff: origin/main@1a2b3c4 → HEAD@9f8e7d6 (merge base 1a2b3c4)`."""
    text = f"flopkb diff: {commit_text(report.named_base or report.base)} → {commit_text(report.head)}"
    if report.named_base is not None and report.base.sha is not None:
        text += f" (merge base {report.base.sha[:7]})"
    if report.fell_back:
        text += f" ({report.fell_back})"
    return text


def summary(report: Report) -> str:
    """One line: what a reviewer must see first, most important first."""
    counts = summary_counts(report)
    parts = []
    if counts["claims_changed"]:
        parts.append(_plural(counts["claims_changed"], "claim") + " changed status")
    if counts["new_disagreements"]:
        parts.append(_plural(counts["new_disagreements"], "new disagreement") + " with a measurement")
    elif counts["agreement_changed"]:
        parts.append(_plural(counts["agreement_changed"], "agreement") + " with a measurement changed")
    if counts["values_changed"]:
        records = in_records(counts["records_with_values_changed"], counts["records_with_values_changed_not_edited"])
        parts.append(f"{_plural(counts['values_changed'], 'value')} changed {records}")
    if counts["evidence_changed"]:
        parts.append(_plural(counts["evidence_changed"], "evidence status") + " changed")
    if counts["new_diagnostics"]:
        parts.append(
            f"{_plural(counts['new_diagnostics'], 'new diagnostic')} ({_plural(counts['new_errors'], 'error')})"
        )
    if counts["fixed_diagnostics"]:
        parts.append(f"{counts['fixed_diagnostics']} fixed")
    if counts["changed_diagnostics"]:
        parts.append(f"{_plural(counts['changed_diagnostics'], 'diagnostic')} changed")
    for key, noun in (("records_added", "added"), ("records_removed", "removed"), ("records_renamed", "renamed")):
        if counts[key]:
            parts.append(f"{_plural(counts[key], 'record')} {noun}")
    if counts["pages_changed"]:
        parts.append(_plural(counts["pages_changed"], "page") + " may change")
    return " · ".join(parts) if parts else "no change to records, values, claims, evidence, links or pages"


def _plural(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "es" if noun.endswith("s") else noun + "s"
    return f"{count} {plural}"


def number(value: float | None, unit: str = "") -> str:
    """A computed value as `flopkb check` shows it (`computes 131072 byte`): a value equal to a claim's stated value
    reads as it."""
    if value is None:
        return "—"
    text = format_value(value)
    return f"{text} {unit}" if unit and unit != "1" else text


def relative(change: float | None) -> str:
    if change is None:
        return ""
    return f"{change * 100:+.3g}%"


def claim_what(change: ClaimChange) -> str:
    """`flops/x#speedup expect[1] on hw/h100 (batch=64)`."""
    text = f"{change.record}#{change.formula} expect[{change.index}]"
    if change.hardware:
        text += f" on {change.hardware}"
    if change.where:
        text += f" ({change.where})"
    if change.measured:
        text += f" vs {change.measured}"
    return text


def claim_move(change: ClaimChange) -> str:
    """`✓ 1.02 → ✗ 1.31 (stated 1.00)`: the computed value with its status on each side, then what the claim states,
    or what the source measured (`(measured 4.4 → 2.4)` when that changed too)."""
    before = f"{STATUS[change.before]} {number(change.before_value)}" if change.before else "— new"
    after = f"{STATUS[change.after]} {number(change.after_value)}" if change.after else "— gone"
    label = "measured" if change.measured else "stated"
    was = change.stated_before
    held = change.stated if was is None or was == change.stated else f"{was} → {change.stated}"
    return f"{before} → {after} ({label} {held})"


def because(ids: tuple[str, ...], files: dict[str, str]) -> str:
    """`because records/hw/h200.yaml changed`, or ''."""
    if not ids:
        return ""
    named = [files.get(record_id, record_id) for record_id in ids]
    return f"because {', '.join(named)} changed"


def spec_what(spec: SpecEdit, markup: Markup = PLAIN) -> str:
    """ "`memory_bandwidth` of hw/h200: 4.8 TB/s (vendor-spec) → 4.9 TB/s (vendor-spec)"."""
    before, after = (markup.text(side or "(none)") for side in (spec.before, spec.after))
    return f"{markup.code(spec.parameter)} of {markup.text(spec.accelerator)}: {before} → {after}"


def cause_line(cause: Cause, markup: Markup = PLAIN) -> str:
    """ "`memory_bandwidth` of hw/h200: 4.8 TB/s → 4.9 TB/s → 37 values in 6 records (5 records not edited
    themselves)"."""
    what = markup.text(cause.what) if cause.spec is None else spec_what(cause.spec, markup)
    return f"{what} → {_plural(cause.values, 'value')} {in_records(len(cause.records), cause.not_edited)}"


def in_records(records: int, not_edited: int) -> str:
    """`in 6 records (5 records not edited themselves)`: where values changed, and how many of those records the change
    did not edit."""
    text = f"in {_plural(records, 'record')}"
    if not_edited == records:
        return text + (" not edited itself" if records == 1 else " not edited themselves")
    if not_edited:
        return text + f" ({_plural(not_edited, 'record')} not edited {'itself' if not_edited == 1 else 'themselves'})"
    return text


def value_where(change: ValueChange) -> str:
    text = f"{change.record}#{change.formula}"
    if change.hardware:
        text += f" on {change.hardware}"
    if change.point:
        text += f" at {change.point}"
    return text


def diagnostic_text(line: DiagnosticLine) -> str:
    """`records/x.yaml:12:5: error claim-mismatch: ...`, as `check` prints it."""
    return f"{line.path}:{line.line}:{line.column}: {line.severity} {line.code}: {line.message}"


def evidence_move(change: EvidenceChange) -> str:
    return f"{change.before or '—'} → {change.after or '—'}"

"""Hover on a hardware parameter: `hw.name` in an expression, or a spec of an accelerator record.

It shows the parameter's value on each accelerator of the base that has it,
with its basis, as the spec check read it (`flopkb.formulas.specs.read_specs`,
the reader the formula stage computes with): the value as written, as `flopkb
eval` prints it beside an evaluation and the accelerator's page shows it. A
spec that fails the check (`invalid-value`, `unit-mismatch`) is listed as
such: no formula computes with it. What the base wrote (ids, values, bases, the
vocabulary's unit and description) is shown as text (`flopkb.review.markdown.editor_text`),
as the other hovers show it: no image, link, HTML or emphasis of theirs. Like them it is cut at a `RowLimit`: its
first accelerators, each piece of text cut, and where the rest is.
"""

from __future__ import annotations

import re

from flopkb.formulas.eval_table import RowLimit, TextCut
from flopkb.formulas.specs import read_specs
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.review.markdown import editor_text

HW_NAME = re.compile(r"\bhw\.(\w+)")
ACCELERATOR = "accelerator"


def hw_parameter_at(line_text: str, column: int) -> str | None:
    """The parameter of the `hw.name` written across flopkb's `column` of the line, if any."""
    for match in HW_NAME.finditer(line_text):
        if match.start() < column <= match.end() + 1:
            return match.group(1)
    return None


def spec_at(entry: Entry, line: int) -> str | None:
    """The spec of an accelerator record whose item holds `line`, if any."""
    source = entry.source
    if entry.summary.kind != ACCELERATOR or source is None or not isinstance(source.data.get("specs"), dict):
        return None
    starts = sorted((source.position(("specs", name), key=True)[0], name) for name in source.data["specs"])
    after = [source.position((key,), key=True)[0] for key in source.data if key != "specs"]
    end = min((start for start in after if start > starts[0][0]), default=None) if starts else None
    for start, name in reversed(starts):
        if start <= line and (end is None or line < end):
            return str(name)
    return None


def parameter_hover(kb: KnowledgeBase, entry: Entry, line: int, column: int, limit: RowLimit) -> str | None:
    """Markdown: the value of the parameter under flopkb's (line, column) on the first `limit.total` accelerators, with
    its basis, then how many more; each piece of text cut at `limit`."""
    lines = entry.source.text.split("\n") if entry.source is not None else []
    parameter = hw_parameter_at(lines[line - 1], column) if line <= len(lines) else None
    parameter = parameter or spec_at(entry, line)
    if parameter is None:
        return None
    declared = kb.vocabulary.parameters.get(parameter) if kb.vocabulary is not None else None
    cut = TextCut(limit)
    heading = f"**hw.{editor_text(cut(parameter))}**" + (
        f" · {editor_text(cut(declared.unit))}: {editor_text(cut(declared.description))}" if declared else ""
    )
    rows = _rows(kb, parameter, cut)
    more = len(rows) - limit.total
    if more > 0:
        rows = [
            *rows[: limit.total],
            f"- … {more:,} more accelerators: the site's accelerators/compare.html has them all",
        ]
    return "\n".join([heading, "", *(rows or ["no accelerator gives it"])])


def _rows(kb: KnowledgeBase, parameter: str, cut: TextCut) -> list[str]:
    """A list item for each accelerator that gives `parameter`: its value and basis, or that its value fails the
    spec check."""
    rows = []
    for record_id in sorted(kb.entries):
        accelerator = kb.entries[record_id]
        if accelerator.summary.kind != ACCELERATOR:
            continue
        specs = read_specs(accelerator, kb.vocabulary)[0]
        if specs is None:
            continue
        figure = specs.figures.get(parameter)
        if figure is not None:
            shown = f"{editor_text(cut(figure.text))} ({editor_text(cut(figure.basis))})"
            rows.append(f"- {editor_text(cut(record_id))}: {shown}")
        elif parameter in specs.invalid:
            rows.append(f"- {editor_text(cut(record_id))}: its value fails the spec check; no formula computes with it")
    return rows

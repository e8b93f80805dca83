"""Hover: what flopkb knows of the thing under the cursor, from the last finished check.

- on a link or ref: the target's kind, title, evidence standing and first
  lines;
- on a formula (any line of its item): its evaluations per accelerator with
  units, the hardware figures with their basis, its claims and the model
  against each measurement (at most `LIMIT` rows, then how many more): the
  tables `flopkb eval` prints, from the same code
  (`flopkb.formulas.eval_table.formula_table`);
- on `hw.name` in an expression or on a spec of an accelerator: its value on
  each accelerator, with the basis (`flopkb.editor.spec_hover`).

Each is cut at `LIMIT` (rows, lines, and characters of each piece of record
text) and says where the rest is, so that a hover stays small whatever the
base.
"""

from __future__ import annotations

import re

from flopkb.editor.spec_hover import parameter_hover
from flopkb.formulas.eval_table import WIDTH, RowLimit, TextCut, limited_text
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import Link
from flopkb.load.models import formulas_of
from flopkb.report import cut as cutting
from flopkb.review.markdown import editor_text

FIRST_LINES = 6
"""How many lines of a target's description or statement a hover shows."""
LIMIT = RowLimit(each=10, total=60, width=WIDTH, lines=130)
"""How much a hover shows: of a formula's tables, the first 10 evaluations on each accelerator and 60 rows of a table
in all, so that a sweep of thousands of points on hundreds of accelerators, or thousands of claims, answers at once;
of record text (an id, a title, a `where`, a first line, ...), 120 characters a piece, so that a megabyte of it does
too; 130 lines of a formula's tables in all (their 2 x 60 rows and 10 more lines). Each cut says where the rest is."""


def entry_at(kb: KnowledgeBase, path: str) -> Entry | None:
    return next((entry for entry in kb.entries.values() if entry.path == path), None)


def link_at(kb: KnowledgeBase, entry: Entry, line: int, column: int) -> Link | None:
    """The link or ref of `entry` written across flopkb's (line, column), if any."""
    for link in kb.links_of(entry.id):
        at_line, at_column = link.position
        if at_line == line and at_column <= column < at_column + max(len(link.text), 1):
            return link
    return None


def formula_at(entry: Entry, line: int) -> int | None:
    """The index of the formula whose item holds `line`, if any."""
    if entry.record is None or entry.source is None or not formulas_of(entry.record):
        return None
    source = entry.source
    starts = [source.position(("formulas", index))[0] for index in range(len(formulas_of(entry.record)))]
    after = [source.position((key,), key=True)[0] for key in source.data if key != "formulas"]
    end = min((start for start in after if start > starts[0]), default=None)
    for index in reversed(range(len(starts))):
        if starts[index] <= line and (end is None or line < end):
            return index
    return None


def eval_text(kb: KnowledgeBase, record_id: str, index: int) -> str | None:
    """The formula's tables as `flopkb eval` prints them (without colour, at its width), cut at `LIMIT`."""
    results = kb.formulas.get(record_id, [])
    return limited_text(results[index], LIMIT) if index < len(results) else None


def fenced(text: str) -> str:
    """`text` in a code block whose fence no run of backticks in it (a title's) can close."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))
    return f"{fence}text\n{text}\n{fence}"


def describe_target(kb: KnowledgeBase, record_id: str, anchor: str | None) -> str:
    """Markdown: the record's id, kind, title, evidence standing and the first lines of its words, each cut at
    `LIMIT`; what the records wrote shown as text (`editor_text`): no image, link, HTML or emphasis of theirs. When
    anything is left out, a last line says which file has it all."""
    entry = kb.entries[record_id]
    summary = entry.summary
    cut = TextCut(LIMIT)
    anchored = f"#{editor_text(cut(anchor))}" if anchor else ""
    heading = f"**{editor_text(cut(record_id))}**{anchored} · {editor_text(cut(summary.kind or 'not valid'))}"
    lines = [heading]
    if summary.title:
        lines.append(f"*{editor_text(cut(summary.title))}*")
    if kb.evidence is not None and record_id in kb.evidence.records:
        lines.append(f"evidence: {kb.evidence.standing(record_id)}")
    record = entry.record
    words = str(getattr(record, "description", None) or getattr(record, "statement", None) or "").strip().splitlines()
    if words:
        lines += ["", *(editor_text(cut(line)) for line in words[:FIRST_LINES])]
    if cut.cut_any or len(words) > FIRST_LINES:
        lines += ["", f"… the rest is in {editor_text(cut(entry.path))}"]
    return "\n".join(lines)


def hover_markdown(kb: KnowledgeBase, path: str, line: int, column: int) -> str | None:
    """What a hover at flopkb's (line, column) of the file at `path` shows, as markdown; None for nothing."""
    entry = entry_at(kb, path)
    if entry is None:
        return None
    link = link_at(kb, entry, line, column)
    if link is not None:
        if link.resolved is None or link.resolved not in kb.entries:
            return f"{editor_text(cutting.cut(link.text, LIMIT.width))} resolves to no single record"
        text = describe_target(kb, link.resolved, link.anchor)
        if link.anchor is not None:
            target = kb.entries[link.resolved]
            formula_ids = target.summary.formula_ids or ()
            if link.anchor in formula_ids:
                table = eval_text(kb, link.resolved, formula_ids.index(link.anchor))
                text += f"\n\n{fenced(table)}" if table else ""
        return text
    shown = parameter_hover(kb, entry, line, column, LIMIT)
    if shown is not None:
        return shown
    index = formula_at(entry, line)
    if index is not None:
        table = eval_text(kb, entry.id, index)
        return fenced(table) if table else None
    return None

"""Inlay hints: after each claim (`expect` row), what flopkb computed: ✓ or ✗, and by how much.

A stated value reads `= 177.778 FLOP/byte ✓` (or `✗ … (off by 28%)`); a
`measured:` claim reads `model 0.125, measured 0.2: off by 60%`. The
numbers are the claims of the last finished check (`kb.formulas`), the ones
`flopkb eval` prints. A client that takes `workspace/inlayHint/refresh` is
asked to fetch them again after a full check only when the hints of an open
document differ from those of the check before it (`shown`): a claim
computed anew, or a buffer's lines moved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from flopkb.editor.positions import line_end, lines_of, lsp_position
from flopkb.formulas.results import CLAIM_DISAGREES, CLAIM_MISMATCH, CLAIM_OK, Claim, FormulaResult
from flopkb.formulas.units import format_number
from flopkb.kb.entry import Entry
from flopkb.kb.knowledge_base import KnowledgeBase

if TYPE_CHECKING:
    from flopkb.editor.checked import Checked

Hint = tuple[int, str]
"""(line, label): the label goes at the end of that line (1-based)."""

_MARK = {CLAIM_OK: "✓", CLAIM_MISMATCH: "✗", CLAIM_DISAGREES: "≠"}


def claim_label(result: FormulaResult, claim: Claim) -> str:
    unit = "" if result.unit.strip() == "1" else f" {result.unit}"
    if claim.computed is None:
        return f"not checked: {claim.reason}" if claim.reason else "not checked"
    computed = f"{format_number(claim.computed, 6)}{unit}"
    off = claim.off_by
    by = f" (off by {format_number(off * 100, 3)}%)" if off is not None and claim.status != CLAIM_OK else ""
    mark = _MARK.get(claim.status, "?")
    if claim.measurement is not None and claim.stated is not None:
        return f"{mark} model {computed}, measured {format_number(claim.stated, 6)}{unit}{by}"
    return f"= {computed} {mark}{by}"


def claim_hints(kb: KnowledgeBase, entry: Entry) -> list[Hint]:
    """A hint at the end of the first line of every claim of the record's formulas."""
    if entry.source is None:
        return []
    hints = []
    for index, result in enumerate(kb.formulas.get(entry.id, [])):
        for claim in result.claims:
            line, _ = entry.source.position(("formulas", index, "expect", claim.index))
            hints.append((line, claim_label(result, claim)))
    return hints


def document_hints(checked: Checked, rel: str, encoding: str) -> list[types.InlayHint] | None:
    """The inlay hints of the file `rel` in the check `checked`, at the client's positions; None when the check
    compiled no record there."""
    entry = checked.entry_at(rel)
    if checked.kb is None or entry is None:
        return None
    text = checked.text_of(entry.path)
    lines = lines_of(text)
    return [
        types.InlayHint(position=lsp_position(text, line_end(lines, line), encoding), label=label, padding_left=True)
        for line, label in claim_hints(checked.kb, entry)
    ]


def shown(checked: Checked, encoding: str) -> dict[str, list[types.InlayHint] | None]:
    """The inlay hints of the open documents (the buffers the check read): what the client shows."""
    return {rel: document_hints(checked, rel, encoding) for rel in checked.buffers}

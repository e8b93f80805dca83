"""Link previews: for every record, a small script the site loads when a reader hovers, focuses or taps a link to it.

A preview holds what a reader decides on before following a link: the record's
kind, title, evidence status and first paragraph, and for each of its formulas
the expression and its first value on every accelerator it is evaluated on
(the page being read picks the accelerators it shows: `site/assets/flopkb.js`).
It is written beside the record's page (`previews/<id>.js`, one of the page's
files, rendered under the page's key) as a script calling `flopkbPreview(...)`,
so previews load from `file://` as well as from a server, and cost nothing
until a reader asks for one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from flopkb.site.pages.common import STATUS_WORDS, json_for_script
from flopkb.site.pages.values import show_input, show_value

if TYPE_CHECKING:
    from flopkb.formulas.results import FormulaResult
    from flopkb.site.pages.common import Site

SUMMARY_CHARS = 320
"""A preview's first paragraph is cut (at a word, with "…") beyond this many characters."""
MAX_VALUES = 8
"""Accelerators a formula's preview lists at most."""

_FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.DOTALL)
_SUMMARY_FIELDS = ("description", "statement")


def preview_path(record_id: str) -> str:
    """Where a record's preview is written in the docs folder (and served from the site's root)."""
    return f"previews/{record_id}.js"


def first_paragraph(html: Markup | str) -> str:
    """The text of the first paragraph of sanitised HTML (the whole text when it has no `<p>`), cut to
    `SUMMARY_CHARS` at a word."""
    found = _FIRST_PARAGRAPH.search(str(html))
    text = Markup(found.group(1) if found else str(html)).striptags()
    if len(text) <= SUMMARY_CHARS:
        return text
    return text[:SUMMARY_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"


def summary_of(context: dict[str, Any]) -> str:
    """A record's first paragraph, from what its page shows first: its description or statement, else its notes,
    else (a source) its citation."""
    for name in _SUMMARY_FIELDS:
        if context.get(name):
            return first_paragraph(context[name])
    if context.get("notes"):
        return first_paragraph(context["notes"])
    citation = context.get("citation")
    if citation is not None:
        return " ".join(str(part) for part in (citation.authors, citation.year, citation.venue) if part)
    return ""


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`])")
KIND_WORDS = {
    "flop": "Flop class",
    "fact": "Fact",
    "engine": "Engine",
    "accelerator": "Accelerator",
    "source": "Source",
}


def description(context: dict[str, Any]) -> str:
    """A record page's description (search engines, Open Graph): its kind and the first sentence of its first
    paragraph."""
    kind = KIND_WORDS.get(context["kind"], context["kind"])
    sentence = _SENTENCE_END.split(summary_of(context), 1)[0]
    return f"{kind}: {sentence}" if sentence else f"{kind}: {context['title']}"


def formula_preview(site: Site, result: FormulaResult) -> dict[str, Any]:
    """A formula as its preview shows it: title, expression, and the value at its first point on each accelerator."""
    values: dict[str, list[str]] = {}
    point = ""
    for evaluation in result.evaluations:
        key = evaluation.hardware or ""
        if key in values or (key and key not in site.entries):
            continue
        if not point and evaluation.point:
            point = ", ".join(f"{name} = {show_input(value)}" for name, value in evaluation.point)
        values[key] = [key, site.titles.get(key, ""), show_value(evaluation.value, result.unit)]
        if len(values) >= MAX_VALUES:
            break
    expr = result.expr
    return {
        "title": result.title or result.id,
        "latex": expr.to_latex() if expr is not None else "",
        "text": str(expr) if expr is not None else "",
        "at": point,
        "values": list(values.values()),
    }


def preview_script(site: Site, record_id: str, context: dict[str, Any]) -> str:
    """The preview of a record whose page was rendered from `context`, as the script the site loads."""
    status = context["evidence"]["standing"]  # what the page's own badge says
    data = {
        "id": record_id,
        "kind": context["kind"],
        "title": context["title"],
        "status": status,
        "status_word": STATUS_WORDS.get(status, status),
        "summary": summary_of(context),
        "formulas": {result.id: formula_preview(site, result) for result in site.kb.formulas.get(record_id, ())},
    }
    return f"flopkbPreview({json_for_script(data)});\n"


def page_accelerators(site: Site, record_id: str, kind: str) -> str:
    """The accelerators of a record's page, space-separated: a preview read there shows values on these."""
    if kind == "accelerator":
        return record_id
    results = site.kb.formulas.get(record_id, ())
    found = dict.fromkeys(accelerator for result in results for accelerator in result.hardware)
    return " ".join(accelerator for accelerator in found if accelerator in site.entries)

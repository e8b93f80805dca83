"""Errata on a record's page: the quoted words marked where they stand, the correction beside them.

The record's words are rendered as written. Before a field's markdown is
rendered, each erratum's quote is framed by private-use characters carrying
its number (`flopkb.links.errata.quote_pattern` finds it, as the checker
does); after rendering and sanitising, the frames become a `<mark>` around
the words with a numbered superscript linking to the correction, which
follows the field in an `<aside>`. A frame whose two ends land in different
elements (a quote that starts inside a code span and ends outside it) keeps
only its superscript: markup is never left unbalanced. A field that already
holds one of those characters is not framed at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup

from flopkb.links.errata import quote_pattern
from flopkb.load.models import erratum_field_path
from flopkb.site.pages.common import badge_html

if TYPE_CHECKING:
    from flopkb.links.debt import ErratumItem
    from flopkb.site.pages.common import Page

_OPEN, _MID, _CLOSE, _END = "\ue000", "\ue001", "\ue002", "\ue003"
_FRAMES = re.compile(f"{_OPEN}(\\d+){_MID}|{_CLOSE}(\\d+){_END}")
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>")
_VOID = frozenset({"br", "hr", "img"})


@dataclass(frozen=True, slots=True)
class ErratumView:
    number: int
    text: str
    """The quote as written in the erratum."""
    quote: Markup
    """The quoted words as the field shows them (inline markdown)."""
    correction: Markup
    basis: str


def errata_by_field(page: Page, items: Iterable[ErratumItem]) -> dict[tuple[str | int, ...], list[ErratumView]]:
    """The errata of a record whose quote stands in its field, by the field's data path."""
    found: dict[tuple[str | int, ...], list[ErratumView]] = {}
    for item in items:
        if item.found:
            view = ErratumView(
                item.number, item.quote, page.inline(item.quote), page.prose(item.correction), item.basis
            )
            found.setdefault(erratum_field_path(item.in_field), []).append(view)
    return found


def frame_quotes(text: str, errata: Sequence[ErratumView]) -> str:
    """`text` with each erratum's quote framed by its number (the first occurrence; overlapping quotes: the first)."""
    if not errata or any(mark in text for mark in (_OPEN, _MID, _CLOSE, _END)):
        return text
    spans: list[tuple[int, int, int]] = []
    for view in errata:
        match = quote_pattern(view.text).search(text)
        if match and not any(match.start() < end and start < match.end() for start, end, _ in spans):
            spans.append((match.start(), match.end(), view.number))
    for start, end, number in sorted(spans, reverse=True):
        text = f"{text[:start]}{_OPEN}{number}{_MID}{text[start:end]}{_CLOSE}{number}{_END}{text[end:]}"
    return text


def mark_quotes(rendered: Markup, errata: Sequence[ErratumView]) -> Markup:
    """The rendered field with its frames turned into marks and superscripts, then the corrections beside it."""
    if not errata:
        return rendered
    text = str(rendered)
    opens = {int(match.group(1)): match for match in _FRAMES.finditer(text) if match.group(1)}
    balanced = {
        int(match.group(2))
        for match in _FRAMES.finditer(text)
        if match.group(2)
        and int(match.group(2)) in opens
        and _balanced(text[opens[int(match.group(2))].end() : match.start()])
    }

    def replace(match: re.Match[str]) -> str:
        if match.group(1):
            number = int(match.group(1))
            return f'<mark class="flopkb-erratum-mark" id="erratum-{number}">' if number in balanced else ""
        number = int(match.group(2))
        closing = "</mark>" if number in balanced else ""
        return (
            f'{closing}<sup class="flopkb-erratum-ref"><a href="#erratum-note-{number}" '
            f'title="erratum {number}">{number}</a></sup>'
        )

    marked = _FRAMES.sub(replace, text)
    return Markup(marked + notes_html(errata))


def notes_html(errata: Sequence[ErratumView]) -> str:
    notes = "".join(
        f'<p class="flopkb-erratum-note" id="erratum-note-{view.number}">'
        f'<a class="flopkb-erratum-note__number" href="#erratum-{view.number}">{view.number}</a> '
        f'<span class="flopkb-erratum-note__label">Erratum</span> '
        f"<q>{view.quote}</q>: "
        f"{_inline(view.correction)} {badge_html(view.basis)}</p>"
        for view in errata
    )
    return f'\n<aside class="flopkb-errata" aria-label="Errata">{notes}</aside>'


def _inline(correction: Markup) -> str:
    """A one-paragraph correction without its `<p>`, so that it reads on in the note."""
    text = str(correction)
    if text.startswith("<p>") and text.endswith("</p>") and text.count("<p>") == 1:
        return text[3:-4]
    return f"<span>{text}</span>" if "<p>" not in text else text.replace("<p>", "<span>").replace("</p>", "</span> ")


def _balanced(fragment: str) -> bool:
    """No element opens without closing, or closes without opening, in `fragment`."""
    depth: list[str] = []
    for closing, name, self_closing in _TAG.findall(fragment):
        name = name.lower()
        if self_closing or name in _VOID:
            continue
        if not closing:
            depth.append(name)
        elif not depth or depth.pop() != name:
            return False
    return not depth

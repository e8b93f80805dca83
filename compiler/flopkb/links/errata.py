"""Errata: corrections pinned to the words they correct, which stay as written.

An erratum names a `field` of its record (`description`,
`hardware_parameters[0].effect`) and `quote`s words of it. The quote must
stand in that field, runs of blanks and line breaks counting as one space
(a block scalar's line breaks are not the author's words); else
`erratum-quote-missing` at the quote, so an erratum cannot drift from the
words it corrects. A field that is not text of the record is `invalid-value`
at `field`. Its `basis` needs `sources` as a figure's does (`missing-source`).
The correction's links are prose links, checked by the link stage.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from flopkb.links.debt import NEEDS_SOURCES, ErratumItem
from flopkb.load.models import erratum_field_path, required_text_fields
from flopkb.load.placeholders import markdown_fields
from flopkb.load.source import Path, Source
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.hints import did_you_mean
from flopkb.report.paths import field_path


def quote_pattern(quote: str) -> re.Pattern[str]:
    """The quote's words, any run of blanks between them: how it is found in its field."""
    return re.compile(r"\s+".join(re.escape(word) for word in quote.split()))


def field_text(data: Any, path: tuple[str | int, ...]) -> str | None:
    """The string at `path` in a record's data, or None."""
    for step in path:
        if isinstance(step, int) and isinstance(data, list) and 0 <= step < len(data):
            data = data[step]
        elif isinstance(step, str) and isinstance(data, dict):
            data = data.get(step)
        else:
            return None
    return data if isinstance(data, str) else None


def missing_source(source: Source, basis_at: Path, where: str, basis: str, otherwise: str) -> Diagnostic:
    """`missing-source` on the basis at `basis_at` of a figure or erratum (`where`) that gives no sources."""
    line, column = source.position(basis_at)
    return make(
        "missing-source",
        source.path,
        line,
        column,
        f"{cut(where)}: the basis '{basis}' needs sources, and there are none",
        f"add sources: a source record or an http(s) URL; or set the basis to {otherwise}",
    )


_LISTED = 8
"""A hint lists at most this many of a record's text fields."""


def _field_hint(written: str, record: Any, data: Any) -> str:
    """The text fields of this record (its kind's markdown fields, as written in it) closest to `written`, or the
    first of them."""
    kind: type = type(record)
    own = {key: value for key, value in data.items() if key != "errata"} if isinstance(data, dict) else data
    fields = list(_text_fields(own, markdown_fields(kind), ""))
    close = did_you_mean(written, fields)
    if close is not None:
        return close
    more = ", ..." if len(fields) > _LISTED else ""
    return f"name a text field of this record: {', '.join(fields[:_LISTED])}{more}" if fields else "remove the erratum"


def _text_fields(data: Any, names: frozenset[str], prefix: str, key: str | None = None) -> Iterator[str]:
    """The erratum spelling (`workarounds[0]`, `hardware_parameters[1].effect`) of every text in `data` under a key
    of `names`."""
    if isinstance(data, dict):
        for name, value in data.items():
            yield from _text_fields(value, names, f"{prefix}.{name}" if prefix else str(name), str(name))
    elif isinstance(data, list):
        for position, item in enumerate(data):
            yield from _text_fields(item, names, f"{prefix}[{position}]", key)
    elif isinstance(data, str) and key in names:
        yield prefix


def _no_text_field(label: str, here: Path, field: str, record: Any, source: Source) -> Diagnostic:
    line, column = source.position((*here, "field"))
    message = f"{label}.field: '{cut(field)}' is no text field of this record"
    return make("invalid-value", source.path, line, column, message, _field_hint(field, record, source.data))


def _reported_broken(field: str, record: Any, data: Any) -> bool:
    """Whether `field` is a required text field of the record that is missing or not text: validation reported it,
    and the record stands in for it (`flopkb.load.validate`)."""
    top = erratum_field_path(field)[0]
    written = data.get(top) if isinstance(data, dict) else None
    return isinstance(top, str) and top in required_text_fields(type(record)) and not isinstance(written, str)


def check_errata(record_id: str, record: Any, source: Source) -> tuple[tuple[ErratumItem, ...], list[Diagnostic]]:
    """The record's errata as evidence items, and their problems."""
    items: list[ErratumItem] = []
    problems: list[Diagnostic] = []
    for index, erratum in enumerate(record.__dict__.get("errata", ())):
        here, label = ("errata", index), field_path(source.written(("errata", index)))
        at = source.view(erratum_field_path(erratum.field))  # None: words of a list item left out, not checked
        text = field_text(source.data, at) if at is not None else None
        found = False
        if text is None:
            # the words of an item left out, or of a required field missing or not text: each has its own diagnostic
            if at is not None and not _reported_broken(erratum.field, record, source.data):
                problems.append(_no_text_field(label, here, erratum.field, record, source))
        elif not erratum.quote.split() or quote_pattern(erratum.quote).search(text) is None:
            line, column = source.position((*here, "quote"))
            problems.append(
                make(
                    "erratum-quote-missing",
                    source.path,
                    line,
                    column,
                    f"{label}.quote is not in {erratum.field}: {_short(erratum.quote)!r}",
                    f"copy the words again from {erratum.field}, exactly; "
                    "or remove the erratum if the words it corrected are gone",
                )
            )
        else:
            found = True
        if erratum.basis in NEEDS_SOURCES and not erratum.sources and not source.rejects((*here, "sources")):
            problems.append(missing_source(source, (*here, "basis"), label, erratum.basis, "derived"))
        line, column = source.position((*here, "quote"))
        items.append(
            ErratumItem(
                record_id,
                index,
                erratum.field,
                erratum.quote,
                erratum.correction,
                erratum.basis,
                tuple(erratum.sources),
                found,
                source.path,
                line,
                column,
            )
        )
    return tuple(items), problems


def _short(text: str) -> str:
    """`text` on one line (a quote's blanks count as one space), cut."""
    return cut(" ".join(text.split()))

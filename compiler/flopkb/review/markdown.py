"""`flopkb diff --format markdown`: a pull-request comment or job summary.

The marker line first (CI finds its one sticky comment by it), the title and
a one-line summary, a table of what a reviewer must see first (claims,
agreement with measurements, the edits that changed values), then every
detail folded in `<details>`. GitHub refuses a comment of more than 65,536
characters: rows that would pass the limit are left out, and a note at the end
says how many, of what.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from flopkb.review.model import Report
from flopkb.review.text import text_sections
from flopkb.review.wording import (
    MARKER,
    STATUS,
    Markup,
    because,
    cause_line,
    claim_move,
    claim_what,
    number,
    relative,
    summary,
    title,
    value_where,
)

LIMIT = 65_536
_RESERVE = 1_000
"""Kept free for the closing tags and the note on what was left out."""


class _Budget:
    """Lines added while they fit in the limit; what did not fit is counted by section."""

    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.limit = limit - _RESERVE
        self.left_out: dict[str, int] = {}

    def add(self, line: str, section: str = "") -> bool:
        if self.size + len(line) + 1 > self.limit:
            self.left_out[section] = self.left_out.get(section, 0) + 1
            return False
        self.lines.append(line)
        self.size += len(line) + 1
        return True

    def close(self, line: str) -> None:
        """A line that must be written whatever the budget (a closing tag): the reserve pays for it."""
        self.lines.append(line)
        self.size += len(line) + 1


_LITERAL = str.maketrans(
    {character: f"&#{ord(character)};" for character in "&<>|\\`*_[]~"} | {"@": "@\u2060", "\r": " ", "\n": " "}
)
"""Markdown's punctuation as character references, which GitHub shows as the character and never reads as markup, in
a table cell as in the HTML of `<summary>` (where a backslash escape would show); a word joiner after `@`, so that no
@-mention notifies anyone; line breaks as spaces."""


_BLOCK_START = re.compile(r"(?:#{1,6}|[+-]|[0-9]{1,9}[.)])(?:[ \t]|$)|-[- \t]*$")
"""What would make a detail line (`- ...`) a heading, a list or a rule of its own: `+ records/...` a nested list. A
value (`+12 %`, `1.5 GB`) is left as it is."""

_AUTOLINK = re.compile(r":(?=//)|(?<=www)\.", re.IGNORECASE)
"""Where GitHub makes a link of text (`https://...`, any scheme's `://`, `www.`), and so do editors' hovers: escaped,
the text is shown and no link is made (GitHub's autolinks read the characters as written, not the references)."""


def _literal(text: str) -> str:
    """`text` with markdown's punctuation as character references (`_LITERAL`), and nothing GitHub makes a link of."""
    return _AUTOLINK.sub(lambda found: f"&#{ord(found[0])};", text.translate(_LITERAL))


def cell(text: str) -> str:
    """Text shown as it is in a table cell, a heading or a detail line: no pipe, HTML, link, image, emphasis, code,
    mention, line break or block of its own (record ids and messages, and revisions, come from the pull request)."""
    return _unblocked(_literal(text).strip())  # outer blanks: dropped by markdown anyway, or made into code


def _unblocked(shown: str) -> str:
    if _BLOCK_START.match(shown):
        return f"&#{ord(shown[0])};{shown[1:]}"
    return shown


_ESCAPED = str.maketrans({character: f"\\{character}" for character in "\\`*_[]~&<>|#"} | {"\r": " ", "\n": " "})
"""Markdown's punctuation escaped with a backslash, as an editor's hover wants it: editors that render markdown read
the character, and those that show it as text hide the backslash (Neovim's `lsp_markdown` syntax conceals it), where
they would show `&#95;` as it is written; line breaks as spaces."""


def editor_text(text: str) -> str:
    """Text shown as it is in an editor's hover: no HTML, link, image, emphasis, code, line break or block of its own
    (record text is the pull request's, as in `cell`)."""
    shown = _AUTOLINK.sub(lambda found: f"\\{found[0]}", text.translate(_ESCAPED)).strip()
    if not (_BLOCK_START.match(shown) or shown.startswith("=")):  # `===` under a line: a heading
        return shown
    digits = len(shown) - len(shown.lstrip("0123456789"))
    return f"{shown[:digits]}\\{shown[digits:]}"  # `1\.` (a backslash before a digit would show) or `\-`


MARKDOWN = Markup(lambda part: f"<code>{cell(part)}</code>", cell)
"""Code as HTML's `<code>`, inside which markdown still reads character references, so that record text in it is
escaped by `cell` as everywhere else (a backtick code span would show `&#91;` as it is written)."""

_BACKTICKS = re.compile("`+")


def cell_with_code(text: str) -> str:
    """A detail line as `cell` shows it, but for its own code spans (a message's `` `flopkb eval` ``, a name it
    quotes), shown as `MARKDOWN`'s code: what is in them is escaped by `cell` as any text is."""
    shown = "".join(MARKDOWN.code(part) if code else _literal(part) for part, code in _code_spans(text))
    return _unblocked(shown.strip())


def _code_spans(text: str) -> Iterator[tuple[str, bool]]:
    """(part, whether it is code) of `text`, as CommonMark pairs backticks: a run opens a code span that the next run
    of as many closes; a run that nothing closes is text. A backslash before a run is not read as an escape (flopkb's
    messages write none): it shows the pairing differently, never as markup."""
    runs = list(_BACKTICKS.finditer(text))
    closer: dict[int, int] = {}
    last: dict[int, int] = {}
    for index in reversed(range(len(runs))):  # each run's next of the same length, found once: linear in the runs
        length = len(runs[index][0])
        if length in last:
            closer[index] = last[length]
        last[length] = index
    at = index = 0
    while index < len(runs):
        if index not in closer:
            index += 1
            continue
        end = closer[index]
        yield text[at : runs[index].start()], False
        yield text[runs[index].end() : runs[end].start()], True
        at, index = runs[end].end(), end + 1
    yield text[at:], False


def render_markdown(report: Report, limit: int = LIMIT) -> str:
    out = _Budget(limit)
    out.close(MARKER)
    out.close(f"### {cell(title(report))}")
    out.close(f"**{cell(summary(report))}**")
    top = _top_rows(report)
    if top:
        out.close("")
        out.close("| | what | before → after | change |")
        out.close("| --- | --- | --- | --- |")
        for row in top:
            out.add(row, "the table above")
    for heading, lines in _detail_sections(report):
        if not out.add(""):
            out.left_out[heading] = len(lines)
            continue
        out.close(f"<details><summary>{cell(heading)}</summary>")
        out.close("")
        for line in lines:
            out.add(line, heading)
        out.close("")
        out.close("</details>")
    if out.left_out:
        parts = ", ".join(f"{count} of {section}" for section, count in out.left_out.items())
        out.close("")
        out.close(
            f"_Cut to GitHub's limit of {limit:,} characters: left out {cell(parts)} lines. "
            "`flopkb diff --format text` (or `--format json`) shows everything._"
        )
    return "\n".join(out.lines) + "\n"


def _top_rows(report: Report) -> list[str]:
    rows = []
    for change in (*report.claims, *report.agreement):
        move = cell(claim_move(change))
        note = cell(because(change.because, report.files))
        rows.append(f"| {STATUS[change.after]} | {cell(claim_what(change))} | {move} | {note} |")
    for cause in report.causes:
        rows.append(f"| Δ | {cause_line(cause, MARKDOWN)} | | |")
    return rows


def _detail_sections(report: Report) -> list[tuple[str, list[str]]]:
    sections = []
    if report.values:
        rows = ["| value | before | after | change |", "| --- | --- | --- | --- |"]
        for change in report.values:
            rows.append(
                f"| {cell(value_where(change))} | {cell(number(change.before, change.unit))} | "
                f"{cell(number(change.after, change.unit))} | {relative(change.relative)} |"
            )
        sections.append((f"Values changed ({len(report.values)})", rows))
    for heading, lines in text_sections(report):
        if heading.startswith(("Claims", "Agreement", "Values")):
            continue
        sections.append((heading, [f"- {cell_with_code(line)}" for line in lines]))
    return sections

"""Tabs used for indentation: YAML indents with spaces only, and libyaml's message does not say "tab".

One rule for the check and for `flopkb fmt`: a tab in a line's leading whitespace is reported at its place; `fmt`
replaces the tabs that start a line (`^\\t+`), each by one level of indentation (two spaces). Such a line can be
no block scalar's content (that is indented by spaces) and a quoted or plain scalar folds its continuation lines'
leading whitespace away, so the replacement changes no value; `fmt` replaces only in a file that does not parse as
it is.

A file that parses only with that replacement is read from the replaced text (`flopkb.load.source.parse`), and its
tab still reported: every other problem of the record is then reported in the same run. `Untabbing` maps what the
parse of the replaced text found back to the file as it is: lines are the same in both texts, and on a line that
starts with n tabs, every character after them stands n columns further right in the replaced text.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_LEADING_WHITESPACE = re.compile(r"[ \t]*")
_LINE_START_TABS = re.compile(r"^\t+", re.MULTILINE)


def indenting_tab(line: str) -> int | None:
    """The 0-based column of the first tab in `line`'s leading whitespace; None when it has none."""
    column = _LEADING_WHITESPACE.match(line).group().find("\t")  # type: ignore[union-attr]
    return None if column < 0 else column


def tab_message(line: int, column: int, fmt_fixes: bool) -> tuple[str, str]:
    """The message and hint of a tab that indents line `line` at (1-based) `column`."""
    fix = "replace the tab with spaces" + ("; `flopkb fmt` does it" if fmt_fixes else "")
    return f"a tab indents line {line} (at {line}:{column}); YAML indents with spaces only", fix


def has_line_start_tabs(text: str) -> bool:
    """Whether a line of `text` starts with a tab."""
    return _LINE_START_TABS.search(text) is not None


def replace_line_start_tabs(text: str) -> str:
    """`text` with each tab that starts a line replaced by two spaces."""
    return _LINE_START_TABS.sub(lambda tabs: "  " * len(tabs.group()), text)


class Untabbing:
    """Where each offset of `replace_line_start_tabs(text)` stands in `text` (`original`), found in one scan of
    `text` for the runs of tabs that start its lines."""

    __slots__ = ("_after", "_replaced", "_starts", "_tabs")

    def __init__(self, text: str) -> None:
        # For each run of tabs that starts a line, in order: where it starts in `text` and in the replaced text, how
        # many tabs it has, and how many characters the replacement added up to its end.
        self._starts: list[int] = []
        self._replaced: list[int] = []
        self._tabs: list[int] = []
        self._after: list[int] = []
        added = 0
        for run in _LINE_START_TABS.finditer(text):
            self._starts.append(run.start())
            self._replaced.append(run.start() + added)
            self._tabs.append(len(run.group()))
            added += len(run.group())
            self._after.append(added)

    def original(self, index: int) -> int:
        """The offset in `text` of the character at offset `index` of the replaced text: `index` less the tabs
        replaced before it; inside the spaces that replaced a run of tabs, the tab they replaced."""
        run = bisect_right(self._replaced, index) - 1
        if run < 0:
            return index
        within = index - self._replaced[run]
        if within < 2 * self._tabs[run]:
            return self._starts[run] + within // 2
        return index - self._after[run]

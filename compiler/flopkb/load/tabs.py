"""Tabs used for indentation: YAML indents with spaces only, and libyaml's message does not say "tab".

One rule for the check and for `flopkb fmt`: a tab in a line's leading whitespace is reported at its place; `fmt`
replaces the tabs that start a line (`^\\t+`), each by one level of indentation (two spaces). Such a line can be
no block scalar's content (that is indented by spaces) and a quoted or plain scalar folds its continuation lines'
leading whitespace away, so the replacement changes no value; `fmt` replaces only in a file that does not parse as
it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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


def untabbed(text: str, parses: Callable[[str], bool]) -> str | None:
    """`text` with each tab that starts a line replaced by one level of indentation (two spaces, as `flopkb fmt`
    indents), when it has such tabs and the result `parses`; else None."""
    if _LINE_START_TABS.search(text) is None:
        return None
    replaced = replace_line_start_tabs(text)
    return replaced if parses(replaced) else None


def replace_line_start_tabs(text: str) -> str:
    """`text` with each tab that starts a line replaced by two spaces."""
    return _LINE_START_TABS.sub(lambda tabs: "  " * len(tabs.group()), text)

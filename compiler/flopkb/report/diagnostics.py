"""The diagnostic: a frozen, located, sortable problem report.

Checks create diagnostics with the code's default severity; the pipeline
(`flopkb.pipeline.compile`) re-stamps severities from the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flopkb.report.codes import CODES, Severity
from flopkb.report.cut import MESSAGE, cut
from flopkb.report.hints import Suggestion


@dataclass(frozen=True, order=True, slots=True)
class Diagnostic:
    """One problem at one place. Sorts by path, line, column, code (the spec's order), then message."""

    path: str
    line: int
    column: int
    code: str
    message: str
    hint: str | None = field(default=None, compare=False)
    severity: Severity = field(default=Severity.ERROR, compare=False)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }
        if self.hint:
            data["hint"] = self.hint
        return data


def make(code: str, path: str, line: int, column: int, message: str, hint: str | None = None) -> Diagnostic:
    """A diagnostic with the catalogue's default severity for `code`, its message and hint cut at `MESSAGE`
    characters: each quote of record text is cut where it is written (`flopkb.report.cut.QUOTE`), and this bounds
    what is left, a list of the records' names."""
    return Diagnostic(path, line, column, code, cut(message, MESSAGE), _bounded(hint), CODES[code].severity)


def _bounded(hint: str | None) -> str | None:
    """`hint` cut at `MESSAGE` characters; a `Suggestion` keeps what its quick fixes replace and write."""
    if hint is None or len(hint) <= MESSAGE:
        return hint
    if isinstance(hint, Suggestion):
        return Suggestion(cut(hint, MESSAGE), hint.written, hint.offered, hint.before)
    return cut(hint, MESSAGE)


INTERNAL_ERROR = "internal-error"
REPORT_A_BUG = (
    "a bug in flopkb, not a problem of this file: please report it to flopkb's maintainers with this message, "
    "`flopkb --version` and the file (or a copy that shows it); every other file was checked"
)


def internal_error(path: str, error: Exception, doing: str) -> Diagnostic:
    """The diagnostic of an unexpected exception of flopkb's while `doing` something with the file at `path`."""
    import traceback
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent
    where = ""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        try:
            where = f" (at flopkb/{Path(frame.filename).resolve().relative_to(package).as_posix()}:{frame.lineno})"
            break
        except ValueError:
            continue
    text = str(error).splitlines()[0] if str(error) else ""
    return make(
        INTERNAL_ERROR, path, 1, 1, f"flopkb failed while {doing}: {type(error).__name__}: {text}{where}", REPORT_A_BUG
    )

"""Reporters: the output of `flopkb check`, one per `--format`, looked up by name.

Checking knows nothing of output; a reporter knows nothing of checking. Each
reporter writes already-sorted diagnostics and the run's summary to a stream:

- `text`: `path:line:column: severity code: message`, the hint indented below,
  errors before warnings (each group in path order), then a summary line;
  coloured with rich when asked, byte-stable otherwise.
- `json`: the object of docs/cli.md.
- `github`: GitHub Actions workflow commands (annotations).
- `sarif`: SARIF 2.1.0, one rule per code of the catalogue.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TextIO
from urllib.parse import quote

import flopkb
from flopkb.report.codes import CODES, Code, Severity
from flopkb.report.codes_doc import render_help_markdown, render_help_text
from flopkb.report.diagnostics import Diagnostic

if TYPE_CHECKING:
    from rich.text import Text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_INDENT = "    "
_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow"}
# C0 and C1 control characters but the newline, shown escaped (`\t`, `\x1b`) in text
# output so that record content quoted in a message cannot drive the terminal.
_CONTROL = {c: repr(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0)) if c != ord("\n")}


@dataclass(frozen=True, slots=True)
class Summary:
    """The counts of one run, as `summary` in the JSON output."""

    records: int
    errors: int
    warnings: int
    strict: bool = False
    """Whether warnings fail the run (`--strict`); not in the JSON summary, whose counts say the same."""

    @classmethod
    def of(cls, diagnostics: Iterable[Diagnostic], records: int, *, strict: bool = False) -> Summary:
        severities = [diagnostic.severity for diagnostic in diagnostics]
        return cls(records, severities.count(Severity.ERROR), severities.count(Severity.WARNING), strict)

    def describe(self) -> str:
        """`12 records: 1 error, 3 warnings`, or `12 records: no problems`; with `(--strict: warnings fail)` when
        warnings alone fail the run."""
        problems = (
            f"{_count(self.errors, 'error')}, {_count(self.warnings, 'warning')}"
            if self.errors or self.warnings
            else "no problems"
        )
        why = " (--strict: warnings fail)" if self.strict and self.warnings and not self.errors else ""
        return f"{_count(self.records, 'record')}: {problems}{why}"

    def counts(self) -> dict[str, int]:
        return {"records": self.records, "errors": self.errors, "warnings": self.warnings}


class Reporter(Protocol):
    def __call__(self, diagnostics: Sequence[Diagnostic], summary: Summary, stream: TextIO, *, color: bool) -> None: ...


def report(
    diagnostics: Iterable[Diagnostic], summary: Summary, format: str, stream: TextIO, *, color: bool = False
) -> None:
    """Write `diagnostics`, sorted as the spec says, and `summary` in `format` (a key of REPORTERS)."""
    REPORTERS[format](sorted(diagnostics, key=_order), summary, stream, color=color)


def resolve_format(format: str, env: Mapping[str, str]) -> str:
    """The reporter name for `--format`: `auto` is `github` under GitHub Actions, `text` elsewhere."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if format != "auto":
        return format
    return "github" if env.get("GITHUB_ACTIONS") == "true" else "text"


def resolve_color(env: Mapping[str, str], isatty: bool) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (no-color.org) or the terminal is dumb."""
    return isatty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def _order(diagnostic: Diagnostic) -> tuple[str, int, int, str, str]:
    # The spec's order, then the message; never the hint, which may be None.
    return (diagnostic.path, diagnostic.line, diagnostic.column, diagnostic.code, diagnostic.message)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _with_hint(diagnostic: Diagnostic) -> str:
    """The message with the hint in parentheses, for formats with a single message field."""
    return f"{diagnostic.message} ({diagnostic.hint})" if diagnostic.hint else diagnostic.message


# text


def _report_text(diagnostics: Sequence[Diagnostic], summary: Summary, stream: TextIO, *, color: bool) -> None:
    # A reader scans for what fails the run: errors first, so that one does not hide among ten warnings.
    diagnostics = sorted(diagnostics, key=lambda diagnostic: diagnostic.severity is not Severity.ERROR)
    if not color:  # the same characters as the coloured output's plain text, without importing rich (about 0.05 s)
        stream.write(
            "".join(f"{_plain_diagnostic(diagnostic)}\n" for diagnostic in diagnostics) + summary.describe() + "\n"
        )
        return
    from rich.console import Console
    from rich.text import Text

    lines = [*map(_text_diagnostic, diagnostics), Text(summary.describe(), style="bold")]
    console = Console(
        file=stream, force_terminal=True, no_color=False, color_system="standard", highlight=False, soft_wrap=True
    )
    console.print(Text("\n").join(lines))


def _plain_diagnostic(diagnostic: Diagnostic) -> str:
    """`_text_diagnostic` without its styles."""
    text = (
        f"{printable(diagnostic.path)}:{diagnostic.line}:{diagnostic.column}: "
        f"{diagnostic.severity.value} {diagnostic.code}: {printable(diagnostic.message)}"
    )
    if diagnostic.hint:
        text += f"\n{_INDENT}hint: {printable(diagnostic.hint)}"
    return text


def _text_diagnostic(diagnostic: Diagnostic) -> Text:
    from rich.text import Text

    text = Text.assemble(
        (printable(diagnostic.path), "bold"),
        f":{diagnostic.line}:{diagnostic.column}: ",
        (diagnostic.severity.value, _SEVERITY_STYLE[diagnostic.severity]),
        " ",
        (diagnostic.code, "dim"),
        f": {printable(diagnostic.message)}",
    )
    if diagnostic.hint:
        text.append(f"\n{_INDENT}")
        text.append("hint", "cyan")
        text.append(f": {printable(diagnostic.hint)}")
    return text


def printable(text: str) -> str:
    """Control characters escaped; lines after the first indented under the diagnostic."""
    return text.translate(_CONTROL).replace("\n", f"\n{_INDENT}")


# json


def _report_json(diagnostics: Sequence[Diagnostic], summary: Summary, stream: TextIO, *, color: bool) -> None:
    _write_json(stream, {"diagnostics": [d.to_dict() for d in diagnostics], "summary": summary.counts()})


def _write_json(stream: TextIO, data: object) -> None:
    stream.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


# github


def _report_github(diagnostics: Sequence[Diagnostic], summary: Summary, stream: TextIO, *, color: bool) -> None:
    for diagnostic in diagnostics:
        stream.write(_github_annotation(diagnostic) + "\n")
    stream.write(summary.describe() + "\n")


def _github_annotation(diagnostic: Diagnostic) -> str:
    properties = {
        "file": diagnostic.path,
        "line": str(diagnostic.line),
        "col": str(diagnostic.column),
        "title": diagnostic.code,
    }
    return workflow_command(diagnostic.severity.value, properties, _with_hint(diagnostic))


def workflow_command(command: str, properties: Mapping[str, str], message: str) -> str:
    """`::command key=value,...::message`, escaped as GitHub's actions/toolkit does."""
    fields = ",".join(f"{key}={_escape_property(value)}" for key, value in properties.items())
    return f"::{command} {fields}::{_escape_data(message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# sarif


def _report_sarif(diagnostics: Sequence[Diagnostic], summary: Summary, stream: TextIO, *, color: bool) -> None:
    rules = sorted(CODES.values(), key=lambda code: code.name)
    rule_index = {rule.name: index for index, rule in enumerate(rules)}
    driver = {"name": "flopkb", "version": flopkb.__version__, "rules": [_sarif_rule(rule) for rule in rules]}
    run = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "results": [_sarif_result(d, rule_index[d.code]) for d in diagnostics],
    }
    _write_json(stream, {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def _sarif_rule(code: Code) -> dict[str, object]:
    return {
        "id": code.name,
        "shortDescription": {"text": code.summary},
        "fullDescription": {"text": code.why},
        "help": {"text": render_help_text(code), "markdown": render_help_markdown(code)},
        "defaultConfiguration": {"level": code.severity.value},
    }


def _sarif_result(diagnostic: Diagnostic, rule_index: int) -> dict[str, object]:
    location = {
        "artifactLocation": {"uri": quote(diagnostic.path), "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": diagnostic.line, "startColumn": diagnostic.column},
    }
    return {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": diagnostic.severity.value,
        "message": {"text": _with_hint(diagnostic)},
        "locations": [{"physicalLocation": location}],
    }


REPORTERS: dict[str, Reporter] = {
    "text": _report_text,
    "json": _report_json,
    "github": _report_github,
    "sarif": _report_sarif,
}
FORMATS: tuple[str, ...] = ("auto", *REPORTERS)
"""The choices of `--format`; `resolve_format` turns `auto` into a key of REPORTERS."""

"""The docs page of every diagnostic code (`docs/codes.md`), rendered from the catalogue.

Each code gets the same fixed headings (what it does, why it matters, example,
fix). The example-and-fix part is also the rule help of the SARIF reporter.
"""

from __future__ import annotations

from textwrap import indent

from flopkb.report.codes import CODES, Code

_INTRO = (
    "Every problem `flopkb check` reports carries one of these codes, with a file, "
    "a line, a column and a message. The severity shown is the default: the "
    "configuration (`[tool.flopkb]` in `pyproject.toml`) can change it per code, "
    "and `--strict` fails on warnings too. A message or a hint quotes at most 200 characters of any one text of a "
    "record (a link, an id, an alias, an anchor, a term, a name, a unit, an expression): a longer one is cut, and "
    "the cut says so, with how many characters it leaves out (`[[aaaa… (99,831 more characters) resolves to no "
    "record`); the line and column are the text's own. No message or hint has more than 2,000 characters."
)


def render_codes_markdown() -> str:
    """The whole page: title, index table, then one section per code in catalogue order."""
    codes = list(CODES.values())
    blocks = [
        "# Diagnostic codes",
        "<!-- Generated from compiler/flopkb/report/codes.py by flopkb.report.codes_doc; do not edit by hand. -->",
        _INTRO,
        _index_table(codes),
        *(block for code in codes for block in _code_blocks(code)),
    ]
    return "\n\n".join(blocks) + "\n"


def render_help_markdown(code: Code) -> str:
    """The Example and Fix sections of one code, as markdown."""
    return "\n\n".join(_help_blocks(code))


def render_help_text(code: Code) -> str:
    """The Example and Fix of one code, as plain text."""
    return f"Example:\n\n{indent(code.example, '    ')}\n\nFix: {code.fix}"


def _index_table(codes: list[Code]) -> str:
    rows = [f"| [`{code.name}`](#{code.name}) | {code.severity.value} | {_cell(code.summary)} |" for code in codes]
    return "\n".join(["| code | default severity | what it does |", "| --- | --- | --- |", *rows])


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code_blocks(code: Code) -> list[str]:
    return [
        f'<a id="{code.name}"></a>',
        f"### `{code.name}` — {code.severity.value}",
        "#### What it does",
        code.summary,
        "#### Why it matters",
        code.why,
        *_help_blocks(code),
    ]


def _help_blocks(code: Code) -> list[str]:
    return ["#### Example", f"```yaml\n{code.example}\n```", "#### Fix", code.fix]

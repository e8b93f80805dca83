"""The output formats of `flopkb check`, the generated docs page of all codes, and the contract's codes.

Golden files live in tests/golden/reporters/ and docs/codes.md; regenerate them with
`FLOPKB_UPDATE_GOLDEN=1 pytest tests/report/test_reporters.py`, then review the diff.
The contract is docs/cli.md (the JSON example) and docs/record-format.md (the table of codes).
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import flopkb
from flopkb.report.codes import CODES, Severity
from flopkb.report.codes_doc import render_codes_markdown
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.reporters import FORMATS, REPORTERS, Summary, report, resolve_color, resolve_format
from golden import GOLDEN as GOLDEN_ROOT
from golden import assert_matches_file
from repo import REPO

GOLDEN = GOLDEN_ROOT / "reporters"
CLI_PAGE = REPO / "docs" / "cli.md"
RECORD_FORMAT_PAGE = REPO / "docs" / "record-format.md"

SPEC_EXAMPLE = """\
{
  "diagnostics": [
    {"code": "dangling-link", "severity": "error",
     "path": "records/flops/sd-batch-dilution-problem.yaml",
     "line": 14, "column": 61,
     "message": "[[speculative-decoding-bandwidth-trade]] resolves to no record",
     "hint": "did you mean flops/speculative-decoding-bandwidth-trade-at-batch?"}
  ],
  "summary": {"records": 12, "errors": 1, "warnings": 3}
}
"""
SPEC_DIAGNOSTIC = make(
    "dangling-link",
    "records/flops/sd-batch-dilution-problem.yaml",
    14,
    61,
    "[[speculative-decoding-bandwidth-trade]] resolves to no record",
    "did you mean flops/speculative-decoding-bandwidth-trade-at-batch?",
)

# Unsorted on purpose. Covers: a hint, warnings (one re-stamped from an error code),
# `,` `:` `%` and a newline and a tab in a message and in a path, non-ASCII text.
DIAGNOSTICS = [
    make("orphan", "records/flops/lonely.yaml", 1, 1, "no other record links to or references flops/lonely"),
    SPEC_DIAGNOSTIC,
    make(
        "yaml-syntax",
        "records/notes/50% off, v2: draft.yaml",
        3,
        14,
        "while parsing a flow sequence, expected ',' or ']'\nfound character '\t' at 100%: line 3",
    ),
    make(
        "unit-mismatch",
        "records/hardware/h100-sxm.yaml",
        22,
        9,
        "memory_bandwidth is “989 TFLOP/s”, a compute rate, not a bandwidth (B/s)",
        "write it in TB/s, e.g. “3.35 TB/s” — see the datasheet",
    ),
    make("invalid-id", "records/notes/café.yaml", 1, 5, "id “notes/café” is not lower-case ASCII", "use notes/cafe"),
    replace(  # re-stamped by the configuration, as the engine does
        make("missing-source", "records/hardware/h100-sxm.yaml", 30, 7, "basis vendor-spec has no sources"),
        severity=Severity.WARNING,
    ),
]
SUMMARY = Summary.of(DIAGNOSTICS, records=12)
GOLDEN_FILES = {"text": "text.txt", "json": "json.json", "github": "github.txt", "sarif": "sarif.json"}


def render(
    format: str, diagnostics: list[Diagnostic] = DIAGNOSTICS, summary: Summary = SUMMARY, *, color: bool = False
) -> str:
    stream = io.StringIO()
    report(diagnostics, summary, format, stream, color=color)
    return stream.getvalue()


@pytest.mark.parametrize("format", sorted(REPORTERS))
def test_golden(format: str) -> None:
    assert_matches_file(GOLDEN / GOLDEN_FILES[format], render(format))


def test_every_reporter_has_a_golden_file() -> None:
    assert sorted(GOLDEN_FILES) == sorted(REPORTERS)
    assert ("auto", *REPORTERS) == FORMATS


def test_summary_counts_severities_as_stamped() -> None:
    assert Summary(records=12, errors=4, warnings=2) == SUMMARY


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        (Summary(12, 1, 3), "12 records: 1 error, 3 warnings"),
        (Summary(1, 0, 1), "1 record: 0 errors, 1 warning"),
        (Summary(12, 0, 0), "12 records: no problems"),
        (Summary(0, 0, 0), "0 records: no problems"),
    ],
)
def test_summary_line(summary: Summary, line: str) -> None:
    assert summary.describe() == line
    assert render("text", [], summary) == line + "\n"


def test_text_shape() -> None:
    lines = render("text", [SPEC_DIAGNOSTIC], Summary(12, 1, 3)).splitlines()
    assert lines == [
        "records/flops/sd-batch-dilution-problem.yaml:14:61: error dangling-link: "
        "[[speculative-decoding-bandwidth-trade]] resolves to no record",
        "    hint: did you mean flops/speculative-decoding-bandwidth-trade-at-batch?",
        "12 records: 1 error, 3 warnings",
    ]


def test_text_escapes_control_characters() -> None:
    diagnostic = make("yaml-syntax", "a.yaml", 1, 1, "bad \x1b[31mred\x1b[0m\r\nnext")
    assert render("text", [diagnostic]).splitlines()[:2] == [
        r"a.yaml:1:1: error yaml-syntax: bad \x1b[31mred\x1b[0m\r",
        "    next",
    ]


def test_colored_text_is_the_plain_text_with_styles() -> None:
    colored = render("text", color=True)
    assert "\x1b[1;31merror\x1b[0m" in colored
    assert "\x1b[1;33mwarning\x1b[0m" in colored
    assert "\x1b[2mdangling-link\x1b[0m" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == render("text")


def test_json_equals_the_spec_example() -> None:
    expected = json.dumps(json.loads(SPEC_EXAMPLE), indent=2, ensure_ascii=False) + "\n"
    assert render("json", [SPEC_DIAGNOSTIC], Summary(records=12, errors=1, warnings=3)) == expected


def test_spec_example_is_copied_verbatim() -> None:
    assert SPEC_EXAMPLE in CLI_PAGE.read_text(encoding="utf-8")


def contract_codes() -> dict[str, str]:
    """The table of docs/record-format.md's "Diagnostics" section: code -> default severity."""
    section = RECORD_FORMAT_PAGE.read_text(encoding="utf-8").split("\n## Diagnostics\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([a-z][a-z-]*) \| (error|warning) \| .+ \|$", section, re.MULTILINE)
    assert len(rows) == section.count("\n| ") - 2, "a row of the table of codes does not read as code | default | when"
    return dict(rows)


def test_every_code_of_the_catalogue_is_in_the_contract_with_its_default() -> None:
    contract = contract_codes()
    assert {name: contract.get(name) for name in CODES} == {name: code.severity.value for name, code in CODES.items()}


def test_every_code_of_the_contract_is_in_the_catalogue() -> None:
    assert sorted(set(contract_codes()) - set(CODES)) == []


def test_json_omits_an_absent_hint() -> None:
    (entry,) = json.loads(render("json", [DIAGNOSTICS[0]]))["diagnostics"]
    assert list(entry) == ["code", "severity", "path", "line", "column", "message"]


def test_diagnostics_are_sorted_by_path_line_column_code() -> None:
    data = json.loads(render("json"))["diagnostics"]
    keys = [(d["path"], d["line"], d["column"], d["code"]) for d in data]
    assert keys == sorted(keys)


@given(st.permutations(DIAGNOSTICS))
def test_text_lists_errors_before_warnings_each_in_path_order(diagnostics: list[Diagnostic]) -> None:
    lines = render("text", diagnostics).splitlines()
    heads = [line for line in lines if re.match(r"records/.*:\d+:\d+: (error|warning) ", line)]
    severities = [re.search(r": (error|warning) ", line)[1] for line in heads]  # type: ignore[index]
    assert severities == ["error"] * SUMMARY.errors + ["warning"] * SUMMARY.warnings
    for severity in ("error", "warning"):
        paths = [line.split(":", 1)[0] for line, one in zip(heads, severities, strict=True) if one == severity]
        assert paths == sorted(paths)
    assert lines[-1] == "12 records: 4 errors, 2 warnings"


def test_sorting_ties_on_everything_but_the_hint() -> None:
    with_hint = make("orphan", "a.yaml", 1, 1, "same", "a hint")
    without = make("orphan", "a.yaml", 1, 1, "same")
    data = json.loads(render("json", [with_hint, without]))["diagnostics"]
    assert [entry.get("hint") for entry in data] == ["a hint", None]


def test_github_escaping() -> None:
    diagnostic = make("yaml-syntax", "records/a,b:c%.yaml", 2, 3, "50%: a, b\r\nc", "try: x, y")
    first = render("github", [diagnostic]).splitlines()[0]
    assert first == (
        "::error file=records/a%2Cb%3Ac%25.yaml,line=2,col=3,title=yaml-syntax::50%25: a, b%0D%0Ac (try: x, y)"
    )


def test_github_warning_and_summary() -> None:
    lines = render("github", [DIAGNOSTICS[0]], Summary(3, 0, 1)).splitlines()
    assert lines == [
        "::warning file=records/flops/lonely.yaml,line=1,col=1,title=orphan::"
        "no other record links to or references flops/lonely",
        "3 records: 0 errors, 1 warning",
    ]


def test_sarif_structure() -> None:
    sarif = json.loads(render("sarif"))
    assert sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("flopkb", flopkb.__version__)
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == sorted(CODES)
    for rule in rules:
        code = CODES[rule["id"]]
        assert rule["shortDescription"] == {"text": code.summary}
        assert rule["fullDescription"] == {"text": code.why}
        assert set(rule["help"]) == {"text", "markdown"}
        assert code.example in rule["help"]["markdown"] and code.fix in rule["help"]["text"]
        assert rule["defaultConfiguration"] == {"level": code.severity.value}
    assert len(run["results"]) == len(DIAGNOSTICS)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning"}
        assert result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert " " not in physical["artifactLocation"]["uri"]
        assert physical["region"]["startLine"] >= 1 and physical["region"]["startColumn"] >= 1


def test_sarif_level_is_the_stamped_severity() -> None:
    (result,) = json.loads(render("sarif", [DIAGNOSTICS[-1]]))["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("missing-source", "warning")


@pytest.mark.parametrize(
    ("format", "env", "expected"),
    [
        ("auto", {"GITHUB_ACTIONS": "true"}, "github"),
        ("auto", {}, "text"),
        ("auto", {"GITHUB_ACTIONS": "false"}, "text"),
        ("json", {"GITHUB_ACTIONS": "true"}, "json"),
        ("sarif", {}, "sarif"),
    ],
)
def test_resolve_format(format: str, env: dict[str, str], expected: str) -> None:
    assert resolve_format(format, env) == expected


def test_resolve_format_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        resolve_format("xml", {})


@pytest.mark.parametrize(
    ("env", "isatty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_resolve_color(env: dict[str, str], isatty: bool, expected: bool) -> None:
    assert resolve_color(env, isatty) is expected


def test_codes_doc_is_up_to_date() -> None:
    assert_matches_file(REPO / "docs" / "codes.md", render_codes_markdown())


def test_codes_doc_has_fixed_headings_for_every_code() -> None:
    page = render_codes_markdown()
    for code in CODES.values():
        section = page.split(f"### `{code.name}` — {code.severity.value}\n", 1)[1].split("\n### ", 1)[0]
        headings = re.findall(r"^#### (.+)$", section, re.MULTILINE)
        assert headings == ["What it does", "Why it matters", "Example", "Fix"]
        assert f"```yaml\n{code.example}\n```" in section
        assert f"| [`{code.name}`](#{code.name}) | {code.severity.value} |" in page

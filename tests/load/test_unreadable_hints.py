"""A file that is no record is told with its fix, in every output format: re-save a Latin-1 file as UTF-8, write a
record's fields in an empty file or a file whose top level is a list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.cli import main
from kbfixture import write_kb

NEW = "`flopkb new <kind> <id>` writes a new record with every field to fill in"
FILES: dict[str, str | bytes] = {
    "records/flops/latin.yaml": b"id: flops/latin\nkind: flop\ntitle: caf\xe9\n",
    "records/flops/list.yaml": "- a\n- b\n",
    "records/flops/empty.yaml": "",
}
EXPECTED = [
    (
        "records/flops/empty.yaml",
        1,
        1,
        "the file is empty; a record is a mapping of fields",
        f"write a record in it, or delete it: {NEW}",
    ),
    (
        "records/flops/latin.yaml",
        3,
        11,
        "the file is not UTF-8: byte 0xe9 is invalid here",
        "re-save the file as UTF-8: 0xe9 is é in Latin-1",
    ),
    (
        "records/flops/list.yaml",
        1,
        1,
        "the top level is not a mapping; a record is a mapping of fields",
        f"write the record's fields as `key: value` lines at the top level; {NEW}",
    ),
]


def check(root: Path, output_format: str) -> str:
    result = CliRunner().invoke(
        main, ["check", "--root", str(root), "--format", output_format], env={"GITHUB_ACTIONS": None, "NO_COLOR": None}
    )
    assert result.exit_code == 1, result.output
    return result.output


def test_a_file_that_is_no_record_is_told_its_fix_in_json(tmp_path: Path) -> None:
    told = json.loads(check(write_kb(tmp_path, FILES), "json"))["diagnostics"]
    assert [(d["path"], d["line"], d["column"], d["message"], d.get("hint")) for d in told] == EXPECTED


@pytest.mark.parametrize(
    ("output_format", "shown"),
    [
        ("text", "{path}:{line}:{column}: error {code}: {message}\n    hint: {hint}"),
        ("github", "line={line},col={column},title={code}::{message} ({hint})"),
        ("sarif", '"text": "{message} ({hint})"'),
    ],
)
def test_a_file_that_is_no_record_is_told_its_fix_in_every_format(
    tmp_path: Path, output_format: str, shown: str
) -> None:
    output = check(write_kb(tmp_path, FILES), output_format)
    for path, line, column, message, hint in EXPECTED:
        code = "encoding" if "UTF-8" in message else "not-a-record"
        assert shown.format(path=path, line=line, column=column, code=code, message=message, hint=hint) in output


@pytest.mark.parametrize(
    ("byte", "letter"), [(0xE9, "é in Latin-1"), (0xFC, "ü in Latin-1"), (0x80, "€ in Windows-1252")]
)
def test_the_hint_names_the_letter_the_byte_most_likely_is(tmp_path: Path, byte: int, letter: str) -> None:
    files: dict[str, str | bytes] = {
        "records/flops/x.yaml": b"id: flops/x\nkind: flop\ntitle: " + bytes([byte]) + b"\n"
    }
    [told] = json.loads(check(write_kb(tmp_path, files), "json"))["diagnostics"]
    assert told["hint"] == f"re-save the file as UTF-8: 0x{byte:02x} is {letter}"

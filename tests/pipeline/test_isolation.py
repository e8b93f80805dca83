"""A bug of flopkb's on one file or in one stage is an `internal-error` there; the rest is still checked, exit 2."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flopkb.cli import main
from flopkb.load import validate
from flopkb.pipeline import compile as compile_module
from flopkb.pipeline import stages
from kbfixture import write_kb

GOOD = "id: flops/good\nkind: flop\ncategory: memory-bandwidth\ndescription: See [[flops/nowhere]].\n"
CURSED = "id: flops/cursed\nkind: flop\ncategory: memory-bandwidth\ndescription: See [[flops/good]].\n"
FILES = {"records/flops/good.yaml": GOOD, "records/flops/cursed.yaml": CURSED}


def check(root: Path, *args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--no-cache", "--format", "json", *args])
    return result.exit_code, json.loads(result.output)


def _codes(report: Any) -> list[tuple[str, str]]:
    return [(d["code"], d["path"]) for d in report["diagnostics"]]


def test_a_crash_on_one_file_is_reported_there_and_the_rest_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    validate_record = validate.validate_record

    def cursed(source: Any, vocabulary: Any, record_id: str) -> Any:
        if record_id == "flops/cursed":
            raise KeyError("surprise")
        return validate_record(source, vocabulary, record_id)

    monkeypatch.setattr(compile_module, "validate_record", cursed)
    status, report = check(write_kb(tmp_path, FILES))
    assert status == 2
    assert ("internal-error", "records/flops/cursed.yaml") in _codes(report)
    assert ("dangling-link", "records/flops/good.yaml") in _codes(report)
    [failure] = [d for d in report["diagnostics"] if d["code"] == "internal-error"]
    assert failure["message"].startswith("flopkb failed while validating the file: KeyError: 'surprise' (at flopkb/")
    assert "bug in flopkb" in failure["hint"]


def test_a_crash_while_reading_is_reported_on_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parse = compile_module.parse

    def cursed(text: str, path: str) -> Any:
        if path.endswith("cursed.yaml"):
            raise RecursionError("deep")
        return parse(text, path)

    monkeypatch.setattr(compile_module, "parse", cursed)
    status, report = check(write_kb(tmp_path, FILES))
    assert status == 2
    assert ("internal-error", "records/flops/cursed.yaml") in _codes(report)
    assert ("dangling-link", "records/flops/good.yaml") in _codes(report)


def test_a_failing_stage_keeps_what_it_found_and_the_other_stages_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half_done(kb: Any) -> Iterator[Any]:
        from flopkb.report.diagnostics import make

        yield make("orphan", "records/flops/good.yaml", 1, 1, "found before the failure")
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(stages, "CHECK_STAGES", (*stages.CHECK_STAGES[:1], half_done, *stages.CHECK_STAGES[1:]))
    status, report = check(write_kb(tmp_path, FILES))
    assert status == 2
    codes = _codes(report)
    assert ("internal-error", "records") in codes
    assert ("orphan", "records/flops/good.yaml") in codes
    assert ("dangling-link", "records/flops/good.yaml") in codes
    assert report["summary"]["errors"] >= 2


def test_an_internal_error_is_shown_and_exits_2_whatever_the_paths_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compile_module, "validate_record", lambda *args: 1 / 0)
    root = write_kb(tmp_path, FILES)
    status, report = check(root, str(root / "records/flops/good.yaml"))
    assert status == 2
    assert ("internal-error", "records/flops/cursed.yaml") in _codes(report)


def test_internal_error_cannot_be_configured_away(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {**FILES, "pyproject.toml": '[tool.flopkb.severity]\n"internal-error" = "off"\n'})
    result = CliRunner().invoke(main, ["check", "--root", str(root)])
    assert result.exit_code == 2 and "internal-error" in result.output


def test_check_of_a_path_that_does_not_exist_cannot_run(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    result = CliRunner().invoke(main, ["check", "--root", str(root), str(root / "records/nope.yaml")])
    assert result.exit_code == 2
    assert "nope.yaml" in result.output and "does not exist" in result.output


def test_a_name_that_is_not_utf8_keeps_the_json_report_utf8(tmp_path: Path) -> None:
    import os

    root = write_kb(tmp_path, FILES)
    with open(os.path.join(os.fsencode(root / "records/flops"), b"caf\xe9.yaml"), "wb") as stream:
        stream.write(GOOD.encode())
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--no-cache", "--format", "json"])
    report = json.loads(result.stdout_bytes.decode("utf-8"))
    assert ("encoding", "records/flops/caf\\xe9.yaml") in _codes(report)
    assert result.exit_code == 1

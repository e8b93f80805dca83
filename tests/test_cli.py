"""`flopkb check` through its command line: every output format against golden files, and exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.cli import main
from flopkb.config import ConfigError, load_config
from golden import GOLDEN, assert_matches_file
from kbfixture import write_kb

CLEAN = """\
id: flops/clean
kind: flop
category: arithmetic-intensity
description: Links to [[flops/broken]] and [[flops/warned]].
"""
BROKEN = """\
id: flops/broken
kind: flop
category: arithmetic-intensty
description: |
  Points at [[flops/clean]]
  and at [[flops/cleen]].
"""
WARNED = """\
id: flops/warned
kind: flop
category: memory-bandwidth
description: See [[flops/clean]].
"""
FILES = {"records/flops/clean.yaml": CLEAN, "records/flops/broken.yaml": BROKEN, "records/flops/warned.yaml": WARNED}
ENV = {"GITHUB_ACTIONS": None, "NO_COLOR": None}


def run(root: Path, *args: str, env: dict[str, str | None] = ENV) -> Result:
    return CliRunner().invoke(main, [*args[:1], "--root", str(root), *args[1:]], env=env)


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path, FILES)


@pytest.mark.parametrize(
    "output_format, golden",
    [("text", "check.txt"), ("json", "check.json"), ("github", "check.github.txt"), ("sarif", "check.sarif.json")],
)
def test_check_output_matches_golden(kb: Path, output_format: str, golden: str) -> None:
    result = run(kb, "check", "--format", output_format)
    assert result.exit_code == 1
    assert_matches_file(GOLDEN / "cli" / golden, result.output)


def test_json_lists_the_real_problems(kb: Path) -> None:
    report = json.loads(run(kb, "check", "--format", "json").output)
    found = [(d["code"], d["path"], d["line"], d["column"]) for d in report["diagnostics"]]
    assert ("unknown-term", "records/flops/broken.yaml", 3, 11) in found
    assert report["summary"]["records"] == 3


def test_auto_is_github_under_github_actions(kb: Path) -> None:
    result = run(kb, "check", env={"GITHUB_ACTIONS": "true"})
    assert result.output.startswith("::error file=records/flops/broken.yaml,line=3,col=11,title=unknown-term::")


def test_clean_base_exits_0(tmp_path: Path) -> None:
    text = CLEAN.replace("Links to [[flops/broken]] and [[flops/warned]].", "See [[flops/warned]].")
    root = write_kb(tmp_path, {"records/flops/clean.yaml": text, "records/flops/warned.yaml": WARNED})
    result = run(root, "check")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("2 records: no problems\n")


def test_warnings_fail_only_with_strict(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {"records/flops/clean.yaml": CLEAN.replace(" and [[flops/warned]]", "").replace("[[flops/broken]]", "nothing")},
    )
    assert run(root, "check").exit_code == 0
    assert run(root, "check").output.endswith("1 record: 0 errors, 1 warning\n")
    strict = run(root, "check", "--strict")
    assert strict.exit_code == 1
    assert strict.output.endswith("1 record: 0 errors, 1 warning (--strict: warnings fail)\n"), "it says why it fails"
    assert json.loads(run(root, "check", "--strict", "--format", "json").output)["summary"] == {
        "records": 1,
        "errors": 0,
        "warnings": 1,
    }


def test_paths_filter_the_report_not_the_check(kb: Path) -> None:
    result = run(kb, "check", "--format", "json", str(kb / "records/flops/clean.yaml"))
    assert json.loads(result.output)["diagnostics"] == []
    assert result.exit_code == 0


def test_no_records_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--root", str(tmp_path)])
    assert result.exit_code == 2
    assert "no records/ folder" in result.output


def test_unreadable_configuration_is_a_usage_error(kb: Path) -> None:
    (kb / "pyproject.toml").write_text("[tool.flopkb]\nrecods = 'x'\n")
    result = run(kb, "check")
    assert result.exit_code == 2
    assert "did you mean records?" in result.output


def test_every_configuration_problem_is_told_in_one_run_each_with_its_fix(kb: Path) -> None:
    (kb / "pyproject.toml").write_text(
        '[tool.flopkb]\nrecord = "records"\nsite_dir = "/tmp/x"\n'
        '[tool.flopkb.severity]\norphen = "error"\nunverified-basis = "eror"\n'
        '[tool.flopkb.site]\nnmae = "kb"\n'
    )
    result = run(kb, "check")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "Error: [tool.flopkb] has no setting 'record' (did you mean records?)",
        "Error: [tool.flopkb.severity] names no code 'orphen' (did you mean orphan?)",
        'Error: [tool.flopkb.severity] unverified-basis must be "error", "warning" or "off", not \'eror\' '
        "(did you mean error?)",
        "Error: [tool.flopkb.site] has no setting 'nmae' (did you mean name?)",
        "Error: [tool.flopkb] site_dir = '/tmp/x' is absolute: give a path inside the base, e.g. build/x",
    ]


SLIPS = {
    ("", 'record = "records"'): "[tool.flopkb] has no setting 'record' (did you mean records?)",
    ("", 'schema = ""'): "[tool.flopkb] schema must be a non-empty string",
    ("", 'cache_dir = "../c"'): "[tool.flopkb] cache_dir = '../c' leaves the base: give a path inside it, without '..'",
    (".severity", 'orphen = "off"'): "[tool.flopkb.severity] names no code 'orphen' (did you mean orphan?)",
    (".severity", 'orphan = "of"'): '[tool.flopkb.severity] orphan must be "error", "warning" or "off", not \'of\' '
    "(did you mean off?)",
    (".site", "url = 3"): "[tool.flopkb.site] url must be a string",
}


@settings(max_examples=20, deadline=None)
@given(st.lists(st.sampled_from(sorted(SLIPS)), min_size=1, unique=True))
def test_any_set_of_configuration_slips_is_told_whole(
    tmp_path_factory: pytest.TempPathFactory, slips: list[tuple[str, str]]
) -> None:
    root = write_kb(tmp_path_factory.mktemp("config"), FILES)
    tables = {table: [line for at, line in slips if at == table] for table, _ in slips}
    text = "".join(
        f"[tool.flopkb{table}]\n" + "".join(f"{line}\n" for line in lines) for table, lines in tables.items()
    )
    (root / "pyproject.toml").write_text(text)
    result = run(root, "check")
    assert result.exit_code == 2
    assert sorted(result.output.splitlines()) == sorted(f"Error: {SLIPS[slip]}" for slip in slips)


@pytest.mark.parametrize(
    "setting",
    [
        'url = "javascript:alert(1)//"',
        'repo_url = "data:text/html,<script>alert(1)</script>"',
        'url = "https://example.org/kb/\\"><script>alert(1)</script>"',
        "repo_url = \"https://example.org/x' onmouseover='alert(1)\"",
        'url = "//example.org/kb/"',
    ],
)
def test_a_site_url_that_is_not_a_plain_web_url_is_a_usage_error(kb: Path, setting: str) -> None:
    (kb / "pyproject.toml").write_text(f"[tool.flopkb.site]\n{setting}\n")
    result = run(kb, "check")
    assert result.exit_code == 2
    assert "must be an http:// or https:// URL" in result.output


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_only_plain_web_urls_are_accepted_as_site_urls(tmp_path_factory: pytest.TempPathFactory, tail: str) -> None:
    root = tmp_path_factory.mktemp("url")
    url = "https://example.org/" + tail
    (root / "pyproject.toml").write_text(f"[tool.flopkb.site]\nurl = {json.dumps(url)}\n", encoding="utf-8")
    try:
        accepted = load_config(root).site.url
    except ConfigError:
        accepted = None
    plain = all(c.isascii() and c.isprintable() and c not in "\"'<>\\ `{}|^" for c in tail)
    assert (accepted == url) is plain


def test_unknown_format_is_a_usage_error(kb: Path) -> None:
    assert run(kb, "check", "--format", "xml").exit_code == 2


def test_path_outside_the_base_is_a_usage_error(kb: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    assert run(kb, "check", str(outside)).exit_code == 2


def test_check_imports_only_what_it_needs(kb: Path) -> None:
    """networkx (the graph), rich (colour) and numpy (pint's arrays) are not needed to check: their imports cost
    ~0.4 s."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from flopkb.cli import main\n"
        f"try:\n    main(['check', '--root', {str(kb)!r}, '--format', 'text', '--no-cache'])\n"
        "except SystemExit:\n    pass\n"
        "from flopkb.formulas.units import parse_quantity\n"
        "parse_quantity('3 TB/s')\n"
        "print(sorted(m for m in ('networkx', 'rich', 'numpy', 'pint') if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={"NO_COLOR": "1", "PATH": ""}, check=True
    )
    assert done.stderr.strip() == "['pint']"


def test_record_models_are_built_without_a_scan_for_pydantic_plugins(kb: Path) -> None:
    """Finding pydantic plugins scans every installed distribution (0.12-0.2 s); flopkb's models are built without."""
    import subprocess
    import sys

    script = (
        "import os, sys\n"
        "from flopkb.cli import main\n"
        f"try:\n    main(['check', '--root', {str(kb)!r}, '--format', 'json', '--no-cache'])\n"
        "except SystemExit:\n    pass\n"
        "import pydantic.plugin._loader as loader\n"
        "print(loader._plugins is None, os.environ.get('PYDANTIC_DISABLE_PLUGINS'), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={"PATH": ""}, check=True)
    assert done.stderr.strip() == "True None"


def test_the_command_list_says_what_each_command_does_in_full() -> None:
    listed = CliRunner().invoke(main, ["--help"], terminal_width=80).output.split("Commands:\n", 1)[1]
    commands = [line.split(None, 1) for line in listed.splitlines() if line.strip()]
    assert {name for name, _ in commands} == set(main.commands)
    assert [summary for _, summary in commands if summary.endswith("...") or not summary.endswith(".")] == []

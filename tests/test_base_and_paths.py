"""Where flopkb works: the base found from any folder inside it, as git finds its repository; path settings that
stay inside that base, refused in one line (exit 2) otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.cli import main
from kbfixture import write_kb

FINE = {
    "records/flops/a.yaml": "id: flops/a\nkind: flop\ncategory: arithmetic-intensity\ndescription: Fine.\n",
}


def check_from(folder: Path, monkeypatch: pytest.MonkeyPatch, *arguments: str) -> tuple[int, str, str]:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["check", "--format", "json", "--no-cache", *arguments])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("inside", [".", "records", "records/flops", "schema", "notes/deep/er"])
def test_the_base_is_found_from_any_folder_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inside: str
) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    (root / inside).mkdir(parents=True, exist_ok=True)
    status, output, errors = check_from(root / inside, monkeypatch)
    assert (status, errors) == (0, "")
    assert '"records": 1' in output


def test_a_configured_records_folder_belongs_to_the_outer_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`records = "kb/records"` at the top, run from `kb/records/flops/`: `kb/` has a `records/` folder, but it is the
    outer base's records folder, and the outer base is the one the author means."""
    root = write_kb(
        tmp_path / "repo",
        {
            "pyproject.toml": '[tool.flopkb]\nrecords = "kb/records"\n',
            "kb/records/flops/a.yaml": FINE["records/flops/a.yaml"],
            "kb/records/flops/b.yaml": FINE["records/flops/a.yaml"].replace("flops/a", "flops/b"),
        },
    )
    status, output, _ = check_from(root / "kb" / "records" / "flops", monkeypatch)
    assert status == 0 and '"records": 2' in output


def test_a_table_wins_over_a_records_folder_further_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer = write_kb(tmp_path / "outer", FINE)
    inner = write_kb(outer / "nested", {**FINE, "pyproject.toml": '[tool.flopkb]\nrecords = "records"\n'})
    (inner / "records" / "flops" / "b.yaml").write_text(
        FINE["records/flops/a.yaml"].replace("flops/a", "flops/b"), encoding="utf-8"
    )
    status, output, _ = check_from(inner / "records", monkeypatch)
    assert status == 0 and '"records": 2' in output  # the nearest base, not the outer one


def test_outside_any_base_one_line_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    status, output, errors = check_from(tmp_path / "empty", monkeypatch)
    assert status == 2 and output == ""
    assert errors.count("\n") == 1 and "no knowledge base here" in errors and "--root" in errors


@pytest.mark.parametrize("key", ["records", "schema", "site_dir", "cache_dir"])
@pytest.mark.parametrize(
    ("value", "says"),
    [("/etc", "is absolute"), ("../x", "without '..'"), ("a/../../x", "without '..'"), ("C:/x", "is absolute")],
)
def test_a_path_setting_outside_the_base_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str, says: str
) -> None:
    root = write_kb(tmp_path / "kb", {**FINE, "pyproject.toml": f"[tool.flopkb]\n{key} = {value!r}\n"})
    status, output, errors = check_from(root, monkeypatch)
    assert status == 2 and output == ""
    assert errors.startswith(f"Error: [tool.flopkb] {key} = {value!r} ") and says in errors
    assert errors.count("\n") == 1 and "Traceback" not in errors


@pytest.mark.parametrize("key", ["records", "schema"])
def test_a_path_setting_that_leads_out_through_a_symlink_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    root = write_kb(tmp_path / "kb", {**FINE, "pyproject.toml": f'[tool.flopkb]\n{key} = "linked"\n'})
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    status, _, errors = check_from(root, monkeypatch)
    assert status == 2 and "leads out of the base" in errors and errors.count("\n") == 1


@pytest.mark.parametrize("key", ["records", "schema", "site_dir", "cache_dir"])
@pytest.mark.parametrize("command", ["check", "build"])
def test_a_path_setting_through_a_symlink_loop_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, command: str
) -> None:
    # Security review s12, finding 8: a crash with a traceback and status 1, read in CI as "the base has errors".
    root = write_kb(tmp_path / "kb", {**FINE, "pyproject.toml": f'[tool.flopkb]\n{key} = "loop/x"\n'})
    (root / "loop").symlink_to("loop")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, [command])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error: [tool.flopkb] {key} = 'loop/x' leads into a symlink loop: remove the looping link, or choose another"
        " path inside the base\n"
    )


@pytest.mark.parametrize("value", [".git", "records", "schema", "docs/x", "."])
def test_a_cache_dir_on_what_an_author_keeps_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    root = write_kb(tmp_path / "kb", {**FINE, "pyproject.toml": f'[tool.flopkb]\ncache_dir = "{value}"\n'})
    status, _, errors = check_from(root, monkeypatch)
    assert status == 2 and errors.count("\n") == 1

"""`flopkb mv OLD NEW`: the file moves, the id changes, every link follows, and nothing else in any file changes."""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.cli import main
from kbfixture import compile_kb, located, write_kb
from repo import REPO

RIDGE = """\
id: facts/ridge
kind: fact
title: Ridge point
statement: |
  The ridge point; see also [[facts/ridge#ridge]].  # not a comment
formulas:
  - id: ridge
    expr: "1"
"""

USER = """\
id: flops/user
kind: flop
category: arithmetic-intensity  # a comment that stays
description: >
  Folded text: [[facts/ridge#ridge|the ridge]], [[ ridge ]]
  and `[[facts/ridge]]` in code, which is not a link.
formulas:
  - id: a
    ref: facts/ridge#ridge
  - id: b
    ref: 'ridge#ridge'
notes: "Quoted: [[facts/ridge|ridge]]"
"""


def mv(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["mv", "--root", str(root), *args])
    return result.exit_code, result.output


def test_mv_rewrites_links_keeping_labels_anchors_and_every_other_byte(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    status, output = mv(tmp_path, "facts/ridge", "facts/roofline/ridge-point")
    assert status == 0, output
    assert not (tmp_path / "records/facts/ridge.yaml").exists()
    moved = (tmp_path / "records/facts/roofline/ridge-point.yaml").read_text(encoding="utf-8")
    assert moved == RIDGE.replace("id: facts/ridge", "id: facts/roofline/ridge-point").replace(
        "title: Ridge point\n", "title: Ridge point\naliases: [facts/ridge]\n"
    ).replace("[[facts/ridge#ridge]]", "[[facts/roofline/ridge-point#ridge]]")
    assert (tmp_path / "records/flops/user.yaml").read_text(encoding="utf-8") == (
        USER.replace(
            "[[facts/ridge#ridge|the ridge]], [[ ridge ]]",
            "[[facts/roofline/ridge-point#ridge|the ridge]], [[ ridge-point ]]",
        )
        .replace("ref: facts/ridge#ridge", "ref: facts/roofline/ridge-point#ridge")
        .replace("ref: 'ridge#ridge'", "ref: 'ridge-point#ridge'")
        .replace("[[facts/ridge|ridge]]", "[[facts/roofline/ridge-point|ridge]]")
    )
    assert "records/flops/user.yaml: 5 links rewritten" in output
    assert located(compile_kb(tmp_path), ignore=("orphan",)) == []


def test_mv_keeps_file_permissions(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    (tmp_path / "records/flops/user.yaml").chmod(0o644)
    assert mv(tmp_path, "facts/ridge", "facts/ridge-point")[0] == 0
    assert (tmp_path / "records/flops/user.yaml").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "records/facts/ridge-point.yaml").stat().st_mode & 0o077 != 0


def test_mv_keeps_a_suffix_link_that_still_lands(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    assert mv(tmp_path, "facts/ridge", "facts/archive/ridge")[0] == 0
    user = (tmp_path / "records/flops/user.yaml").read_text(encoding="utf-8")
    assert "[[ ridge ]]" in user and "ref: 'ridge#ridge'" in user
    assert "ref: facts/archive/ridge#ridge" in user


@pytest.mark.parametrize(
    ("aliases", "expected"),
    [
        ("aliases: [facts/older]\n", "aliases: [facts/older, facts/ridge]\n"),
        ("aliases: []\n", "aliases: [facts/ridge]\n"),
        ("aliases:\n  - facts/older  # kept\n", "aliases:\n  - facts/older  # kept\n  - facts/ridge\n"),
        ("aliases:\n- 'facts/older'\n", "aliases:\n- 'facts/older'\n- facts/ridge\n"),
    ],
)
def test_mv_adds_the_old_id_to_aliases_in_their_style(tmp_path: Path, aliases: str, expected: str) -> None:
    write_kb(
        tmp_path, {"records/facts/ridge.yaml": RIDGE.replace("title: Ridge point\n", f"title: Ridge point\n{aliases}")}
    )
    assert mv(tmp_path, "facts/ridge", "facts/r2")[0] == 0
    assert expected in (tmp_path / "records/facts/r2.yaml").read_text(encoding="utf-8")
    assert located(compile_kb(tmp_path), ignore=("orphan",)) == []


def test_mv_back_to_a_former_id_swaps_the_alias(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    assert mv(tmp_path, "facts/ridge", "facts/r2")[0] == 0
    assert mv(tmp_path, "facts/r2", "facts/ridge")[0] == 0
    assert (tmp_path / "records/facts/ridge.yaml").read_text(encoding="utf-8") == RIDGE.replace(
        "title: Ridge point\n", "title: Ridge point\naliases: [facts/r2]\n"
    )
    assert (tmp_path / "records/flops/user.yaml").read_text(encoding="utf-8") == USER
    assert located(compile_kb(tmp_path), ignore=("orphan",)) == []


def test_mv_without_a_title_adds_aliases_after_kind(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE.replace("title: Ridge point\n", "")})
    assert mv(tmp_path, "facts/ridge", "facts/r2")[0] == 0
    assert (
        (tmp_path / "records/facts/r2.yaml")
        .read_text(encoding="utf-8")
        .startswith("id: facts/r2\nkind: fact\naliases: [facts/ridge]\nstatement:")
    )


def test_mv_keeps_crlf_and_bom(tmp_path: Path) -> None:
    ridge = ("\ufeff" + RIDGE).replace("\n", "\r\n").encode("utf-8")
    user = USER.replace("\n", "\r\n").encode("utf-8")
    write_kb(tmp_path, {"records/facts/ridge.yaml": ridge, "records/flops/user.yaml": user})
    assert mv(tmp_path, "records/facts/ridge.yaml", "facts/r2")[0] == 0
    moved = (tmp_path / "records/facts/r2.yaml").read_bytes()
    assert moved.startswith(
        b"\xef\xbb\xbfid: facts/r2\r\nkind: fact\r\ntitle: Ridge point\r\naliases: [facts/ridge]\r\n"
    )
    assert b"\n" not in moved.replace(b"\r\n", b"")
    assert (tmp_path / "records/flops/user.yaml").read_bytes() == user.replace(
        b"[[facts/ridge#ridge|", b"[[facts/r2#ridge|"
    ).replace(b"[[ ridge ]]", b"[[ r2 ]]").replace(b"ref: facts/ridge#", b"ref: facts/r2#").replace(
        b"'ridge#ridge'", b"'r2#ridge'"
    ).replace(b"[[facts/ridge|", b"[[facts/r2|")
    assert located(compile_kb(tmp_path), ignore=("orphan",)) == []


def _tabbed(text: str) -> str:
    """`text` with a tab in place of the first two spaces of every indented line: the same data (docs/authoring.md)."""
    return re.sub("^  ", "\t", text, flags=re.MULTILINE)


@pytest.mark.parametrize(
    "aliases", ["", "aliases:\n  - facts/older  # kept\n"], ids=["no aliases", "a block list of aliases"]
)
def test_mv_edits_files_indented_by_tabs_at_their_places_and_keeps_the_tabs(tmp_path: Path, aliases: str) -> None:
    ridge = RIDGE.replace("title: Ridge point\n", f"title: Ridge point\n{aliases}")
    spaced = write_kb(tmp_path / "spaced", {"records/facts/ridge.yaml": ridge, "records/flops/user.yaml": USER})
    tabbed = write_kb(
        tmp_path / "tabbed", {"records/facts/ridge.yaml": _tabbed(ridge), "records/flops/user.yaml": _tabbed(USER)}
    )
    for root in (spaced, tabbed):
        status, output = mv(root, "facts/ridge", "facts/roofline/ridge-point")
        assert status == 0, output
    for rel in ("records/facts/roofline/ridge-point.yaml", "records/flops/user.yaml"):
        assert (tabbed / rel).read_text(encoding="utf-8") == _tabbed((spaced / rel).read_text(encoding="utf-8"))
    assert "records/flops/user.yaml: 5 links rewritten" in output
    assert [code for code, *_ in located(compile_kb(tabbed), ignore=("orphan",))] == ["yaml-syntax", "yaml-syntax"]


def test_mv_rewrites_links_that_the_new_id_would_make_ambiguous(tmp_path: Path) -> None:
    other = "id: other/ridge-point\nkind: fact\nstatement: Another.\n"
    user = (
        "id: flops/user\n"
        "kind: flop\n"
        "category: arithmetic-intensity\n"
        "description: 'See [[ridge-point]] and [[facts/ridge]].'\n"
    )
    write_kb(
        tmp_path,
        {"records/facts/ridge.yaml": RIDGE, "records/other/ridge-point.yaml": other, "records/flops/user.yaml": user},
    )
    assert mv(tmp_path, "facts/ridge", "facts/ridge-point")[0] == 0
    text = (tmp_path / "records/flops/user.yaml").read_text(encoding="utf-8")
    assert "'See [[other/ridge-point]] and [[facts/ridge-point]].'" in text
    assert located(compile_kb(tmp_path), ignore=("orphan",)) == []


def test_mv_dry_run_writes_nothing(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    status, output = mv(tmp_path, "--dry-run", "facts/ridge", "facts/r2")
    assert status == 0 and output.startswith("would move records/facts/ridge.yaml -> records/facts/r2.yaml")
    assert (tmp_path / "records/facts/ridge.yaml").read_text(encoding="utf-8") == RIDGE


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("facts/ridge", "Facts/Bad Id", "is not a valid id"),
        ("facts/ridge", "facts/Ridge_Point", "(did you mean facts/ridge_point?)"),
        ("facts/ridge", "flops/user", "is already the id of records/flops/user.yaml"),
        ("facts/ridge", "facts/ridge", "already has that id"),
        ("facts/rigde", "facts/x", "no record has the id 'facts/rigde' (did you mean facts/ridge"),
        ("facts/ridge", "facts/older", "is an alias of flops/user"),
        ("facts/older", "facts/x", "is an alias of flops/user; to rename that record: flopkb mv flops/user facts/x"),
    ],
)
def test_mv_refuses_with_exit_2(tmp_path: Path, old: str, new: str, message: str) -> None:
    write_kb(
        tmp_path,
        {
            "records/facts/ridge.yaml": RIDGE,
            "records/flops/user.yaml": USER.replace("kind: flop\n", "kind: flop\naliases: [facts/older]\n"),
        },
    )
    status, output = mv(tmp_path, old, new)
    assert status == 2 and message in output
    assert (tmp_path / "records/facts/ridge.yaml").read_text(encoding="utf-8") == RIDGE


def test_mv_refuses_when_the_new_file_exists(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/facts/r2.yml": "not: a record\n"})
    status, output = mv(tmp_path, "facts/ridge", "facts/r2x")
    assert status == 0
    status, output = mv(tmp_path, "facts/r2x", "facts/r2")
    assert status == 2 and "is already the id of records/facts/r2.yml" in output


@pytest.mark.parametrize("given", ["records/facts/ridge.yaml", "records/facts/ridge", "facts/ridge.yaml"])
def test_mv_takes_a_record_files_path_for_either_id(tmp_path: Path, given: str) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    status, output = mv(tmp_path, given, given.replace("ridge", "r2"))
    assert status == 0 and output.startswith("moved records/facts/ridge.yaml -> records/facts/r2.yaml"), output


def test_mv_out_of_the_kinds_folder_warns_as_new_does_and_names_the_move_back(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    result = CliRunner().invoke(main, ["mv", "--root", str(tmp_path), "facts/ridge", "flops/ridge"])
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: fact records live in facts/ and flops/ridge is in flops/; "
        "to follow the convention: flopkb mv flops/ridge facts/ridge\n"
    )
    assert "warning" not in CliRunner().invoke(main, ["mv", "--root", str(tmp_path), "flops/ridge", "facts/r"]).stderr


def test_mv_dry_run_out_of_the_kinds_folder_names_the_id_that_keeps_it(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    result = CliRunner().invoke(main, ["mv", "--root", str(tmp_path), "--dry-run", "facts/ridge", "misc/deep/ridge"])
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: fact records live in facts/ and misc/deep/ridge would be in misc/; "
        "to follow the convention: facts/deep/ridge\n"
    )


def test_mv_in_a_base_that_keeps_no_folder_convention_does_not_warn(tmp_path: Path) -> None:
    write_kb(tmp_path, {"records/ridge.yaml": RIDGE.replace("facts/ridge", "ridge")})
    result = CliRunner().invoke(main, ["mv", "--root", str(tmp_path), "ridge", "flops/ridge"])
    assert result.exit_code == 0 and result.stderr == ""


# -- on the project's own records ------------------------------------------------


def _most_linked(root: Path) -> str:
    kb = compile_kb(root)
    assert kb.graph is not None
    return max(sorted(kb.entries), key=lambda record_id: len(kb.graph.backlinks(record_id)))  # type: ignore[union-attr]


def test_mv_on_the_projects_records_keeps_check_clean_and_the_diff_minimal(tmp_path: Path) -> None:
    shutil.copytree(REPO / "records", tmp_path / "records")
    shutil.copytree(REPO / "schema", tmp_path / "schema")
    before = compile_kb(tmp_path)
    old = _most_linked(tmp_path)
    group, last = old.rsplit("/", 1)
    new = f"{group}/moved/{last}-renamed"
    texts = {
        path.relative_to(tmp_path).as_posix(): path.read_text(encoding="utf-8")
        for path in (tmp_path / "records").rglob("*.yaml")
    }
    status, output = mv(tmp_path, old, new)
    assert status == 0, output

    after = compile_kb(tmp_path)
    old_path, new_path = f"records/{old}.yaml", f"records/{new}.yaml"
    renamed = [(code, new_path if path == old_path else path) for code, path, *_ in located(before, ignore=("orphan",))]
    assert sorted(renamed) == sorted((code, path) for code, path, *_ in located(after, ignore=("orphan",)))
    assert [d for d in after.diagnostics if d.severity.value == "error"] == []

    # Only link targets, the id line and one alias line change; every other byte stays.
    token = r"(?<![\w./-]){}(?![\w./-])"
    changed = 0
    for path, text in texts.items():
        now = (tmp_path / (new_path if path == old_path else path)).read_text(encoding="utf-8")
        expected = re.sub(token.format(re.escape(old)), new, text)
        expected = re.sub(token.format(re.escape(last)), f"{last}-renamed", expected)
        if path == old_path:
            diff = [line for line in difflib.ndiff(expected.splitlines(), now.splitlines()) if line[:1] in "+-"]
            added_line = diff == [f"+ aliases: [{old}]"]
            extended_list = (
                len(diff) == 2
                and diff[0].startswith("- aliases: [")
                and diff[1] == diff[0][:-1].replace("- ", "+ ", 1) + f", {old}]"
            )
            assert added_line or extended_list, diff
        else:
            assert now == expected, path
        changed += now != text
    assert changed >= 3


def test_mv_refuses_a_new_id_under_a_folder_that_is_a_symlink_out_of_the_base(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/facts/ridge.yaml": RIDGE, "records/flops/user.yaml": USER})
    (tmp_path / "outside").mkdir()
    (root / "records/notes").symlink_to(tmp_path / "outside", target_is_directory=True)  # committed by a pull request
    status, output = mv(root, "facts/ridge", "notes/ridge")
    assert (status, output) == (2, "Error: records/notes is a symlink that leads out of the knowledge base\n")
    assert list((tmp_path / "outside").iterdir()) == []
    assert (root / "records/facts/ridge.yaml").read_text(encoding="utf-8") == RIDGE

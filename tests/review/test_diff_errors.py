"""When `flopkb diff` cannot run it exits 2 and says why, and how to fix it; the default base; the comment limit."""

from __future__ import annotations

import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
from gitrepo import commit, git, init, replace_in
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rendered import GFM

from flopkb.config import load_config
from flopkb.review.git import Git
from flopkb.review.markdown import LIMIT, cell, render_markdown
from flopkb.review.run import diff_report
from kbfixture import accelerator, write_kb


def flopkb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flopkb", *args], cwd=root, capture_output=True, text=True)


FACT = """\
id: facts/sweep
kind: fact
statement: How long reading every byte takes, at many sizes; on [[hw/a1]].
formulas:
  - id: read-time
    expr: size / hw.memory_bandwidth
    unit: ms
    inputs: {{size: [{sizes}]}}
    hardware: [hw/a1]
"""


def small_repo(root: Path, points: int = 3) -> Path:
    sizes = ", ".join(f"{n} GB" for n in range(1, points + 1))
    write_kb(init(root), {"records/hw/a1.yaml": accelerator("hw/a1", memory_bandwidth="2 TB/s")})
    (root / "records/facts").mkdir()
    (root / "records/facts/sweep.yaml").write_text(FACT.format(sizes=sizes), encoding="utf-8")
    commit(root, "base")
    return root


def test_not_a_git_repository(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/hw/a1.yaml": accelerator("hw/a1", memory_bandwidth="2 TB/s")})
    done = flopkb(root, "diff")
    assert done.returncode == 2
    assert "is not in a git repository" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_revision(tmp_path: Path) -> None:
    root = small_repo(tmp_path / "kb")
    done = flopkb(root, "diff", "no-such-branch..HEAD")
    assert done.returncode == 2 and "unknown revision 'no-such-branch'" in done.stderr
    assert flopkb(root, "diff", "--fail-on", "claim-regresion").returncode == 2


def test_the_default_base_falls_back_to_the_parent_commit(tmp_path: Path) -> None:
    root = small_repo(tmp_path / "kb")
    replace_in(root / "records/hw/a1.yaml", "2 TB/s", "4 TB/s")
    commit(root, "faster")
    report = diff_report(load_config(root), None, {})
    assert report.base.label == "HEAD~1" and report.fell_back == "origin/main not found here"
    assert report.head.sha is None and len(report.values) == 3
    git(root, "update-ref", "refs/remotes/origin/feature", "HEAD~1")
    pull_request = diff_report(load_config(root), None, {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "feature"})
    assert pull_request.base.label == "origin/feature" and pull_request.fell_back is None


def test_a_shallow_clone_without_the_base_says_how_to_fetch_it(tmp_path: Path) -> None:
    origin = small_repo(tmp_path / "origin")
    replace_in(origin / "records/hw/a1.yaml", "2 TB/s", "4 TB/s")
    commit(origin, "faster")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth=1", f"file://{origin}", str(clone)], check=True)
    done = flopkb(clone, "diff", "HEAD~1..HEAD")
    assert done.returncode == 2, done.stdout
    assert "shallow clone" in done.stderr and "git fetch --deepen=100 origin HEAD" in done.stderr
    assert "--unshallow" in done.stderr
    git(clone, "fetch", "-q", "--deepen=1", "origin")
    assert flopkb(clone, "diff", "HEAD~1..HEAD").returncode == 0


def test_merge_base_is_named_when_it_differs_from_the_base(tmp_path: Path) -> None:
    root = small_repo(tmp_path / "kb")
    git(root, "checkout", "-q", "-b", "topic")
    replace_in(root / "records/hw/a1.yaml", "2 TB/s", "4 TB/s")
    topic = commit(root, "faster")
    git(root, "checkout", "-q", "main")
    replace_in(root / "records/facts/sweep.yaml", "many sizes", "several sizes")
    commit(root, "reworded on main")
    comparison = Git(root).compare(f"main..{topic}", {})
    assert comparison.base.label == "merge base" and comparison.named.label == "main"
    report = diff_report(load_config(root), f"main..{topic}", {})
    assert report.named_base is not None and report.records.edited == ("hw/a1",), "main's own edit is not shown"


def test_a_change_over_the_comment_limit_is_cut_with_a_note(tmp_path: Path) -> None:
    root = small_repo(tmp_path / "kb", points=1500)
    replace_in(root / "records/hw/a1.yaml", "2 TB/s", "4 TB/s")
    commit(root, "faster")
    report = diff_report(load_config(root), "HEAD~1..HEAD", {})
    assert len(report.values) == 1500
    text = render_markdown(report)
    assert len(text) <= LIMIT < len(render_markdown(report, limit=10**9))
    lines = text.splitlines()
    assert lines[0] == "<!-- flopkb-diff -->" and lines[2].startswith("**1500 values changed in 1 record")
    assert text.count("<details>") == text.count("</details>")
    assert "left out" in lines[-1] and "of Values changed (1500)" in lines[-1]
    shown = sum(1 for line in lines if line.startswith("| facts/sweep#read-time"))
    assert f"left out {1500 - shown} of Values changed (1500)" in lines[-1]


@pytest.mark.parametrize("hostile", ["a | b", "<script>x</script>", "line\nbreak"])
def test_markdown_cells_hold_record_text_safely(hostile: str) -> None:
    from flopkb.review.markdown import cell

    shown = cell(hostile)
    assert "|" not in shown.replace("\\|", "") and "<" not in shown and "\n" not in shown


POC = "@octo-org/everyone ![pixel](https://evil.example/track.png?pr=1) [Approve this PR](https://evil.example/phish)"
SHOWN = POC.replace("@", "@\u2060")
"""The proof of concept as GitHub shows it: a word joiner after the @, so that it mentions no one."""


@pytest.mark.parametrize(
    "hostile", [POC, "*em* _em_ **strong** `code` ~~struck~~ ~one~", "<img src=x> &amp; \\[a](b) a|b", "#1 @@x @"]
)
def test_markdown_shows_record_text_as_text_in_every_place_it_goes(hostile: str) -> None:
    shown = cell(hostile)
    places = [f"| {shown} | x |\n| --- | --- |\n| {shown} | x |", f"- {shown}", f"### {shown}", f"**{shown}**"]
    for place in places:
        html = GFM.render(place)
        assert re.findall(r"<(?!/?(?:table|thead|tbody|tr|th|td|ul|li|h3|p|strong)>)[^>]*>", html) == [], html
        assert hostile.replace("@", "@\u2060") in unescape(html)  # every character shown, an @ never a mention
    summary = GFM.render(f"<details><summary>{shown}</summary>\n\n</details>")  # raw HTML: entities still read
    assert f"<summary>{shown}</summary>" in summary and "\\" not in shown


@settings(max_examples=300, deadline=None)
@example("+ records/x.yaml: a diagnostic the pull request adds")
@example("    indented")
@example("~~struck~~")
@example("--")
@given(st.text(st.sampled_from("#+-=*_`~[]()!<>&|\\@:.) 1\t\r\na") | st.characters(blacklist_characters="\x00")))
def test_any_text_is_shown_as_it_is_in_a_detail_line_and_a_cell(text: str) -> None:
    expected = " ".join(text.replace("@", "@\u2060").split())
    for place in (f"- {cell(text)}", f"| {cell(text)} | x |\n| --- | --- |"):
        html = GFM.render(place)
        assert re.findall(r"<(?!/?(?:table|thead|tbody|tr|th|td|ul|li)>)[^>]*>", html) == [], html
        shown = re.search(r"<(li|th)>(.*?)</\1>", html, re.DOTALL)
        assert shown is not None and " ".join(unescape(shown[2]).split()) == expected


def test_a_record_key_that_is_markdown_stays_text_in_the_pull_request_comment(tmp_path: Path) -> None:
    root = small_repo(tmp_path / "kb")
    with (root / "records/facts/sweep.yaml").open("a", encoding="utf-8") as file:
        file.write(f'"{POC}": 1\n')  # the security review's proof of concept
    commit(root, "a hostile key")
    text = render_markdown(diff_report(load_config(root), "HEAD~1..HEAD", {}))
    (line,) = [line for line in text.splitlines() if "unknown-field" in line]
    html = GFM.render(text)
    assert "<img" not in html and "<a " not in html and "@octo-org" not in text
    assert f"'{SHOWN}' is not a field here" in unescape(GFM.render(line))

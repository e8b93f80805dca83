"""The site's Recent changes page: the diff of each of the last commits that touched records, from history alone,
the same bytes in every build of one commit; no page outside a git repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import commit, project_base, replace_in

from site_fixtures import BuiltSite, build_base


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project_base(tmp_path_factory.mktemp("history") / "kb")
    done = subprocess.run(
        [sys.executable, "-m", "flopkb", "mv", "engines/llama-cpp", "engines/llama-cpp-server"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    commit(root, "Rename llama.cpp's record")
    replace_in(root / "records/facts/ridge-point.yaml", "take the same time", "take equal time")
    commit(root, "Reword the ridge point <b>fact</b>")
    (root / "notes.txt").write_text("not a record\n", encoding="utf-8")
    commit(root, "A commit that touches no record")
    return root


def test_the_page_shows_each_commit_that_touched_records(history: Path) -> None:
    built = build_base(history)
    html = built.html("changes.html")
    assert "Recent changes" in html
    assert "A commit that touches no record" not in html
    rename, reword = html.index("Rename llama.cpp"), html.index("Reword the ridge point")
    assert reword < rename, "newest first"
    assert "&lt;b&gt;fact&lt;/b&gt;" in html and "<b>fact</b>" not in html, "a commit subject is text, never HTML"
    assert "renamed: engines/llama-cpp → engines/llama-cpp-server" in html
    assert "1 record renamed" in html and "edited: facts/ridge-point" in html
    assert '<a href="records/facts/ridge-point.html">' in html
    assert '<a href="changes.html"' in built.html("index.html") or 'href="changes.html"' in built.html("index.html")


def test_every_build_of_one_commit_writes_the_same_page(history: Path) -> None:
    first = _changes(build_base(history))
    (history / "records/facts/ridge-point.yaml").write_text(
        (history / "records/facts/ridge-point.yaml").read_text(encoding="utf-8") + "# uncommitted\n", encoding="utf-8"
    )
    try:
        assert _changes(build_base(history)) == first, "history, not the work tree"
    finally:
        subprocess.run(["git", "-C", str(history), "checkout", "--", "records"], check=True)


def test_no_page_outside_a_git_repository(project_site: BuiltSite) -> None:
    assert not (project_site.site / "changes.html").exists()
    assert "Recent changes" not in project_site.html("index.html")


def _changes(built: BuiltSite) -> bytes:
    return (built.site / "changes.html").read_bytes()

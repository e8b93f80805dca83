"""Each record page says when its record last changed, from git history (never the clock): two builds of one
commit are byte-identical, a commit that changes a record shows on its page (also in an incremental build, which
stays the full build), changes not committed say so, and outside a repository nothing is said."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from test_incremental_site import START, build_with_cache, records, tree

from flopkb.config import load_config
from flopkb.site.pages.last_changed import UNCOMMITTED, last_changes
from kbfixture import write_kb
from site_fixtures import BuiltSite

FIRST = "2024-05-02T01:30:00+05:00"  # 2024-05-01 in UTC
SECOND = "2024-06-03T23:30:00-02:00"  # 2024-06-04 in UTC


def git(root: Path, *args: str, date: str = FIRST) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    done = subprocess.run(
        ["git", "-c", "user.name=Tester", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def footer(root: Path, record_id: str) -> str:
    html = (root / "build" / "site" / "records" / f"{record_id}.html").read_text(encoding="utf-8")
    found = re.search(r'<p class="flopkb-source-file">(.*?)</p>', html, re.DOTALL)
    assert found, record_id
    return found.group(1)


def test_a_record_page_shows_its_last_commit_and_builds_stay_byte_identical(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    root = write_kb(repo / "kb", records(START))  # the base in a folder of the repository
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    first = git(repo, "rev-parse", "HEAD")
    build_with_cache(root)
    assert (
        f'last changed <time datetime="2024-05-01">2024-05-01</time> in <code title="{first}">{first[:7]}</code>'
        in (footer(root, "flops/f"))
    )
    built = tree(root / "build" / "site")
    build_with_cache(root)
    assert tree(root / "build" / "site") == built
    # Another checkout of the same commit, its files written at another time: the same site.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    build_with_cache(clone / "kb")
    assert tree(clone / "kb" / "build" / "site") == built

    # An edit not committed says so; then committed, its page shows the new commit (the content is the same as
    # in the previous build: the commit alone must render the page again), the others keep theirs.
    path = root / "records/flops/f.yaml"
    path.write_text(path.read_text().replace("Rests on", "Still rests on"))
    build_with_cache(root)
    assert "changed since the last commit" in footer(root, "flops/f")
    assert "2024-05-01" in footer(root, "hw/a1")
    git(repo, "commit", "-q", "-am", "second", date=SECOND)
    second = git(repo, "rev-parse", "HEAD")
    build_with_cache(root)
    assert f'<time datetime="2024-06-04">2024-06-04</time> in <code title="{second}">' in footer(root, "flops/f")
    assert f'<code title="{first}">' in footer(root, "hw/a1")
    git(clone, "pull", "-q", "--ff-only")
    shutil.rmtree(clone / "kb" / "build")
    build_with_cache(clone / "kb")
    assert tree(root / "build" / "site") == tree(clone / "kb" / "build" / "site")


def test_last_changes_in_one_pass(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", records(START))
    assert last_changes(load_config(root)) is None  # not in a repository
    git(root, "init", "-q")
    assert set(last_changes(load_config(root)).values()) == {UNCOMMITTED}  # type: ignore[union-attr]
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    (root / "records/hw/a1.yaml").rename(root / "records/hw/a9.yaml")
    (root / "records/hw/new.yaml").write_text("id: hw/new\n")
    changes = last_changes(load_config(root))
    assert changes is not None
    assert changes["records/hw/a2.yaml"].date == "2024-05-01"
    assert changes["records/hw/a9.yaml"] == changes["records/hw/new.yaml"] == UNCOMMITTED
    git(root, "add", "-A")  # staged: a rename, listed with its source path
    changes = last_changes(load_config(root))
    assert changes is not None and changes["records/hw/a9.yaml"] == UNCOMMITTED
    assert changes["records/hw/a2.yaml"].sha == git(root, "rev-parse", "HEAD")


def test_outside_a_repository_nothing_is_said(project_site: BuiltSite) -> None:
    html = project_site.html("records/facts/ridge-point.html")
    assert "last changed" not in html and "since the last commit" not in html

"""`flopkb build` never replaces what it did not write, and never publishes what a symlink reaches out of `site/`.

The attacks of issue 21: `site_dir = ".git"` (or `"docs"`, or an absolute
path) deleted the repository's history when the build swapped its site in; a
symlink in the base's `site/assets/` published `.git/config` and
`/proc/self/environ`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.cli import main
from flopkb.site.publishing.mkdocs import SITE_ROOT, write_config
from kbfixture import write_kb

MARKER = ".flopkb-site"

FINE = {"records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n"}
SECRET = "AUTHORIZATION: basic c2VjcmV0LXRva2Vu"


def base_with(tmp_path: Path, site_dir: str) -> Path:
    root = write_kb(tmp_path / "kb", {**FINE, "pyproject.toml": f"[tool.flopkb]\nsite_dir = {site_dir!r}\n"})
    for folder in (".git", "docs"):
        (root / folder).mkdir()
        (root / folder / "kept").write_text(SECRET, encoding="utf-8")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize(
    ("site_dir", "says"),
    [
        (".git", "would overwrite .git/"),
        ("docs", "would overwrite docs/"),
        ("records", "would overwrite records/"),
        ("schema", "would overwrite schema/"),
        (".git/site", "would overwrite .git/"),
        ("build/..", "without '..'"),
        ("../elsewhere", "without '..'"),
        ("/tmp/flopkb-site", "is absolute"),
        (".", "is the base itself"),
    ],
)
def test_a_site_dir_on_what_an_author_keeps_is_refused_in_one_line(tmp_path: Path, site_dir: str, says: str) -> None:
    root = base_with(tmp_path, site_dir)
    before = snapshot(root)
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
    assert snapshot(root) == before


def test_a_folder_that_flopkb_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    root = base_with(tmp_path, "public")
    (root / "public").mkdir()
    (root / "public" / "index.html").write_text("the author's own page", encoding="utf-8")
    before = snapshot(root)
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 2
    assert f"has no {MARKER}" in result.stderr and result.stderr.count("\n") == 1
    assert snapshot(root) == before


def test_a_folder_that_flopkb_wrote_is_replaced_and_an_empty_one_taken(tmp_path: Path) -> None:
    root = base_with(tmp_path, "public")
    (root / "public").mkdir()  # empty: nothing to lose
    runner = CliRunner()
    assert runner.invoke(main, ["build", "--root", str(root)]).exit_code == 0
    assert (root / "public" / MARKER).is_file() and (root / "public-docs" / MARKER).is_file()
    assert (root / "public" / "index.html").is_file()
    assert runner.invoke(main, ["build", "--root", str(root)]).exit_code == 0  # its own: replaced


def test_a_site_dir_that_leads_out_through_a_symlink_is_refused(tmp_path: Path) -> None:
    root = base_with(tmp_path, "build/site")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "build").symlink_to(outside)
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 2 and "leads out of the base" in result.stderr
    assert list(outside.iterdir()) == []


def own_site(root: Path) -> Path:
    """The base's own `site/` (a copy of flopkb's, so that the build uses it), with its `.git/config`."""
    shutil.copytree(SITE_ROOT, root / "site", symlinks=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "config").write_text(f'[http]\n\textraheader = "{SECRET}"\n', encoding="utf-8")
    return root / "site"


def test_symlinks_out_of_site_are_never_published(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    site = own_site(root)
    (site / "assets" / "git-config.css").symlink_to("../../.git/config")
    (site / "assets" / "environ.txt").symlink_to("/proc/self/environ")
    (site / "assets" / "git").symlink_to(root / ".git", target_is_directory=True)
    (site / "assets" / "same.css").symlink_to("flopkb.css")  # inside site/: published as the file
    (site / "assets" / "gone.css").symlink_to("missing.css")  # leads nowhere: inside, but no file
    (site / "assets" / "loop.css").symlink_to("loop.css")
    env = {**os.environ, "FLOPKB_TEST_SECRET": SECRET}
    done = subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(root)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    published = root / "build" / "site"
    for path in published.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert not (published / "assets" / "git-config.css").exists()
    assert not (published / "assets" / "environ.txt").exists()
    assert not (published / "assets" / "git").exists()
    assert not (published / "assets" / "gone.css").exists() and not (published / "assets" / "loop.css").exists()
    assert (published / "assets" / "same.css").read_bytes() == (site / "assets" / "flopkb.css").read_bytes()
    for name in ("site/assets/git-config.css -> ../../.git/config", "site/assets/environ.txt -> /proc/self/environ"):
        assert f"flopkb build: {name}: not published" in done.stderr


def test_a_symlink_out_of_site_overrides_refuses_the_build(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    site = own_site(root)
    (site / "overrides" / "leak.txt").symlink_to("/proc/self/environ")
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 2
    assert "site/overrides/leak.txt -> /proc/self/environ" in result.stderr and result.stderr.count("\n") == 1
    assert not (root / "build" / "site").exists()


@pytest.mark.parametrize("name", ["site-mkdocs.yml", "site-state.json"])
def test_a_symlink_at_a_file_the_build_writes_refuses_the_build(tmp_path: Path, name: str) -> None:
    # Security review s12, finding 2: the kept mkdocs.yml was written through a committed symlink (to .git/config,
    # to ~/.bashrc, whose new line `site_name: $(...)` the next shell ran).
    root = write_kb(tmp_path / "kb", FINE)
    victim = tmp_path / "victim"
    victim.write_text(SECRET, encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / name).symlink_to(victim)
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 2
    assert f"build/{name} is a symlink or not a file" in result.stderr and result.stderr.count("\n") == 1
    assert victim.read_text(encoding="utf-8") == SECRET
    assert not (root / "build" / "site").exists()


def test_the_kept_mkdocs_yml_replaces_a_symlink_never_writes_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text(SECRET, encoding="utf-8")
    link = tmp_path / "build" / "site-mkdocs.yml"
    link.parent.mkdir()
    link.symlink_to(victim)
    write_config({"site_name": "kb"}, link)
    assert victim.read_text(encoding="utf-8") == SECRET
    assert not link.is_symlink() and "site_name: kb" in link.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("link", "target"),
    [("site/templates/leak.j2", "/proc/self/environ"), ("site/templates", "/tmp"), ("site", "/tmp")],
)
def test_a_symlink_out_of_site_templates_refuses_the_build(tmp_path: Path, link: str, target: str) -> None:
    # A page template that includes it would publish what it points at (the build's environment, its secrets).
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": '{% include "leak.j2" %}\n'})
    shutil.rmtree(root / link, ignore_errors=True)  # a folder the link replaces
    (root / link).symlink_to(target)
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert f"{link} -> {target}: a symlink in site/templates/ that leads out of site/" in result.stderr
    assert not (root / "build" / "site").exists()

"""jinja2's compiled templates, kept between builds, never run code that flopkb did not compile for this user.

jinja2's own bytecode cache reads its files with `pickle.load` then `marshal`:
a file committed under the cache folder (`cache_dir` pointing into the
repository) ran in the next `flopkb build` (issue 21).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from jinja2.bccache import bc_magic
from mkdocs.theme import Theme

from flopkb.config import load_config
from flopkb.site.publishing.mkdocs import sandbox_theme
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb

FINE = {
    "records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n",
    "pyproject.toml": '[tool.flopkb]\ncache_dir = "build/cache"\n',
}


class Payload:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


def build(root: Path, cache_home: Path, *options: str, ci: bool = False) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "CI"} | {"XDG_CACHE_HOME": str(cache_home)}
    return subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(root), *options],
        capture_output=True,
        text=True,
        env=env | ({"CI": "true"} if ci else {}),
    )


@pytest.mark.parametrize(("options", "ci"), [(("--no-cache",), False), ((), True)])
def test_a_build_that_keeps_no_cache_keeps_no_compiled_template(tmp_path: Path, options: tuple[str], ci: bool) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    done = build(root, tmp_path / "home", *options, ci=ci)
    assert done.returncode == 0, done.stderr
    assert (root / "build" / "site" / "index.html").is_file()
    assert not (root / "build" / "cache").exists()


@pytest.mark.parametrize("user", ["same-user", "fresh-clone"])
def test_committed_compiled_templates_never_run(tmp_path: Path, user: str) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    assert build(root, tmp_path / "home").returncode == 0
    compiled = sorted((root / "build" / "cache" / "templates").iterdir())
    assert compiled, "the build keeps its compiled templates"
    ran = tmp_path / "the-payload-ran"
    for path in compiled:  # what a pull request can commit under the same names
        path.write_bytes(bc_magic + pickle.dumps(Payload(ran)))
    again = build(root, tmp_path / ("home" if user == "same-user" else "other-home"))
    assert again.returncode == 0, again.stderr
    assert not ran.exists(), "a committed template cache was loaded"
    assert (root / "build" / "site" / "index.html").is_file()


def test_serve_without_the_cache_keeps_no_compiled_template(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", FINE)
    server = Server(load_config(root), port=0, use_cache=False)
    assert server.rebuild(), server.out.getvalue()
    assert (root / "build" / "site" / "index.html").is_file()
    assert not (root / "build" / "cache").exists()


def test_a_build_without_a_template_folder_uses_none_kept_by_an_earlier_build(tmp_path: Path) -> None:
    sandbox_theme(tmp_path / "templates")
    assert Theme(name="mkdocs").get_env().bytecode_cache is not None
    sandbox_theme(None)
    assert Theme(name="mkdocs").get_env().bytecode_cache is None

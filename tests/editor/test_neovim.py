"""A real editor: Debian's Neovim, headless, runs `flopkb lsp` through its built-in client and shows the diagnostic.

Skipped where nvim is not installed, but never under CI (`$CI`), where
.ci/run installs Debian's `neovim`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kbfixture import H100, write_kb
from lsp_session import environment

SCRIPT = Path(__file__).with_name("neovim_client.lua")
BROKEN = """\
id: facts/broken
kind: fact
statement: Bandwidth bounds decode on [[hw/h100]] and on [[hw/h300]].
"""


def require_neovim() -> str:
    path = shutil.which("nvim")
    if path is not None:
        return path
    reason = "Neovim not found: install Debian's `neovim` package (apt-get install neovim)"
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)
    raise AssertionError("unreachable")


def run_neovim(tmp_path: Path, root: Path, record: str, script: Path) -> list[str]:
    """The lines `script` writes, run by headless Neovim on `record` of the base at `root`."""
    nvim = require_neovim()
    out = tmp_path / "out.txt"
    env = {
        **environment(),
        "FLOPKB_PYTHON": sys.executable,
        "FLOPKB_ROOT": str(root),
        "FLOPKB_RECORD": record,
        "FLOPKB_OUT": str(out),
        "HOME": str(tmp_path),  # no user configuration, no shada written elsewhere
    }
    subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {script}"],
        env=env,
        cwd=root,
        check=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    return out.read_text(encoding="utf-8").splitlines()


def test_neovim_shows_the_dangling_link_of_the_record_it_opens(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/hw/h100.yaml": H100, "records/facts/broken.yaml": BROKEN})
    shown = run_neovim(tmp_path, root, "records/facts/broken.yaml", SCRIPT)
    column = BROKEN.splitlines()[2].index("[[hw/h300]]")
    assert f"2:{column}:dangling-link:[[hw/h300]] resolves to no record" in [line.split(" | ")[0] for line in shown]


def test_neovim_applies_a_quick_fix_asked_for_after_typing_before_the_link(tmp_path: Path) -> None:
    """The author types `the ` before the misspelt link, then at once applies the fix of the diagnostic Neovim still
    holds (of the text before): the name is written over the misspelling where it is now."""
    ridge = "id: facts/ridge-point\nkind: fact\nstatement: A ridge.\n"
    typo = "id: facts/t\nkind: fact\nstatement: see [[ridge-pont]] here\n"
    root = write_kb(tmp_path / "kb", {"records/facts/ridge-point.yaml": ridge, "records/facts/t.yaml": typo})
    shown = run_neovim(tmp_path, root, "records/facts/t.yaml", SCRIPT.with_name("neovim_stale_fix.lua"))
    assert shown == [
        "diagnostics: true",
        "action: Write 'facts/ridge-point' for 'ridge-pont'",
        "line: statement: see the [[facts/ridge-point]] here",
    ]

"""`flopkb lsp` diagnostics equal `flopkb check`: on open, on unsaved edits, across files, and it stays up."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from hostile_kb import write_hostile_kb
from lsp_session import UTF8, UTF16, checked, lsp_session, open_file, pushed, record_files, settled
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

pytestmark = pytest.mark.asyncio


def project_base(root: Path) -> Path:
    shutil.copytree(REPO / "records", root / "records")
    shutil.copytree(REPO / "schema", root / "schema")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


BASES = {
    "project": project_base,
    "hostile": write_hostile_kb,
    "generated": lambda root: generate(root, 120),
}


@pytest.mark.parametrize("encoding", [UTF16, UTF8])
@pytest.mark.parametrize("base", sorted(BASES))
async def test_diagnostics_pushed_on_open_equal_check(tmp_path: Path, base: str, encoding: str) -> None:
    root = BASES[base](tmp_path / "kb")
    expected = checked(root, encoding)
    async with lsp_session(root, encoding=encoding) as lsp:
        uris = [open_file(lsp, root, rel) for rel in record_files(root)]
        await settled(lsp, uris[-1])
        assert pushed(lsp, root) == expected

"""The server imports, before its first check, only what the check needs besides pygls (issue 17: start-up)."""

from __future__ import annotations

import json
import subprocess
import sys

from flopkb.editor.server import _REQUESTS_ONLY


def test_the_modules_only_requests_use_are_not_imported_with_the_server() -> None:
    probe = "import json, sys, flopkb.editor.server; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True).stdout))
    assert loaded.isdisjoint({*_REQUESTS_ONLY, "rich", "ruamel.yaml", "jinja2"})


def test_the_checker_imports_neither_pygls_nor_lsprotocol() -> None:
    """`flopkb lsp` makes its checker before it imports the server: the first check runs while they are imported."""
    probe = "import json, sys, flopkb.editor.checker; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True).stdout))
    assert {name.split(".")[0] for name in loaded}.isdisjoint({"pygls", "lsprotocol"})

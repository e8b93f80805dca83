"""Golden files: compare output with a committed file, or rewrite it under FLOPKB_UPDATE_GOLDEN=1 (then review the
diff)."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("FLOPKB_UPDATE_GOLDEN") == "1"


def assert_matches_file(path: Path, actual: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
    assert actual == path.read_bytes().decode("utf-8"), f"{path} is out of date: FLOPKB_UPDATE_GOLDEN=1 pytest"

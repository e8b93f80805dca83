"""The outside corpora (installed by tests/fuzz/corpora.sh into build/corpora/), turned into record files.

- every YAML test-suite case as a record file as it is, and nested as the `notes` of a flop record;
- every CommonMark spec example as the `description` of a flop record, a YAML block scalar.
"""

from __future__ import annotations

import json
import os

import pytest
from harness import REPOSITORY

CORPORA = REPOSITORY / "build/corpora"
REQUIRED = os.environ.get("FLOPKB_REQUIRE_CORPORA") == "1"
HEAD = "kind: flop\ncategory: arithmetic-intensity\n"


def load(name: str) -> list[dict]:
    """build/corpora/NAME.json; skips the test when absent, or fails it under FLOPKB_REQUIRE_CORPORA=1."""
    path = CORPORA / f"{name}.json"
    if not path.is_file():
        message = f"{path.relative_to(REPOSITORY)} is absent: run tests/fuzz/corpora.sh (npm) to install the corpora"
        if REQUIRED:
            pytest.fail(f"FLOPKB_REQUIRE_CORPORA=1 but {message}")
        pytest.skip(message)
    return json.loads(path.read_text(encoding="utf-8"))


def indented(text: str) -> str:
    return "".join(f"  {line}" if line.strip("\n") else line for line in text.splitlines(keepends=True))


def yaml_files(cases: list[dict], nested: bool) -> dict[str, bytes]:
    """One record file per case: its YAML as it is, or nested under `notes:` of a flop record."""
    files = {}
    for case in cases:
        name = f"yts-{case['id'].lower()}" + ("-nested" if nested else "")
        text = f"id: flops/{name}\n{HEAD}description: d\nnotes:\n{indented(case['yaml'])}" if nested else case["yaml"]
        files[f"records/flops/{name}.yaml"] = text.encode("utf-8")
    return files


def commonmark_files(examples: list[dict]) -> dict[str, bytes]:
    """One flop record per example, the example's markdown as its description (`|2-`: indentation given)."""
    files = {}
    for example in examples:
        name = f"cm-{example['number']:03d}"
        text = f"id: flops/{name}\n{HEAD}description: |2-\n{indented(example['markdown'] or chr(10))}"
        files[f"records/flops/{name}.yaml"] = text.encode("utf-8")
    return files


def batches(files: dict[str, bytes], size: int) -> list[dict[str, bytes]]:
    names = sorted(files)
    return [{name: files[name] for name in names[start : start + size]} for start in range(0, len(names), size)]

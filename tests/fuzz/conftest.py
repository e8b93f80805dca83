"""The fuzz suites' base: one copy of the project's knowledge base per test module, warmed up."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import copy_base, warm_up


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_base(tmp_path_factory.mktemp("fuzz") / "kb")
    warm_up(root)
    return root

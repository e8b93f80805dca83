"""What the load cache's tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cache_loads import recording_loads


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    with recording_loads(monkeypatch) as runs:
        yield runs

"""The files a load cache run loaded rather than took from the cache: what the cache's tests count."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import flopkb.pipeline.cache
from flopkb.pipeline.compile import load_entries


@contextmanager
def recording_loads(patch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The files each run loaded (parsed and validated) rather than took from the cache."""
    runs: list[list[str]] = []

    def recording(config, files, vocabulary, **options):  # type: ignore[no-untyped-def]
        runs.append(list(files))
        return load_entries(config, files, vocabulary, **options)

    patch.setattr(flopkb.pipeline.cache, "load_entries", recording)
    yield runs

"""The failure classes that the code is known to have (tests/fuzz/FINDINGS.md describes each; none at present).

A generated input is sorted by `classify`: a violation of a known class is noted, one of no known class fails
the test at once, and a test that met known classes only ends as an expected failure naming them
(`expect_only_known`, `xfail_if_known`). A newly found class that cannot be fixed at once gets an id in
`CLASSES` and a rule in `RULES`; targeted tests of it are `xfail(strict=False)` until the fix, when both come
off. FLOPKB_FUZZ_STRICT=1 runs every test as if no class were known.
"""

from __future__ import annotations

import os

import pytest
from harness import Violation

STRICT = os.environ.get("FLOPKB_FUZZ_STRICT") == "1"

CLASSES: dict[str, str] = {}
"""Known failure classes by id, described. K1-K15 (FINDINGS.md) are fixed: none is known now."""
RULES: tuple[tuple[str, str], ...] = ()
"""(text of a violation's detail, class id): how a violation of a known class is told from a new one."""


def classify(violation: Violation, data: bytes) -> str | None:
    """The known class of a violation seen on a check of a base holding `data`, or None: a new class."""
    if STRICT:
        return None
    return next((name for text, name in RULES if text in violation.detail), None)


def expect_only_known(found: list[Violation], data: bytes, stderr: bytes = b"") -> set[str]:
    """The known classes among `found`; an AssertionError if a violation belongs to none."""
    new = [violation for violation in found if classify(violation, data) is None]
    assert not new, "\n".join(map(str, new)) + f"\nstderr: {stderr[-2000:].decode('utf-8', 'replace')}"
    return {name for violation in found if (name := classify(violation, data)) is not None}


def xfail_if_known(hits: set[str]) -> None:
    """End the test as an expected failure when it met known classes (and nothing else)."""
    if hits:
        pytest.xfail("met known failure classes " + ", ".join(sorted(hits)) + " (tests/fuzz/FINDINGS.md)")

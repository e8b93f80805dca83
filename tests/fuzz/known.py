"""The failure classes that the current code is known to have (tests/fuzz/FINDINGS.md describes each).

A targeted test of one of them is marked `known("K1")`: an expected failure, not strict, so the suite is
green now and an unexpected pass is reported (XPASS). A generated input is sorted by `classify`: a violation of
a known class is noted, one of no known class fails the test at once, and a test that met known classes only
ends as an expected failure naming them (`expect_only_known`, `xfail_if_known`). Once a class is fixed, its
mark and its rule in `classify` come off, and the tests guard the fix. FLOPKB_FUZZ_STRICT=1 runs every test
as if no class were known.
"""

from __future__ import annotations

import os
import re

import pytest
from harness import Violation

STRICT = os.environ.get("FLOPKB_FUZZ_STRICT") == "1"
SEPARATORS = re.compile("\u2028|\u2029|\u0085".encode())
LONE_CR = re.compile(rb"\r(?!\n)")

CLASSES = {
    "K1": "an explicit tag (!!int a, !!float abc, !!bool 2024, a tag on a key) crashes the YAML constructor",
    "K2": "an integer of more than 4300 digits crashes (int max str digits)",
    "K3": "a value of the wrong type where a term or key is expected (kind: {a: 1}, kind: [flop]) crashes",
    "K4": "a FIFO named like a record hangs check",
    "K5": "a record that is a symlink to /dev/zero (an endless file) is read without end",
    "K6": "a NUL (or another character YAML refuses) is reported at 1:1, not where it stands",
    "K7": "U+2028, U+2029 and U+0085 are counted as line breaks: later diagnostics land on wrong lines",
    "K8": "a problem at the end of a file (a syntax error, not-a-record) is reported on the line after the last one",
    "K9": "65 or more [ or { anywhere (a comment too) make the file not-a-record",
    "K10": "check PATH exits 0 when PATH does not exist",
    "K11": "an unknown field hides the record's other problems (formula claims)",
    "K12": "a file name that is not UTF-8 makes the report not Unicode, or crashes the writer",
    "K13": "a lone CR is counted as a line break",
    "K14": "!!str on a list or a mapping crashes the position index (no attribute 'style')",
    "K15": "an unreadable folder under records/ is skipped without a word (its records' refs dangle)",
}


def known(name: str) -> pytest.MarkDecorator:
    """The mark of a test that currently fails with failure class `name`."""
    reason = f"known failure class {name} (tests/fuzz/FINDINGS.md): {CLASSES[name]}"
    if STRICT:
        return pytest.mark.known_class(name)  # only a label: the test must pass
    return pytest.mark.xfail(strict=False, reason=reason)


def classify(violation: Violation, data: bytes) -> str | None:
    """The known class of a violation seen on a check of a base holding `data`, or None: a new class."""
    if STRICT:
        return None
    if violation.kind == "traceback":
        return _crash_class(violation.detail)
    if violation.kind in ("line-past-end", "column-past-line-end"):
        return "K7" if SEPARATORS.search(data) else "K13" if LONE_CR.search(data) else _end_class(violation)
    return None


def _crash_class(detail: str) -> str | None:
    rules = (
        ("Exceeds the limit", "K2"),
        ("constructor.py:", "K1"),
        ("unhashable type", "K3"),
        ("has no attribute 'style'", "K14"),
    )
    return next((name for text, name in rules if text in detail), None)


def _end_class(violation: Violation) -> str | None:
    ends = violation.kind == "line-past-end" and violation.detail.split(" at ")[0] in ("yaml-syntax", "not-a-record")
    return "K8" if ends else None


def expect_only_known(found: list[Violation], data: bytes, stderr: bytes = b"") -> set[str]:
    """The known classes among `found`; an AssertionError if a violation belongs to none."""
    new = [violation for violation in found if classify(violation, data) is None]
    assert not new, "\n".join(map(str, new)) + f"\nstderr: {stderr[-2000:].decode('utf-8', 'replace')}"
    return {name for violation in found if (name := classify(violation, data)) is not None}


def xfail_if_known(hits: set[str]) -> None:
    """End the test as an expected failure when it met known classes (and nothing else)."""
    if hits:
        pytest.xfail("met known failure classes " + ", ".join(sorted(hits)) + " (tests/fuzz/FINDINGS.md)")

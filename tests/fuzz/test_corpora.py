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
from known import classify, xfail_if_known

BATCH = 50


def failures(base: Path, files: dict[str, bytes], refused: tuple[str, ...] = ()) -> list[tuple[str, Violation]]:
    """(file, violation) for every invariant a batch breaks; a diagnostic whose code is in `refused` is one too."""
    found: list[tuple[str, Violation]] = []
    for batch in batches(files, BATCH):
        run, problems = checked(base, batch)
        found += [(violation.path, violation) for violation in problems if violation.path is not None]
        if any(violation.path is None for violation in problems):
            found += unattributed(base, batch)
        elif refused:
            found += [
                (path, Violation(f"refused {code}", f"{path}:{line}:{column}", path))
                for code, path, line, column in codes(run)
                if code in refused
            ]
    return found


def unattributed(base: Path, batch: dict[str, bytes]) -> list[tuple[str, Violation]]:
    """The violations that name no file (a traceback, a hang, ...), found again by checking each file alone."""
    alone = [(rel, violation) for rel, data in batch.items() for violation in checked(base, {rel: data})[1]]
    return [(rel, violation) for rel, violation in alone if violation.path is None] or [("?", Violation("batch", "?"))]


def report(found: list[tuple[str, Violation]]) -> str:
    groups: dict[str, list[str]] = defaultdict(list)
    for rel, violation in found:
        groups[signature(violation)].append(f"{rel}: {violation}"[:300])
    lines = []
    for name, cases in sorted(groups.items(), key=lambda item: -len(item[1])):
        lines += [f"{name} ({len(cases)} files)", *(f"    {case}" for case in cases[:5])]
    return "\n".join(lines)


def assert_only_known(found: list[tuple[str, Violation]], files: dict[str, bytes]) -> None:
    """Fail on a violation of no known class; end as an expected failure when only known classes were met."""
    new = [(rel, violation) for rel, violation in found if classify(violation, files.get(rel, b"")) is None]
    assert not new, report(new)
    xfail_if_known({name for rel, violation in found if (name := classify(violation, files.get(rel, b"")))})


def test_every_yaml_test_suite_case_as_a_record_file(base: Path) -> None:
    files = yaml_files(load("yaml-test-suite"), nested=False)
    assert_only_known(failures(base, files), files)


def test_every_yaml_test_suite_case_nested_in_a_record(base: Path) -> None:
    files = yaml_files(load("yaml-test-suite"), nested=True)
    assert_only_known(failures(base, files), files)


def test_every_commonmark_example_as_a_description(base: Path) -> None:
    """Each example is a well-formed record's description: the YAML around it must never be the problem."""
    files = commonmark_files(load("commonmark-spec"))
    assert_only_known(failures(base, files, refused=("yaml-syntax", "encoding", "not-a-record")), files)

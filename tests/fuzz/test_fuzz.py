"""Fuzzing `flopkb check` through its command line (issue 11): mutated records, hostile files, special files.

Every input must give: no traceback, an exit status in {0, 1, 2} that agrees with the report (2 only with an
`internal-error`, or when the command could not run), a `--format json` report that is UTF-8 JSON of the
shape docs/cli.md gives, and every diagnostic inside its file (harness.py says how lines are counted),
within the hang guard's time. Inputs are derandomised: CI sees the same ones on every run.
FLOPKB_FUZZ_EXAMPLES sets the examples per mutation family (default 120; the campaign script goes further).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import (
    REPOSITORY,
    TIMEOUT,
    Run,
    assert_clean,
    check_json,
    checked,
    codes,
    record_files,
    run_cli,
    run_process,
    violations,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from known import expect_only_known, xfail_if_known
from mutations import FAMILIES, Mutation, alias_bomb, deep_block, deep_flow, huge_files, mutated, top_level_type_change

EXAMPLES = int(os.environ.get("FLOPKB_FUZZ_EXAMPLES", "120"))
SPECIAL_TIMEOUT = 5.0
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking in CI: tests/fuzz/campaign.py minimises
    suppress_health_check=list(HealthCheck),
)
X = "records/flops/x.yaml"
RECORD = "id: flops/x\nkind: flop\ncategory: arithmetic-intensity\ndescription: d\n"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_mutated_records_keep_the_invariants(base: Path, family: str) -> None:
    originals = {rel: (base / rel).read_bytes() for rel in record_files(base)}
    hits: set[str] = set()

    @FUZZ_SETTINGS
    @given(rel=st.sampled_from(sorted(originals)), mutations=st.lists(FAMILIES[family], min_size=1, max_size=3))
    def check(rel: str, mutations: list[Mutation]) -> None:
        data = mutated(originals[rel], mutations)
        run, found = checked(base, {rel: data})
        hits.update(expect_only_known(found, data, run.stderr))

    check()
    xfail_if_known(hits)


def text_of(base: Path, rel: str) -> str:
    return (base / rel).read_text(encoding="utf-8")


SOURCE = "records/sources/medusa-2024.yaml"
FLOP = "records/flops/sd-batch-dilution-problem.yaml"
FACT = "records/facts/ridge-point.yaml"


@pytest.mark.parametrize(
    "rel, field, value",
    [
        pytest.param(FLOP, "kind", "{a: 1}", id="kind-mapping"),
        pytest.param(FLOP, "kind", "[flop]", id="kind-list"),
        pytest.param(FLOP, "id", "{a: 1}", id="id-mapping"),
        pytest.param(FLOP, "category", "[a, b]", id="category-list"),
        pytest.param(FLOP, "description", "{a: [1, {b: 2}]}", id="description-mapping"),
        pytest.param(FLOP, "hardware_parameters", "{a: 1}", id="rows-mapping"),
        pytest.param(FLOP, "scales_with", "[[1, 2], {factor: {a: 1}}]", id="scales-nested"),
        pytest.param(FACT, "formulas", "[{id: {a: 1}, expr: [1], unit: {u: 1}, inputs: [1, 2]}]", id="formula-nested"),
        pytest.param(SOURCE, "year", "9" * 5000, id="year-huge"),
        pytest.param(SOURCE, "year", "[2024]", id="year-list"),
        pytest.param(SOURCE, "authors", "{a: 1}", id="authors-mapping"),
    ],
)
def test_a_value_of_another_type(base: Path, rel: str, field: str, value: str) -> None:
    assert_clean(base, {rel: top_level_type_change(field, value, text_of(base, rel)).encode("utf-8")})


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("!!int a", id="int"),
        pytest.param("!!float abc", id="float"),
        pytest.param("!!bool 2024", id="bool"),
        pytest.param("!!str [1, 2]", id="str-on-list"),
        pytest.param("!!str {a: 1}", id="str-on-mapping"),
        pytest.param("!!timestamp never", id="timestamp"),
        pytest.param("!!binary ***", id="binary"),
        pytest.param("!custom x", id="local-tag"),
        pytest.param("!!python/object/apply:os.getcwd []", id="python"),
    ],
)
def test_an_explicit_tag_on_a_value(base: Path, value: str) -> None:
    assert_clean(base, {X: (RECORD + f"notes: {value}\n").encode("utf-8")})


@pytest.mark.parametrize("tag", ["!!int", "!!bool", "!!str"])
def test_an_explicit_tag_on_a_key(base: Path, tag: str) -> None:
    assert_clean(base, {X: (RECORD + f"{tag} notes: n\n").encode("utf-8")})


@pytest.mark.parametrize(
    "value",
    ["*a", "{<<: *a}", "[*a, *a]", "{<<: [*a, *b]}", "*undefined"],
    ids=["alias", "merge", "list", "merge-list", "undefined"],
)
def test_anchors_aliases_and_merge_keys(base: Path, value: str) -> None:
    text = RECORD + "tags: &a [x]\nworkarounds: &b [y]\n" + f"notes: {value}\n"
    assert_clean(base, {X: text.encode("utf-8")})


HOSTILE = {
    "alias-bomb": alias_bomb(),
    "flow-list-100000": deep_flow(100_000),
    "flow-map-100000": deep_flow(100_000, "{a: ", "}"),
    "flow-mixed-1000": deep_flow(500, "[{a: ", "}]"),
    "block-map-1000": deep_block(1000),
    "block-seq-1000": deep_block(1000, sequence=True),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_generated_files(base: Path, name: str) -> None:
    assert_clean(base, {X: HOSTILE[name].encode("utf-8")})


@pytest.mark.parametrize("name", sorted(huge_files()))
def test_files_over_one_mebibyte(base: Path, name: str) -> None:
    assert_clean(base, {X: huge_files()[name]})


@pytest.fixture
def special(base: Path) -> Iterator[Path]:
    """records/flops/x.yaml free for a special file, removed afterwards whatever it became."""
    target = base / X
    yield target
    if target.is_dir() and not target.is_symlink():
        target.chmod(0o755)
        target.rmdir()
    elif target.exists() or target.is_symlink():
        target.unlink()


def assert_clean_run(base: Path, timeout: float = SPECIAL_TIMEOUT) -> None:
    run = check_json(base, timeout)
    found = violations(run, base)
    assert not found, "\n".join(map(str, found)) + f"\nstderr: {run.stderr[-2000:].decode('utf-8', 'replace')}"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda path: os.mkfifo(path), id="fifo"),
        pytest.param(lambda path: path.symlink_to("/dev/zero"), id="symlink-dev-zero"),
        pytest.param(lambda path: path.symlink_to("/dev/null"), id="symlink-dev-null"),
        pytest.param(lambda path: path.symlink_to("nowhere.yaml"), id="dangling-symlink"),
        pytest.param(lambda path: path.symlink_to(path.name), id="symlink-loop"),
        pytest.param(lambda path: path.mkdir(), id="directory-named-yaml"),
    ],
)
def test_special_files(base: Path, special: Path, make: object) -> None:
    make(special)  # type: ignore[operator]
    assert_clean_run(base)


WITHOUT_READ_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def check_unreadable(base: Path, rel: str) -> Run:
    """A check of `base` with `rel` made unreadable (as root: run without the capability to read anyway)."""
    prefix = WITHOUT_READ_OVERRIDE if os.geteuid() == 0 else []
    if prefix and shutil.which("setpriv") is None:
        pytest.skip("root reads unreadable files; setpriv (util-linux) is needed to check without that")
    mode = (base / rel).stat().st_mode
    (base / rel).chmod(0)
    try:
        return run_process(["check", "--root", str(base), "--format", "json", "--no-cache"], SPECIAL_TIMEOUT, prefix)
    finally:
        (base / rel).chmod(mode)


@pytest.mark.parametrize("rel", ["records/sources", FACT])
def test_an_unreadable_folder_or_file_keeps_the_invariants(base: Path, rel: str) -> None:
    run = check_unreadable(base, rel)
    assert not violations(run, base), "\n".join(map(str, violations(run, base)))


def test_an_unreadable_folder_is_reported(base: Path) -> None:
    run = check_unreadable(base, "records/sources")
    assert run.exit_code == 2 or b"records/sources" in run.stdout  # none of its records was read: only the folder


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(b"\xff\xfe.yaml", id="latin1-bytes"),
        pytest.param(b"caf\xe9.yaml", id="latin1-e-acute"),
        pytest.param(b"new\nline.yaml", id="newline"),
        pytest.param(b"a:1:2.yaml", id="colons"),
    ],
)
def test_file_names(base: Path, name: bytes) -> None:
    path = os.path.join(os.fsencode(base / "records/flops"), name)
    with open(path, "wb") as handle:
        handle.write(RECORD.encode("utf-8"))
    try:
        assert_clean_run(base)
    finally:
        os.unlink(path)


def positions(base: Path, files: dict[str, bytes]) -> set[tuple[str, str, int, int]]:
    """(code, path, line, column) of every diagnostic of a clean run with `files` swapped in."""
    return set(codes(assert_clean(base, files)))


def test_a_nul_is_reported_where_it_stands(base: Path) -> None:
    found = positions(base, {X: (RECORD + "notes: before\x00after\n").encode("utf-8")})
    assert {(line, column) for _, path, line, column in found if path == X} == {(5, 14)}


def test_a_syntax_error_at_the_end_stays_on_the_last_line(base: Path) -> None:
    assert_clean(base, {X: (RECORD + "notes: [unclosed\n").encode("utf-8")})


def test_a_path_that_does_not_exist_is_a_usage_error(base: Path) -> None:
    run = run_cli(["check", "--root", str(base), "--format", "json", str(base / "records/nope.yaml")], TIMEOUT)
    assert run.exit_code == 2


def test_an_unknown_field_does_not_hide_a_wrong_claim(base: Path) -> None:
    wrong = text_of(base, FACT).replace("value: 295.34", "value: 999", 1)
    assert "claim-mismatch" in {code for code, *_ in positions(base, {FACT: wrong.encode("utf-8")})}
    found = positions(base, {FACT: (wrong + "zz_unknown: 1\n").encode("utf-8")})
    assert {"claim-mismatch", "unknown-field"} <= {code for code, *_ in found}


NEUTRAL_PREFIXES = [
    pytest.param("# a comment\n", 1, id="comment"),
    pytest.param("\ufeff", 0, id="bom"),
    pytest.param("# a\u2028b\n", 1, id="u2028"),
    pytest.param("# a\u2029b\n", 1, id="u2029"),
    pytest.param("# a\x85b\n", 1, id="u0085"),
    pytest.param("#\r# b\n", 1, id="lone-cr"),  # two comments to YAML, one line to git
    pytest.param("# " + "[" * 65 + "\n", 1, id="brackets"),
]


@pytest.fixture(scope="module")
def with_unknown_field(base: Path) -> dict[str, set[tuple[str, str, int, int]]]:
    """Per record: the base's diagnostics in that file once `zz_unknown: 1` is appended to it."""
    return {rel: in_file(positions(base, {rel: appended(base, rel)}), rel) for rel in record_files(base)}


def appended(base: Path, rel: str) -> bytes:
    return (base / rel).read_bytes() + b"zz_unknown: 1\n"


def in_file(found: set[tuple[str, str, int, int]], rel: str) -> set[tuple[str, str, int, int]]:
    return {item for item in found if item[1] == rel}


@pytest.mark.parametrize(
    "rel", [pytest.param(rel, id=rel.removeprefix("records/")) for rel in record_files(REPOSITORY)]
)
def test_an_unknown_field_adds_exactly_one_diagnostic(base: Path, rel: str, with_unknown_field: dict) -> None:
    before = in_file(positions(base, {}), rel)
    lines = (base / rel).read_bytes().count(b"\n")
    assert with_unknown_field[rel] == before | {("unknown-field", rel, lines + 1, 1)}


@pytest.mark.parametrize("prefix, shift", NEUTRAL_PREFIXES)
def test_a_neutral_first_line_moves_every_diagnostic_down(
    base: Path, with_unknown_field: dict, prefix: str, shift: int
) -> None:
    for rel, expected in with_unknown_field.items():
        found = in_file(positions(base, {rel: prefix.encode("utf-8") + appended(base, rel)}), rel)
        assert found == {(code, path, line + shift, column) for code, path, line, column in expected}, rel


def test_crlf_line_ends_keep_every_position(base: Path, with_unknown_field: dict) -> None:
    for rel, expected in with_unknown_field.items():
        crlf = appended(base, rel).replace(b"\n", b"\r\n")
        assert in_file(positions(base, {rel: crlf}), rel) == expected, rel

"""`flopkb diff` as a new author meets it: a small base of their own records, and commits that each change a thing.

- `added`: an accelerator, its datasheet and a flop that computes on it and on an existing accelerator are added,
  and that existing accelerator's bandwidth is edited in the same commit;
- `layers`: an input of a fact's formula is edited, so a claim that held fails;
- `bandwidth`: the bandwidth of the added accelerator is edited, so a claim that already failed fails by more;
- `lender`: the formula another record borrows by `ref` is edited, and the flop's prose;
- `both`: both accelerators' bandwidths and the datasheet's measurement are edited.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import init, replace_in, tag
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.config import load_config
from flopkb.load.source import parse
from flopkb.report.diagnostics import Diagnostic
from flopkb.review.diagnostics import pair_diagnostics
from flopkb.review.markdown import cell
from flopkb.review.model import Report
from flopkb.review.run import diff_report
from flopkb.review.text import render_text
from flopkb.review.wording import cause_line
from repo import REPO

X1, X2 = "accelerators/acme-x1", "accelerators/acme-x2"
FLOP = "flops/decode"
KV = "facts/kv-cache-bytes"
BORROW = "facts/ridge-again"
SHEET = "sources/acme-x1-datasheet"

_ACCELERATOR = """id: accelerators/{name}
kind: accelerator
title: Acme {name}
vendor: Acme
description: |
  An accelerator of the tests.
specs:
  memory_bandwidth:
    value: "{bandwidth}"
    basis: vendor-spec
    sources: [https://example.org/{name}]
  peak_bf16_dense:
    value: "1000 TFLOP/s"
    basis: vendor-spec
    sources: [https://example.org/{name}]
"""

_RIDGE = """id: facts/ridge
kind: fact
title: Ridge point of acme-x2
statement: |
  Peak compute over memory bandwidth; see [[facts/kv-cache-bytes]].
formulas:
  - id: ridge
    title: Ridge point
    expr: hw.peak_bf16_dense / hw.memory_bandwidth
    unit: FLOP/byte
    hardware: [accelerators/acme-x2]
"""

_KV = """id: facts/kv-cache-bytes
kind: fact
title: KV cache bytes per token
statement: |
  Keys and values of every layer; see [[facts/ridge]].
formulas:
  - id: kv-bytes
    title: KV bytes per token
    expr: 2 * layers * heads * head_dim * bytes_per_elem
    unit: byte
    inputs:
      layers: 32
      heads: 8
      head_dim: 128
      bytes_per_elem: ["1 byte", "2 byte"]
    expect:
      - where: {bytes_per_elem: "2 byte"}
        value: 131072
"""

_BORROW = """id: facts/ridge-again
kind: fact
title: The ridge point, borrowed
statement: |
  As [[facts/ridge]] computes it.
formulas:
  - id: ridge-again
    title: Ridge point, borrowed
    ref: facts/ridge#ridge
"""

_DATASHEET = """id: sources/acme-x1-datasheet
kind: source
title: Acme X1 datasheet
url: https://example.org/acme-x1
authors: [Acme]
year: 2025
measurements:
  - id: decode
    quantity: decode steps per second
    value: "250 1/s"
    basis: measured
    where: Table 1
"""

_FLOP = """id: flops/decode
kind: flop
title: Decode streams the weights once a step
category: compute-throughput
description: |
  Each decode step reads every weight once, on [[accelerators/acme-x1]].
formulas:
  - id: decode-time
    title: Time to stream the weights once
    expr: weight_bytes / hw.memory_bandwidth
    unit: ms
    inputs:
      weight_bytes: "16 GB"
    hardware: [accelerators/acme-x1, accelerators/acme-x2]
    expect:
      - hardware: accelerators/acme-x1
        value: 5
      - hardware: accelerators/acme-x2
        value: 6.4
  - id: steps-per-s
    title: Steps per second
    expr: hw.memory_bandwidth / weight_bytes
    unit: 1/s
    inputs:
      weight_bytes: "16 GB"
    hardware: [accelerators/acme-x1]
    expect:
      - hardware: accelerators/acme-x1
        measured: sources/acme-x1-datasheet#decode
"""


def _write(root: Path, record_id: str, text: str) -> None:
    path = root / "records" / f"{record_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = init(tmp_path_factory.mktemp("new-author") / "kb")
    shutil.copytree(REPO / "schema", root / "schema")
    _write(root, X2, _ACCELERATOR.format(name="acme-x2", bandwidth="2.0 TB/s"))
    _write(root, "facts/ridge", _RIDGE)
    _write(root, KV, _KV)
    _write(root, BORROW, _BORROW)
    tag(root, "base")
    _write(root, X1, _ACCELERATOR.format(name="acme-x1", bandwidth="4.0 TB/s"))
    _write(root, SHEET, _DATASHEET)
    _write(root, FLOP, _FLOP)
    replace_in(root / f"records/{X2}.yaml", 'value: "2.0 TB/s"', 'value: "2.5 TB/s"')
    tag(root, "added")
    replace_in(root / f"records/{KV}.yaml", "layers: 32", "layers: 33")
    tag(root, "layers")
    replace_in(root / f"records/{X1}.yaml", 'value: "4.0 TB/s"', 'value: "4.1 TB/s"')
    tag(root, "bandwidth")
    replace_in(root / "records/facts/ridge.yaml", "expr: hw.peak_bf16_dense", "expr: 2 * hw.peak_bf16_dense")
    replace_in(root / f"records/{FLOP}.yaml", "reads every weight once", "reads each weight once")
    tag(root, "lender")
    replace_in(root / f"records/{X1}.yaml", 'value: "4.1 TB/s"', 'value: "4.2 TB/s"')
    replace_in(root / f"records/{X2}.yaml", 'value: "2.5 TB/s"', 'value: "3.2 TB/s"')
    replace_in(root / f"records/{SHEET}.yaml", 'value: "250 1/s"', 'value: "200 1/s"')
    tag(root, "both")
    return root


ADDED, LAYERS, BANDWIDTH, LENDER = "base..added", "added..layers", "layers..bandwidth", "bandwidth..lender"
BOTH = "lender..both"


def diff(root: Path, revisions: str) -> Report:
    return diff_report(load_config(root), revisions, {})


def flopkb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flopkb", *args], cwd=root, capture_output=True, text=True, check=False
    )


# Values are shown as `check` shows them.


def test_a_value_equal_to_its_stated_value_reads_equal(repo: Path) -> None:
    lines = render_text(diff(repo, LAYERS)).splitlines()
    assert f"  ✗ {KV}#kv-bytes expect[0] (bytes_per_elem=2 byte): ✓ 131072 → ✗ 135168 (stated 131072)" in [
        line.split("  records/")[0] for line in lines
    ]
    assert f"    {KV}#kv-bytes at bytes_per_elem=1 byte: 65536 byte → 67584 byte +3.12%" in lines


# A diagnostic whose message changed is changed, neither new nor fixed.

DECODE_FILE = f"records/{FLOP}.yaml"
WAS = "states 5 ms, computes 4 ms (off by 25%, tolerance 1%)"
NOW = "states 5 ms, computes 3.90244 ms (off by 28%, tolerance 1%)"


def _claim_message(message: str, ending: str) -> bool:
    return message.startswith("expect[0] ") and " accelerators/acme-x1 " in message and message.endswith(ending)


def test_a_claim_that_fails_by_more_is_a_changed_diagnostic(repo: Path) -> None:
    report = diff(repo, BANDWIDTH)
    assert not report.new_diagnostics and not report.fixed_diagnostics
    [changed] = report.changed_diagnostics
    assert (changed.after.path, changed.after.line, changed.after.column) == (DECODE_FILE, 17, 16)
    assert changed.after.code == "claim-mismatch"
    assert _claim_message(changed.before.message, WAS) and _claim_message(changed.after.message, NOW)
    assert report.failures(("new-error",)) == []
    lines = render_text(report).splitlines()
    assert "1 diagnostic changed" in lines[1] and "new diagnostic" not in lines[1] and "fixed" not in lines[1]
    at = lines.index("Diagnostics: 0 new, 0 fixed, 1 changed")
    assert lines[at + 1 : at + 3] == [
        f"  ~ {DECODE_FILE}:17:16: error claim-mismatch: {changed.after.message}",
        f"    was: {changed.before.message}",
    ]


def test_fail_on_new_error_passes_when_an_old_error_changed(repo: Path) -> None:
    done = flopkb(repo, "diff", BANDWIDTH, "--fail-on", "new-error", "--format", "json")
    assert done.returncode == 0, done.stdout
    data = json.loads(done.stdout)
    assert data["diagnostics"]["new"] == [] and data["diagnostics"]["fixed"] == []
    [changed] = data["diagnostics"]["changed"]
    assert _claim_message(changed["before"]["message"], WAS) and _claim_message(changed["after"].pop("message"), NOW)
    assert changed["after"] == {
        "path": DECODE_FILE,
        "line": 17,
        "column": 16,
        "severity": "error",
        "code": "claim-mismatch",
    }
    assert (data["summary"]["new_errors"], data["summary"]["changed_diagnostics"]) == (0, 1)


def test_github_and_markdown_show_a_changed_diagnostic(repo: Path) -> None:
    github = flopkb(repo, "diff", BANDWIDTH, "--format", "github").stdout.splitlines()
    assert f"::error file={DECODE_FILE},line=17,col=16,title=claim-mismatch::changed: " in "\n".join(github)
    assert any(f"{NOW.replace('%', '%25')} (was: expect[0] " in line for line in github)
    markdown = flopkb(repo, "diff", BANDWIDTH, "--format", "markdown").stdout
    assert "<summary>Diagnostics: 0 new, 0 fixed, 1 changed</summary>" in markdown
    assert f"- {cell(f'~ {DECODE_FILE}:17:16: error claim-mismatch: expect[0]')} " in markdown  # `~` as `&#126;`
    assert f"{cell(NOW)}\n- {cell('  was: expect[0]')} " in markdown


def test_a_new_error_is_counted_in_the_singular(repo: Path) -> None:
    summary = render_text(diff(repo, ADDED)).splitlines()[1]
    assert "2 new diagnostics (1 error)" in summary, summary


def test_a_diagnostic_points_at_the_node_it_is_about() -> None:
    source, problems = parse("id: flops/x\nformulas:\n  - id: f\n    expect:\n      - value: 5\n", "x.yaml")
    assert source is not None and not problems
    assert source.path_at(5, 16) == ("formulas", 0, "expect", 0, "value")
    assert source.path_at(5, 9) == ("formulas", 0, "expect", 0, "value"), "a key: the path of its value"
    assert source.path_at(5, 10) is None and source.path_at(9, 1) is None


_CODES = ("claim-mismatch", "measurement-disagrees", "dangling-link")


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(_CODES), st.integers(1, 40), st.integers(0, 999), st.integers(0, 999)),
        max_size=8,
        unique_by=lambda row: (row[0], row[1]),
    ),
    shift=st.integers(0, 30),
    extra=st.integers(41, 60),
)
def test_moved_lines_and_moved_numbers_are_never_new(
    rows: list[tuple[str, int, int, int]], shift: int, extra: int
) -> None:
    """The same diagnostics with lines moved and numbers changed: all paired, none new or fixed; a diagnostic about a
    node no base diagnostic is about is new."""

    def message(index: int, stated: int, computed: int) -> str:
        return f"expect[{index}] on accelerators/acme-x1 states {stated} ms, computes {computed} ms (off by 2%)"

    base = [Diagnostic("r.yaml", line, 3, code, message(line, a, b)) for code, line, a, b in rows]
    head = [Diagnostic("r.yaml", line + shift, 3, code, message(line, a, b + 1)) for code, line, a, b in rows]
    head.append(Diagnostic("r.yaml", extra + shift, 3, "claim-mismatch", message(extra, 1, 2)))
    pairs, new, fixed = pair_diagnostics(
        base, head, str, lambda d: ("formulas", d.line), lambda d: ("formulas", d.line - shift)
    )
    assert [(was.line + shift, now.line) for was, now in pairs] == [(d.line, d.line) for d in head[:-1]]
    assert new == head[-1:] and fixed == []


# A value's causes are the edits it reads, and only those.


def test_the_values_of_an_added_record_have_that_record_as_their_only_cause(repo: Path) -> None:
    report = diff(repo, ADDED)
    spec = f"spec:{X2}:memory_bandwidth"
    causes = {value.record: set() for value in report.values}
    for value in report.values:
        causes[value.record].add(value.causes)
    assert causes == {FLOP: {(f"record:{FLOP}",)}, "facts/ridge": {(spec,)}, BORROW: {(spec,)}}
    assert [(cause.id, cause.values, cause.records, cause.not_edited) for cause in report.causes] == [
        (f"record:{FLOP}", 3, (FLOP,), 0),
        (spec, 2, ("facts/ridge", BORROW), 2),
    ], "the edit of acme-x2 did not make the values of the new flop, nor did the added accelerator or datasheet"
    lines = render_text(report).splitlines()
    assert "5 values changed in 3 records (2 records not edited themselves)" in lines[1]
    assert f"  {FLOP} added → 3 values in 1 record" in lines
    assert sum(line.startswith(f"    {FLOP}#") for line in lines) == 3, "each value under one cause"
    assert any(line.endswith("→ 2 values in 2 records not edited themselves") for line in lines)


def test_a_borrowed_formula_s_values_are_caused_by_its_lender_and_not_by_prose(repo: Path) -> None:
    report = diff(repo, LENDER)
    assert report.records.edited == ("facts/ridge", FLOP)
    [cause] = report.causes
    assert (cause.id, cause.records, cause.not_edited) == ("record:facts/ridge", ("facts/ridge", BORROW), 1)
    assert cause_line(cause).endswith("→ 2 values in 2 records (1 record not edited itself)")


def test_a_claim_is_failing_because_of_its_own_accelerator_alone(repo: Path) -> None:
    report = diff(repo, BOTH)
    [claim] = report.claims
    assert (claim.record, claim.hardware, claim.before, claim.after) == (FLOP, X2, "ok", "mismatch")
    assert claim.because == (X2,), "the edit of acme-x1 is not read by a claim on acme-x2"
    [agreement] = report.agreement
    assert (agreement.hardware, agreement.before, agreement.after) == (X1, "ok", "disagrees")
    assert agreement.because == (X1, SHEET), "the measurement it names changed too"
    spec = {value.hardware: value.causes for value in report.values if value.formula == "decode-time"}
    assert spec == {X1: (f"spec:{X1}:memory_bandwidth",), X2: (f"spec:{X2}:memory_bandwidth",)}

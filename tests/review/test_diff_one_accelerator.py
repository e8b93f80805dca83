"""`flopkb diff` on a base of one accelerator and a fact whose claim computes on it, as a reviewer reads it.

A claim's verdict and a value change for the same edits, the edits they read (`flopkb.review.causes`); the pull
request comment shows the spec edit's parameter as code. The commits after the base:

- `bandwidth`: the accelerator's bandwidth is edited, so the fact's claim fails;
- `both`: the bandwidth is edited back and the fact's statement (its prose) is reworded, so the claim holds again;
- `prose`: the fact's statement is reworded again, alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import init, replace_in, tag
from rendered import GFM, Seen

from flopkb.config import load_config
from flopkb.review.markdown import render_markdown
from flopkb.review.model import Report
from flopkb.review.run import diff_report
from flopkb.review.text import render_text
from kbfixture import accelerator, write_kb

HW, FACT = "hw/a1", "facts/read"
SPEC = f"spec:{HW}:memory_bandwidth"

_FACT = """\
id: facts/read
kind: fact
statement: Reading 2 GB at 2 TB/s takes a millisecond.
formulas:
  - id: read-time
    expr: size / hw.memory_bandwidth
    unit: ms
    inputs: {size: "2 GB"}
    hardware: [hw/a1]
    expect:
      - hardware: hw/a1
        value: 1
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = init(tmp_path_factory.mktemp("claim-causes") / "kb")
    write_kb(root, {f"records/{HW}.yaml": accelerator(HW, memory_bandwidth="2 TB/s"), f"records/{FACT}.yaml": _FACT})
    tag(root, "base")
    replace_in(root / f"records/{HW}.yaml", "2 TB/s", "4 TB/s")
    tag(root, "bandwidth")
    replace_in(root / f"records/{HW}.yaml", "4 TB/s", "2 TB/s")
    replace_in(root / f"records/{FACT}.yaml", "takes a millisecond", "takes one millisecond")
    tag(root, "both")
    replace_in(root / f"records/{FACT}.yaml", "takes one millisecond", "takes a single millisecond")
    tag(root, "prose")
    return root


def diff(root: Path, revisions: str) -> Report:
    return diff_report(load_config(root), revisions, {})


def test_an_accelerator_edit_that_fails_a_claim_in_another_record_is_named_as_its_cause(repo: Path) -> None:
    report = diff(repo, "base..bandwidth")
    [claim] = report.claims
    assert (claim.record, claim.before, claim.after, claim.because) == (FACT, "ok", "mismatch", (HW,))
    [value] = report.values
    assert value.causes == (SPEC,)
    [cause] = report.to_json()["causes"]
    assert cause["spec"] == {
        "accelerator": HW,
        "parameter": "memory_bandwidth",
        "before": "2 TB/s (derived)",
        "after": "4 TB/s (derived)",
    }
    lines = render_text(report).splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith(f"  ✗ {FACT}#read-time expect[0]"))
    assert lines[at + 1] == f"    because records/{HW}.yaml changed"


def test_a_prose_edit_of_the_claim_s_own_record_is_not_a_cause_beside_the_accelerator_edit(repo: Path) -> None:
    report = diff(repo, "bandwidth..both")
    assert report.records.edited == (FACT, HW)
    [claim] = report.claims
    assert (claim.before, claim.after, claim.because) == ("mismatch", "ok", (HW,)), "its statement is not read"
    [value] = report.values
    assert value.causes == (SPEC,), "a value reads what the claim reads"
    assert [cause.id for cause in report.causes] == [SPEC]
    assert f"    because records/{HW}.yaml changed" in render_text(report).splitlines()


def test_a_prose_edit_alone_changes_and_causes_nothing_computed(repo: Path) -> None:
    report = diff(repo, "both..prose")
    assert report.records.edited == (FACT,)
    assert (report.claims, report.values, report.causes, report.evaluated) == ((), (), (), 0)


def test_the_parameter_of_a_spec_edit_reads_as_code_in_the_pull_request_comment(repo: Path) -> None:
    seen = Seen(GFM.render(render_markdown(diff(repo, "base..bandwidth"))))
    [delta] = [row for row in seen.rows if row[0] == "Δ"]
    assert delta[1] == (
        "memory_bandwidth of hw/a1: 2 TB/s (derived) → 4 TB/s (derived) → 1 value in 1 record not edited itself"
    )
    assert seen.code == ["memory_bandwidth"] and "`" not in delta[1]

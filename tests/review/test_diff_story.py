"""`flopkb diff` on a real git repository of the project's own records, through a story of commits: a spec edit,
a rename by `flopkb mv`, an added record, a broken link, a reworded paragraph; each compared with its parent."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import commit, project_base, replace_in

from flopkb.config import load_config
from flopkb.review.model import Report
from flopkb.review.run import diff_report

H200 = "records/accelerators/nvidia-h200-sxm.yaml"
H200_ID = "accelerators/nvidia-h200-sxm"


def flopkb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flopkb", *args], cwd=root, capture_output=True, text=True, check=False
    )


def diff(root: Path, revisions: str | None = "HEAD~1..HEAD") -> Report:
    return diff_report(load_config(root), revisions, {})


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project_base(tmp_path_factory.mktemp("story") / "kb")
    replace_in(root / H200, 'value: "4.8 TB/s"', 'value: "4.9 TB/s"')
    commit(root, "spec edit")
    assert flopkb(root, "mv", "engines/llama-cpp", "engines/llama-cpp-server").returncode == 0
    commit(root, "rename")
    (root / "records/facts/kv-cache-per-token.yaml").write_text(
        "id: facts/kv-cache-per-token\nkind: fact\ntitle: KV cache per token\n"
        "statement: Each token keeps keys and values per layer; see [[facts/ridge-point]].\n",
        encoding="utf-8",
    )
    commit(root, "added record")
    replace_in(root / "records/facts/kv-cache-per-token.yaml", "[[facts/ridge-point]]", "[[facts/no-such-fact]]")
    commit(root, "broken link")
    replace_in(root / "records/facts/ridge-point.yaml", "take the same time", "take equal time")
    commit(root, "reworded paragraph")
    return root


def test_a_spec_edit_reports_failing_claims_and_its_blast_radius(story: Path) -> None:
    report = diff(story, "HEAD~5..HEAD~4")
    assert report.records.edited == (H200_ID,)
    assert {(c.record, c.before, c.after) for c in report.claims} >= {("facts/ridge-point", "ok", "mismatch")}
    assert all(c.because == (H200_ID,) for c in report.claims), "every claim failed because of the accelerator"
    [cause] = report.causes
    assert cause.id == f"spec:{H200_ID}:memory_bandwidth"
    assert cause.what == f"`memory_bandwidth` of {H200_ID}: 4.8 TB/s (vendor-spec) → 4.9 TB/s (vendor-spec)"
    assert cause.values == len(report.values) and cause.not_edited == len(cause.records) > 1
    assert all(value.hardware == H200_ID for value in report.values)
    ridge = [v for v in report.values if (v.record, v.formula) == ("facts/ridge-point", "ridge-point")]
    assert [(v.unit, round(v.relative or 0, 4)) for v in ridge] == [("FLOP/byte", round(4.8 / 4.9 - 1, 4))]
    assert {"records/" + page for page in report.pages} >= {f"records/{H200_ID}", "records/facts/ridge-point"}


def test_a_spec_edit_through_the_command_line(story: Path) -> None:
    done = flopkb(story, "diff", "HEAD~5..HEAD~4")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("flopkb diff: HEAD~5@") and " → HEAD~4@" in lines[0]
    radius = re.search(r"values changed in \d+ records not edited themselves", lines[1])
    assert "claims changed status" in lines[1] and radius, "only the accelerator was edited"
    assert any(
        line.strip().startswith(f"`memory_bandwidth` of {H200_ID}: 4.8 TB/s (vendor-spec) → 4.9 TB/s (vendor-spec) →")
        for line in lines
    )
    failing = flopkb(story, "diff", "HEAD~5..HEAD~4", "--fail-on", "claim-regression,new-error")
    assert failing.returncode == 1 and failing.stdout == done.stdout
    assert flopkb(story, "diff", "HEAD~5..HEAD~4", "--fail-on", "evidence-regression").returncode == 0


def test_github_annotations_land_on_lines_that_did_not_change(story: Path) -> None:
    done = flopkb(story, "diff", "HEAD~5..HEAD~4", "--format", "github")
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    claim = next(line for line in annotations if "file=records/facts/ridge-point.yaml" in line and "expect[1]" in line)
    assert claim.startswith("::warning ") and f"because {H200}%2C" not in claim and f"because {H200} changed" in claim
    text = (story / "records/facts/ridge-point.yaml").read_text(encoding="utf-8").splitlines()
    line = int(claim.split("line=")[1].split(",")[0])
    assert text[line - 1].strip() == "- hardware: nvidia-h200-sxm", (
        "on the claim's own row, which the change left as is"
    )
    assert any(f"file={H200},line=" in line and "memory_bandwidth" in line for line in annotations)


def test_a_rename_is_recognised_by_the_alias_mv_leaves(story: Path) -> None:
    report = diff(story, "HEAD~4..HEAD~3")
    assert [(r.old, r.new) for r in report.records.renamed] == [("engines/llama-cpp", "engines/llama-cpp-server")]
    assert not report.records.added and not report.records.removed
    assert not report.values and not report.claims and not report.new_diagnostics


def test_an_added_record_and_its_links(story: Path) -> None:
    report = diff(story, "HEAD~3..HEAD~2")
    assert report.records.added == ("facts/kv-cache-per-token",)
    assert ("facts/kv-cache-per-token", "facts/ridge-point") in report.links.added
    assert "facts/kv-cache-per-token" in report.pages and report.evaluated == 0


def test_a_broken_link_is_a_new_error(story: Path) -> None:
    report = diff(story, "HEAD~2..HEAD~1")
    new = [(d.code, d.path, d.severity) for d in report.new_diagnostics]
    assert ("dangling-link", "records/facts/kv-cache-per-token.yaml", "error") in new
    assert report.links.removed == (("facts/kv-cache-per-token", "facts/ridge-point"),)
    assert report.failures(("new-error", "claim-regression")) == ["new-error"]


def test_a_reworded_paragraph_evaluates_nothing(story: Path) -> None:
    report = diff(story, "HEAD~1..HEAD")
    assert report.evaluated == 0
    assert report.records.edited == ("facts/ridge-point",)
    assert not report.values and not report.claims and not report.new_diagnostics
    assert "facts/ridge-point" in report.pages


def test_json_is_the_documented_schema(story: Path) -> None:
    done = flopkb(story, "diff", "HEAD~5..HEAD~4", "--format", "json")
    data = json.loads(done.stdout)
    assert data["schema"] == 1
    assert list(data) == [
        "schema",
        "base",
        "head",
        "named_base",
        "fell_back",
        "claims",
        "agreement",
        "causes",
        "values",
        "evidence",
        "records",
        "links",
        "pages",
        "files",
        "places",
        "evaluated",
        "diagnostics",
        "summary",
    ]
    assert (
        data["head"]["sha"]
        == subprocess.run(
            ["git", "-C", str(story), "rev-parse", "HEAD~4"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    assert data["summary"]["claim_regressions"] == len(data["claims"])


def test_the_whole_story_against_the_work_tree(story: Path) -> None:
    """`flopkb diff BASE` compares BASE with the work tree: an uncommitted edit counts."""
    replace_in(story / "records/facts/ridge-point.yaml", "take equal time", "take the same time")
    try:
        report = diff(story, "HEAD")
        assert report.head.sha is None and report.records.edited == ("facts/ridge-point",)
    finally:
        replace_in(story / "records/facts/ridge-point.yaml", "take the same time", "take equal time")

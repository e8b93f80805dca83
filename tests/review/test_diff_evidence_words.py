"""What `flopkb diff` and the site's Recent changes page say of a record's evidence and of what changed: never
"verified" (no measurement verifies a record that merely has no unverified figures), a source's measurement as
measured (with its old value), and new, fixed, added and removed lines told apart on the web page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from gitrepo import commit, project_base, replace_in

from site_fixtures import build_base

H100 = "records/accelerators/nvidia-h100-sxm.yaml"
SGLANG = "records/engines/sglang.yaml"
EAGLE = "records/sources/eagle3-2025.yaml"
ROOFLINE = "flops/sd-speedup-vs-batch-roofline"
BANDWIDTH = '  memory_bandwidth:\n    value: "3.35 TB/s"\n    basis: '
LINKED = "prefix cache (see [[facts/ridge-point]]), continuous batching"
VERIFIED = re.compile(r"(?<!un)verified", re.IGNORECASE)
"""The word, but for `unverified` (a basis, and the `unverified-basis` code)."""


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project_base(tmp_path_factory.mktemp("evidence") / "kb")
    replace_in(root / H100, BANDWIDTH + "vendor-spec", BANDWIDTH + "unverified")
    replace_in(root / SGLANG, "prefix cache, continuous batching", LINKED)
    commit(root, "H100 bandwidth unverified; SGLang links the ridge point")
    replace_in(root / H100, BANDWIDTH + "unverified", BANDWIDTH + "vendor-spec")
    replace_in(root / SGLANG, LINKED, "prefix cache, continuous batching")
    replace_in(root / EAGLE, "    value: 4.40\n", "    value: 2.40\n")
    commit(root, "H100 bandwidth sourced again; the link removed; EAGLE-3's speedup re-measured")
    return root


def flopkb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flopkb", *args], cwd=root, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("form", ["text", "markdown", "json", "github"])
def test_no_format_calls_a_record_verified_that_disagrees_with_its_measurements(history: Path, form: str) -> None:
    done = flopkb(history, "diff", "HEAD~2..HEAD~1", "--format", form, "--fail-on", "evidence-regression")
    assert done.returncode == 1, done.stderr
    assert not VERIFIED.findall(done.stdout), "a record with no unverified figures is not verified by anything"
    if form == "json":
        moves = {row["record"]: (row["before"], row["after"]) for row in json.loads(done.stdout)["evidence"]}
        assert moves[ROOFLINE] == ("no-debt", "inherited-debt")
        assert moves["accelerators/nvidia-h100-sxm"] == ("no-debt", "own-debt")
    else:
        assert f"{ROOFLINE}: no-debt → inherited-debt" in done.stdout


def test_a_source_remeasured_is_told_as_measured_with_its_old_value(history: Path) -> None:
    text = flopkb(history, "diff", "HEAD~1..HEAD", "--fail-on", "new-disagreement")
    assert text.returncode == 1, text.stderr
    claim = "facts/fct-spec-decoding-cost-model-break-even"
    row = (
        f"  ≠ {claim}#speedup-at-fixed-step-cost expect[0] (tau=6.13, step_ratio=1.39318) vs "
        f"sources/eagle3-2025#table1-l31-8b-mtbench-speedup: ✓ 4.4 → ≠ 4.4 (measured 4.4 → 2.4)  "
        f"records/{claim}.yaml:191"
    )
    assert row in text.stdout.splitlines(), "the model's value unchanged; the measurement's, before and after"
    markdown = flopkb(history, "diff", "HEAD~1..HEAD", "--format", "markdown").stdout
    assert "| ✓ 4.4 → ≠ 4.4 (measured 4.4 → 2.4) |" in markdown


class _Items(HTMLParser):
    """The text of every list item of the page's content, and whether one holds a list with no text before it."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[str] = []
        self.open: list[int] = []
        self.empty_nests = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "li":
            self.open.append(len(self.items))
            self.items.append("")
        elif tag in ("ul", "ol") and self.open and not self.items[self.open[-1]].strip():
            self.empty_nests += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "li" and self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open:
            self.items[self.open[-1]] += data


def test_recent_changes_tells_new_from_fixed_and_added_from_removed(history: Path) -> None:
    built = build_base(history)
    assert built.outcome.kb.evidence is not None
    assert built.outcome.kb.evidence.standing(ROOFLINE) == "disagrees", "its badge: disagrees with a measurement"
    html = built.html("changes.html")
    assert not VERIFIED.findall(html), "nor is it verified on the page of what changed"
    page = _Items()
    page.feed(html)
    assert page.empty_nests == 0, "a leading + or - read as a nested list's marker"
    told = [item for item in page.items if item.startswith(("new: ", "fixed: ", "added: ", "removed: "))]
    unverified = f"{H100}:49:12: warning unverified-basis: specs.memory_bandwidth: the basis is unverified"
    assert f"new: {unverified}" in told and f"fixed: {unverified}" in told
    assert "added: engines/sglang → facts/ridge-point" in told
    assert "removed: engines/sglang → facts/ridge-point" in told
    moves = [item.split(" because ")[0] for item in page.items if item.startswith(f"{ROOFLINE}: ")]
    assert moves == [f"{ROOFLINE}: inherited-debt → no-debt", f"{ROOFLINE}: no-debt → inherited-debt"], "newest first"

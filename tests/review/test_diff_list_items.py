"""`flopkb diff` pairs the claims of the two sides as the files number them, when validation left a claim out of
one side (docs/cli.md): the claims after it keep their index, their place, and their own change."""

from __future__ import annotations

from pathlib import Path

from gitrepo import commit, init, replace_in

from flopkb.config import load_config
from flopkb.review.run import diff_report
from kbfixture import write_kb

FACT = "id: facts/x\nkind: fact\nstatement: s\nformulas:\n  - id: f\n    expr: 2 * 3\n    expect:\n"
CLAIMS = "      - value: 6\n      - value: 6\n"


def test_a_claim_left_out_shifts_no_other_claim_of_the_diff(tmp_path: Path) -> None:
    root = write_kb(init(tmp_path / "kb"), {"records/facts/x.yaml": FACT + CLAIMS})
    commit(root, "base")
    replace_in(root / "records/facts/x.yaml", CLAIMS, "      - value: 6\n        measured: x#m\n      - value: 7\n")
    commit(root, "a claim broken, another made wrong")
    report = diff_report(load_config(root), "HEAD~1..HEAD", {})
    changes = [(claim.index, claim.before, claim.after, claim.place) for claim in report.claims]
    assert [(index, before, after) for index, before, after, _ in changes] == [(0, "ok", None), (1, "ok", "mismatch")]
    assert changes[1][3] is not None and changes[1][3].line == 10

"""The hostile inputs of bounded work, each beside a baseline of the same size, in one process (CPU seconds).

    python benchmarks/bench_bounded.py

- a ref bomb: a record of 200 `ref`s to a 10,000-point sweep, checked (`flopkb check` without the cache),
  beside the same base with one `ref`;
- a prose bomb: 600 KB of `[[a|` parsed (`flopkb.links.prose.parse`), beside 600 KB of prose with a wikilink
  every 25 characters;
- a huge list: `flopkb.authoring.fmt.format_text` on a record of 90,000 tags, beside one of 9,000 (linear work
  gives a ratio of about 10).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from flopkb.authoring.fmt import format_text
from flopkb.config import load_config
from flopkb.links import prose
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES

REPO = Path(__file__).resolve().parents[1]


def cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def ref_base(root: Path, refs: int) -> Path:
    (root / "records/facts").mkdir(parents=True)
    (root / "records/flops").mkdir(parents=True)
    (root / "schema").mkdir()
    (root / "schema/vocabulary.yaml").write_bytes((REPO / "schema/vocabulary.yaml").read_bytes())
    values = ", ".join(str(index + 1) for index in range(10_000))
    (root / "records/facts/sweep.yaml").write_text(
        "id: facts/sweep\nkind: fact\ntitle: Sweep\nstatement: A sweep.\nformulas:\n"
        f"  - id: f\n    expr: x * 2\n    inputs:\n      x: [{values}]\n"
    )
    formulas = "".join(f"  - id: r{index}\n    ref: facts/sweep#f\n" for index in range(refs))
    (root / "records/flops/bomb.yaml").write_text(
        "id: flops/bomb\nkind: flop\ncategory: arithmetic-intensity\ndescription: See [[facts/sweep]].\n"
        f"formulas:\n{formulas}"
    )
    return root


def check(root: Path) -> Callable[[], object]:
    def run() -> None:
        kb = compile_knowledge_base(load_config(root), CHECK_STAGES)
        assert not [d for d in kb.diagnostics if d.path.startswith("schema/")], kb.diagnostics

    return run


def tags(count: int) -> str:
    listed = ", ".join(f"t{index}" for index in range(count))
    return f"kind: flop\nid: flops/a\ncategory: arithmetic-intensity\ndescription: D.\ntags: [{listed}]\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        one = cpu(check(ref_base(Path(folder) / "one", 1)))
        bomb = cpu(check(ref_base(Path(folder) / "bomb", 200)))
    print(f"ref bomb: 200 refs {bomb:.2f} s, 1 ref {one:.2f} s, ratio {bomb / one:.1f}")
    prose.parse("warm up")
    brackets = cpu(lambda: prose.parse("[[a|" * 150_000))
    plain = cpu(lambda: prose.parse("lorem ipsum [[a]] dolor " * 25_000))
    print(f"prose bomb: 600 KB of [[a| {brackets:.2f} s, 600 KB of prose {plain:.2f} s, ratio {brackets / plain:.1f}")
    small = cpu(lambda: format_text(tags(9_000), "records/flops/a.yaml"))
    large = cpu(lambda: format_text(tags(90_000), "records/flops/a.yaml"))
    print(f"fmt: 90,000 tags {large:.2f} s, 9,000 tags {small:.2f} s, ratio {large / small:.1f}")


if __name__ == "__main__":
    main()

"""Mutation check: plant realistic bugs in the core folders, one at a time, and count those the tests catch.

    python tests/mutation/run.py              # every mutant of tests/mutation/mutants.py
    python tests/mutation/run.py fmt-second   # the mutants whose name starts with one of these

Each mutant replaces one snippet of one module (the snippet must occur exactly once) in a copy of
`compiler/`, then runs the tests of its area against that copy (`PYTHONPATH` set to it; the work tree is
never written). A mutant is killed when its tests fail. Prints one line per mutant, then the kill ratio,
and exits 1 when it is under 90%. About 10-20 minutes on the shared machine: not part of the default
pytest run (docs/testing.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from mutants import MUTANTS, Mutant  # noqa: E402

TARGET = 0.9


def killed(mutant: Mutant, scratch: Path) -> bool:
    """Whether the tests of `mutant` fail with it planted (in a fresh copy of `compiler/` under `scratch`)."""
    copy = scratch / mutant.name / "compiler"
    shutil.copytree(REPO / "compiler", copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    module = copy / mutant.path
    text = module.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.name}: the snippet occurs {text.count(mutant.old)} times in {mutant.path}")
    module.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(REPO / "tests")])}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutant.tests]
    run = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, check=False)
    shutil.rmtree(copy.parent)
    return run.returncode != 0


def main(prefixes: list[str]) -> int:
    chosen = [mutant for mutant in MUTANTS if not prefixes or mutant.name.startswith(tuple(prefixes))]
    caught = 0
    with tempfile.TemporaryDirectory(prefix="flopkb-mutants-") as folder:
        for mutant in chosen:
            result = killed(mutant, Path(folder))
            caught += result
            print(f"{'killed  ' if result else 'SURVIVED'} {mutant.name}: {mutant.why}", flush=True)
    ratio = caught / len(chosen) if chosen else 1.0
    print(f"{caught} of {len(chosen)} mutants killed ({ratio:.0%})")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

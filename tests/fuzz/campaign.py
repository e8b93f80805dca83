"""A long fuzzing campaign: mutate the project's records for --minutes, minimise one input per failure class.

    PYTHONPATH=compiler python tests/fuzz/campaign.py --minutes 30 --out build/fuzz-failures [--seed N]

Every new failure class (see `harness.signature`) is minimised (mutations dropped, then lines removed while
the class stays) and written to OUT/<n>/: `input.yaml` (the minimised file), `mutated.yaml` (as generated),
`info.json` (the record it replaces, the mutations, the violations); OUT/summary.json counts every class
and names the known class (tests/fuzz/known.py) each belongs to. The exit status is 1 when a class is new.
Only the command line is used, as in the pytest suites.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from harness import REPOSITORY, checked, copy_base, record_files, signature, warm_up
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from known import classify
from mutations import ANY_MUTATION, Mutation, mutated


class Finished(Exception):
    """The campaign's time is up."""


def minimise_mutations(mutations: list[Mutation], keeps: Callable[[list[Mutation]], bool]) -> list[Mutation]:
    """Drop mutations one at a time while the failure stays."""
    index = 0
    while index < len(mutations):
        fewer = mutations[:index] + mutations[index + 1 :]
        if fewer and keeps(fewer):
            mutations = fewer
        else:
            index += 1
    return mutations


def minimise_lines(data: bytes, keeps: Callable[[bytes], bool]) -> bytes:
    """Remove chunks of lines (delta debugging) while the failure stays."""
    lines = data.split(b"\n")
    chunks = 2
    while len(lines) >= 2 and chunks <= len(lines):
        size = -(-len(lines) // chunks)
        for start in range(0, len(lines), size):
            fewer = lines[:start] + lines[start + size :]
            if fewer and keeps(b"\n".join(fewer)):
                lines, chunks = fewer, max(chunks - 1, 2)
                break
        else:
            chunks *= 2
    return b"\n".join(lines)


class Campaign:
    """The base, the record files' originals, and what was found so far."""

    def __init__(self, root: Path, out: Path) -> None:
        self.root, self.out = root, out
        self.originals = {rel: (root / rel).read_bytes() for rel in record_files(root)}
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.known: dict[str, str | None] = {}
        self.runs = 0

    def classes(self, rel: str, data: bytes) -> dict[str, str | None]:
        """The failure classes of a check with `data` in `rel`: each with its known class (FINDINGS.md) or None."""
        self.runs += 1
        _, found = checked(self.root, {rel: data})
        return {signature(violation): classify(violation, data) for violation in found}

    def explore(self, rel: str, mutations: list[Mutation]) -> None:
        data = mutated(self.originals[rel], mutations)
        for name, known in sorted(self.classes(rel, data).items()):
            self.counts[name] += 1
            self.known.setdefault(name, known)
            if name not in self.examples:
                self.examples[name] = self.keep(name, rel, mutations, data)

    def keep(self, name: str, rel: str, mutations: list[Mutation], data: bytes) -> str:
        original = self.originals[rel]
        fewest = minimise_mutations(mutations, lambda some: name in self.classes(rel, mutated(original, some)))
        smallest = minimise_lines(mutated(original, fewest), lambda text: name in self.classes(rel, text))
        folder = self.out / f"{len(self.examples) + 1:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "input.yaml").write_bytes(smallest)
        (folder / "mutated.yaml").write_bytes(data)
        _, found = checked(self.root, {rel: smallest})
        info = {
            "class": name,
            "record": rel,
            "mutations": [asdict(m) for m in fewest],
            "violations": [str(v) for v in found],
        }
        (folder / "info.json").write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"new class {name!r} ({self.known[name] or 'not a known class'}) -> {folder}", flush=True)
        return folder.name

    def summary(self, seconds: float) -> dict:
        classes = {
            name: {"count": count, "known": self.known[name], "example": self.examples[name]}
            for name, count in self.counts.most_common()
        }
        return {"runs": self.runs, "seconds": round(seconds), "classes": classes}


def run(campaign: Campaign, minutes: float, seed_value: int) -> None:
    deadline = time.monotonic() + minutes * 60
    files = sorted(campaign.originals)

    @seed(seed_value)
    @settings(
        max_examples=10**9,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(rel=st.sampled_from(files), mutations=st.lists(ANY_MUTATION, min_size=1, max_size=4))
    def explore(rel: str, mutations: list[Mutation]) -> None:
        if time.monotonic() > deadline:
            raise Finished
        campaign.explore(rel, mutations)

    with contextlib.suppress(Finished):
        explore()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=REPOSITORY / "build/fuzz-failures")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    root = copy_base(Path(tempfile.mkdtemp(prefix="flopkb-fuzz-")) / "kb")
    warm_up(root)
    campaign = Campaign(root, options.out)
    start = time.monotonic()
    run(campaign, options.minutes, options.seed)
    summary = campaign.summary(time.monotonic() - start)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "summary.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 1 if any(entry["known"] is None for entry in summary["classes"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark what errata and drafts add to the evidence stage: each record's text searched for the templates' sentences
and its errata's quotes checked.

    python benchmarks/bench_evidence.py [--records 3000] [--repeat 5]

In one process, on a generated base loaded once: the evidence stage's per-file
work (`_own_figures`) over every record, alternating with the same work with
the placeholder search and the errata check replaced by no-ops. Prints the best
time of each and their ratio (the machine is shared and noisy: read the ratio).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flopkb.config import load_config
from flopkb.links import evidence
from flopkb.pipeline.compile import compile_knowledge_base
from generate import generate


def own_work(entries: list) -> float:
    start = time.perf_counter()
    for entry in entries:
        evidence._own_figures(entry.id, entry)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = generate(Path(folder) / "kb", args.records)
        kb = compile_knowledge_base(load_config(root))
        entries = [entry for entry in kb.entries.values() if entry.record is not None]
        for entry in entries:
            entry.source.data, entry.source.text, entry.record  # noqa: B018  (read before timing)
        real_placeholders, real_errata = evidence.placeholders_in, evidence.check_errata
        with_drafts, without = [], []
        for _ in range(args.repeat):
            evidence.placeholders_in, evidence.check_errata = real_placeholders, real_errata
            with_drafts.append(own_work(entries))
            evidence.placeholders_in = lambda data: []  # type: ignore[assignment]
            evidence.check_errata = lambda record_id, record, source: ((), [])  # type: ignore[assignment]
            without.append(own_work(entries))
        evidence.placeholders_in, evidence.check_errata = real_placeholders, real_errata
    best, base = min(with_drafts), min(without)
    print(f"records:                         {len(entries)}")
    print(f"evidence per file, as shipped:   {best * 1000:.1f} ms")
    print(f"without drafts and errata:       {base * 1000:.1f} ms")
    print(f"ratio:                           {best / base:.2f}")


if __name__ == "__main__":
    main()

"""Generate a synthetic knowledge base for benchmarks: thousands of records shaped like real ones.

    python benchmarks/generate.py DIR --records 10000

Deterministic for a given count and seed. Records are about 4 KB with about
8 links each; a tenth of the flop and fact records carry a formula with a
small sweep evaluated over two accelerators.
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

ACCELERATORS = 20
SOURCES = 100
ENGINES = 20
WORDS = [
    "decode",
    "prefill",
    "batch",
    "bandwidth",
    "kernel",
    "tensor",
    "cache",
    "memory",
    "stream",
    "weight",
    "token",
    "draft",
    "verify",
    "latency",
    "throughput",
    "overlap",
    "schedule",
    "attention",
    "layer",
    "head",
    "block",
    "page",
    "quantise",
    "shard",
    "expert",
]
VOCABULARY = """\
categories:
  arithmetic-intensity: {description: Operations per byte moved.}
  memory-bandwidth: {description: Cost set by bytes streamed.}
  kv-cache: {description: Cost of keeping and streaming the KV cache.}
parameters:
  memory_bandwidth: {unit: byte/s, description: Peak memory bandwidth.}
  memory_capacity: {unit: byte, description: Memory capacity.}
  peak_bf16_dense: {unit: FLOP/s, description: Dense bf16 peak.}
  peak_fp8_dense: {unit: FLOP/s, description: Dense fp8 peak.}
basis:
  measured: {description: Measured.}
  vendor-spec: {description: Vendor sheet.}
  cited: {description: Secondary source.}
  derived: {description: Derived.}
  unverified: {description: Not verified.}
"""


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def paragraph_block(rng: random.Random, links: list[str], words: int) -> str:
    """Literal block text of `words` words with the wikilinks spread through it, wrapped at ~90 columns."""
    tokens = prose(rng, words).split()
    for link in links:
        tokens.insert(rng.randrange(len(tokens)), f"[[{link}]]")
    lines, line = [], ""
    for token in tokens:
        if len(line) + len(token) > 88:
            lines.append(line)
            line = ""
        line = f"{line} {token}".strip()
    lines.append(line)
    return "\n".join(f"  {text}" for text in lines)


def accelerator(index: int) -> str:
    return f"""\
id: hw/acc-{index:03d}
kind: accelerator
vendor: Vendor {index % 4}
description: A synthetic accelerator for benchmarks.
specs:
  memory_bandwidth:
    value: "{2 + index * 0.1:.1f} TB/s"
    basis: vendor-spec
    sources: [src/paper-{index:04d}]
  peak_bf16_dense:
    value: "{500 + index * 25} TFLOP/s"
    basis: {"unverified" if index % 5 == 0 else "vendor-spec"}
    sources: [src/paper-{index:04d}]
  memory_capacity:
    value: "{80 + index} GB"
    basis: vendor-spec
    sources: [src/paper-{index:04d}]
"""


def source(index: int) -> str:
    return f"""\
id: src/paper-{index:04d}
kind: source
title: "Synthetic paper {index}"
url: https://example.org/papers/{index}
authors: [A. Author, B. Author]
year: {2015 + index % 10}
venue: Bench
"""


def engine(index: int) -> str:
    return f"""\
id: engines/engine-{index:02d}
kind: engine
description: A synthetic engine that cites [[src/paper-{index:04d}]].
homepage: https://example.org/engines/{index}
features: [eagle, medusa, ngram]
"""


FORMULA = """\
formulas:
  - id: ridge
    expr: hw.peak_bf16_dense / hw.memory_bandwidth * B / (B + k)
    unit: FLOP/byte
    inputs:
      B: [1, 8, 32, 128]
      k: 4
    hardware: [hw/acc-{a:03d}, hw/acc-{b:03d}]
"""


def content_record(rng: random.Random, index: int, count: int) -> str:
    kind = "flop" if index % 3 else "fact"
    record_id = f"kb/g{index % 50:02d}/rec-{index:05d}"
    links = [f"kb/g{(j := rng.randrange(count)) % 50:02d}/rec-{j:05d}" for _ in range(5)]
    links.append(f"rec-{(index + 1) % count:05d}")  # a last-segment link
    links.append(f"engines/engine-{rng.randrange(ENGINES):02d}")
    a, b = rng.randrange(ACCELERATORS), rng.randrange(ACCELERATORS)
    text_field = "description" if kind == "flop" else "statement"
    parts = [
        f"id: {record_id}\nkind: {kind}\ntitle: Synthetic record {index}\ntags: [bench, g{index % 50}]\n",
        f"aliases: [kb/moved/rec-{index:05d}]\n" if index % 10 == 5 else "",  # renamed: a redirect page on the site
        f"category: {rng.choice(['arithmetic-intensity', 'memory-bandwidth', 'kv-cache'])}\n" if kind == "flop" else "",
        f"{text_field}: |\n{paragraph_block(rng, links[:4], 180)}\n",
    ]
    if kind == "flop":
        parts.append(
            "scales_with:\n" + "".join(f"  - factor: factor_{j}\n    effect: {prose(rng, 14)}\n" for j in range(3))
        )
        parts.append(
            "hardware_parameters:\n  - parameter: memory_bandwidth\n"
            f"    effect: {prose(rng, 20)}\n    basis: cited\n    values_for: [hw/acc-{a:03d}]\n"
            f"    sources: [src/paper-{rng.randrange(SOURCES):04d}]\n"
        )
        parts.append("workarounds:\n" + "".join(f"  - {prose(rng, 16)}\n" for _ in range(3)))
    if index % 10 == 0:
        parts.append(FORMULA.format(a=a, b=(a + 1 + b % (ACCELERATORS - 1)) % ACCELERATORS))
    parts.append(f"sources: [src/paper-{rng.randrange(SOURCES):04d}]\n")
    parts.append(f"notes: |\n{paragraph_block(rng, links[4:], 170)}\n")
    return "".join(parts)


def generate(root: Path, count: int, seed: int = 7) -> Path:
    """Write a knowledge base of `count` content records (plus shared accelerators, sources, engines) at `root`."""
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(seed)
    files: dict[str, str] = {"schema/vocabulary.yaml": VOCABULARY}
    files.update({f"records/hw/acc-{i:03d}.yaml": accelerator(i) for i in range(ACCELERATORS)})
    files.update({f"records/src/paper-{i:04d}.yaml": source(i) for i in range(SOURCES)})
    files.update({f"records/engines/engine-{i:02d}.yaml": engine(i) for i in range(ENGINES)})
    for index in range(count):
        files[f"records/kb/g{index % 50:02d}/rec-{index:05d}.yaml"] = content_record(rng, index, count)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    generate(args.root, args.records, args.seed)
    print(f"wrote {args.records} records to {args.root}")


if __name__ == "__main__":
    main()

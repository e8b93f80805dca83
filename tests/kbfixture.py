"""Fixture knowledge bases built from a dict of {path: text}, and one-line views of their diagnostics."""

from __future__ import annotations

import textwrap
from collections.abc import Collection
from pathlib import Path

from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES

VOCABULARY = """\
categories:
  arithmetic-intensity: {description: How many operations a step does per byte it moves.}
  memory-bandwidth: {description: Cost set by bytes streamed from memory.}
parameters:
  memory_bandwidth: {unit: byte/s, description: Peak memory bandwidth.}
  memory_capacity: {unit: byte, description: Memory capacity.}
  peak_bf16_dense: {unit: FLOP/s, description: Dense bf16 peak.}
  peak_fp8_dense: {unit: FLOP/s, description: Dense fp8 peak.}
basis:
  measured: {description: Measured.}
  simulated: {description: Simulated.}
  vendor-spec: {description: From the vendor's sheet.}
  cited: {description: From a secondary source.}
  derived: {description: Derived from other figures.}
  unverified: {description: Not yet verified.}
"""


def accelerator(record_id: str, *, vendor: str = "V", basis: str = "derived", **specs: str) -> str:
    """An accelerator record with one flow-style line per spec, in the order given, from line 5 on."""
    rows = "".join(f'  {name}: {{value: "{value}", basis: {basis}}}\n' for name, value in specs.items())
    return f"id: {record_id}\nkind: accelerator\nvendor: {vendor}\nspecs:\n{rows}"


H100 = accelerator("hw/h100", vendor="NVIDIA", memory_bandwidth="3.35 TB/s")
"""A minimal accelerator record for tests that need a target of typed refs."""


def write_kb(root: Path, files: dict[str, str | bytes], *, vocabulary: str | None = VOCABULARY) -> Path:
    """Write a knowledge base: `files` maps root-relative paths to text (dedented) or raw bytes."""
    if vocabulary is not None:
        files = {"schema/vocabulary.yaml": vocabulary, **files}
    (root / "records").mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8", newline="")
    return root


def compile_kb(root: Path) -> KnowledgeBase:
    return compile_knowledge_base(load_config(root), CHECK_STAGES)


def compile_warm(root: Path, cache: FileCache | None = None) -> KnowledgeBase:
    """The base compiled through the load cache (`cache`, or a new one on the base's cache folder), then saved."""
    config = load_config(root)
    cache = cache or FileCache(config)
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    cache.save()
    return kb


def codes(kb: KnowledgeBase, ignore: Collection[str] = ()) -> list[tuple[str, str, int]]:
    """(code, path, line) of every diagnostic whose code is not in `ignore`, in report order."""
    return [(d.code, d.path, d.line) for d in kb.diagnostics if d.code not in ignore]


def located(kb: KnowledgeBase, ignore: Collection[str] = ()) -> list[tuple[str, str, int, int]]:
    """(code, path, line, column) of every diagnostic whose code is not in `ignore`, in report order."""
    return [(d.code, d.path, d.line, d.column) for d in kb.diagnostics if d.code not in ignore]

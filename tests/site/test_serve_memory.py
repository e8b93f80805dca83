"""`flopkb serve` keeps one base in memory, whatever the saves, without a full collection per save (issue 22).

The served base stays frozen out of the cyclic collector's reach; the next build releases it
(`KnowledgeBase.release`) so that reference counting frees it. Held here by counting, after each rebuild and
before any collection, the bases of this server's root that are still allocated (frozen ones included): a base
left in a cycle would still be there.
"""

from __future__ import annotations

import gc
from pathlib import Path

from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.site.publishing.serve import Server
from kbfixture import write_kb

ACCELERATOR = "records/hw/a1.yaml"
FACT = "records/facts/ridge.yaml"
FLOP = "records/flops/f.yaml"


def accelerator(bandwidth: str) -> str:
    return (
        f"id: hw/a1\nkind: accelerator\nvendor: V\ndescription: The first.\nspecs:\n"
        f"  memory_bandwidth: {{value: {bandwidth} TB/s, basis: derived}}\n"
        "  peak_bf16_dense: {value: 500 TFLOP/s, basis: derived}\n"
    )


FILES = {
    ACCELERATOR: accelerator("2"),
    FACT: "id: facts/ridge\nkind: fact\nstatement: The ridge of [[hw/a1]].\nformulas:\n  - id: ridge\n"
    "    expr: hw.peak_bf16_dense / hw.memory_bandwidth\n    unit: FLOP/byte\n    hardware: [hw/a1]\n",
    FLOP: "id: flops/f\nkind: flop\ncategory: memory-bandwidth\ndescription: Rests on [[facts/ridge]].\n",
}


def bases_of(root: Path) -> int:
    """The knowledge bases of `root` still allocated, garbage or not, frozen or not (the freeze is kept)."""
    gc.unfreeze()  # gc.get_objects() lists the collector's generations, not the frozen objects
    try:
        return sum(isinstance(thing, KnowledgeBase) and thing.config.root == root for thing in gc.get_objects())
    finally:
        gc.freeze()


def test_each_save_frees_the_previous_base_without_a_full_collection(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", FILES)
    server = Server(load_config(root), port=0)
    try:
        assert server.rebuild()
        limit = server._frozen_limit
        edits = [
            (FLOP, FILES[FLOP].replace("Rests", "Still rests"), True),
            (ACCELERATOR, accelerator("3"), True),
            (FLOP, FILES[FLOP] + "category: twice\n", False),  # refused: a repeated key is no record
            (FLOP, FILES[FLOP], True),
            (ACCELERATOR, accelerator("4"), True),
        ]
        for rel, text, good in edits:
            (root / rel).write_text(text)
            assert server.rebuild() == good
            assert bases_of(root) == 1  # the one served, held frozen; the previous and any refused one freed
        assert server._frozen_limit == limit  # no full collection was needed after the first build
        assert "4 TB/s" in (server.site_dir / "records/hw/a1.html").read_text()
    finally:
        server.stop()

"""`flopkb diff` as a new author meets it: a small base of their own records, and commits that change one thing each.

- `added`: an accelerator, its datasheet and a flop that computes on it and on an existing accelerator are added,
  and that existing accelerator's bandwidth is edited in the same commit;
- `layers`: an input of a fact's formula is edited, so a claim that held fails;
- `bandwidth`: the bandwidth of the added accelerator is edited, so a claim that already failed fails by more.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import commit, init, replace_in

from flopkb.config import load_config
from flopkb.review.model import Report
from flopkb.review.run import diff_report
from flopkb.review.text import render_text
from repo import REPO

X1, X2 = "accelerators/acme-x1", "accelerators/acme-x2"
FLOP = "flops/decode"
KV = "facts/kv-cache-bytes"

_ACCELERATOR = """id: accelerators/{name}
kind: accelerator
title: Acme {name}
vendor: Acme
description: |
  An accelerator of the tests.
specs:
  memory_bandwidth:
    value: "{bandwidth}"
    basis: vendor-spec
    sources: [https://example.org/{name}]
  peak_bf16_dense:
    value: "1000 TFLOP/s"
    basis: vendor-spec
    sources: [https://example.org/{name}]
"""

_RIDGE = """id: facts/ridge
kind: fact
title: Ridge point of acme-x2
statement: |
  Peak compute over memory bandwidth; see [[facts/kv-cache-bytes]].
formulas:
  - id: ridge
    title: Ridge point
    expr: hw.peak_bf16_dense / hw.memory_bandwidth
    unit: FLOP/byte
    hardware: [accelerators/acme-x2]
"""

_KV = """id: facts/kv-cache-bytes
kind: fact
title: KV cache bytes per token
statement: |
  Keys and values of every layer; see [[facts/ridge]].
formulas:
  - id: kv-bytes
    title: KV bytes per token
    expr: 2 * layers * heads * head_dim * bytes_per_elem
    unit: byte
    inputs:
      layers: 32
      heads: 8
      head_dim: 128
      bytes_per_elem: ["1 byte", "2 byte"]
    expect:
      - where: {bytes_per_elem: "2 byte"}
        value: 131072
"""

_DATASHEET = """id: sources/acme-x1-datasheet
kind: source
title: Acme X1 datasheet
url: https://example.org/acme-x1
authors: [Acme]
year: 2025
measurements:
  - id: decode
    quantity: decode steps per second
    value: "250 1/s"
    basis: measured
    where: Table 1
"""

_FLOP = """id: flops/decode
kind: flop
title: Decode streams the weights once a step
category: compute-throughput
description: |
  Each decode step reads every weight once, on [[accelerators/acme-x1]].
formulas:
  - id: decode-time
    title: Time to stream the weights once
    expr: weight_bytes / hw.memory_bandwidth
    unit: ms
    inputs:
      weight_bytes: "16 GB"
    hardware: [accelerators/acme-x1, accelerators/acme-x2]
    expect:
      - hardware: accelerators/acme-x1
        value: 5
  - id: steps-per-s
    title: Steps per second
    expr: hw.memory_bandwidth / weight_bytes
    unit: 1/s
    inputs:
      weight_bytes: "16 GB"
    hardware: [accelerators/acme-x1]
    expect:
      - hardware: accelerators/acme-x1
        measured: sources/acme-x1-datasheet#decode
"""


def _write(root: Path, record_id: str, text: str) -> None:
    path = root / "records" / f"{record_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = init(tmp_path_factory.mktemp("new-author") / "kb")
    shutil.copytree(REPO / "schema", root / "schema")
    _write(root, X2, _ACCELERATOR.format(name="acme-x2", bandwidth="2.0 TB/s"))
    _write(root, "facts/ridge", _RIDGE)
    _write(root, KV, _KV)
    commit(root, "base")
    _write(root, X1, _ACCELERATOR.format(name="acme-x1", bandwidth="4.0 TB/s"))
    _write(root, "sources/acme-x1-datasheet", _DATASHEET)
    _write(root, FLOP, _FLOP)
    replace_in(root / f"records/{X2}.yaml", 'value: "2.0 TB/s"', 'value: "2.5 TB/s"')
    commit(root, "added")
    replace_in(root / f"records/{KV}.yaml", "layers: 32", "layers: 33")
    commit(root, "layers")
    replace_in(root / f"records/{X1}.yaml", 'value: "4.0 TB/s"', 'value: "4.1 TB/s"')
    commit(root, "bandwidth")
    return root


ADDED, LAYERS, BANDWIDTH = "HEAD~3..HEAD~2", "HEAD~2..HEAD~1", "HEAD~1..HEAD"


def diff(root: Path, revisions: str) -> Report:
    return diff_report(load_config(root), revisions, {})


def flopkb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flopkb", *args], cwd=root, capture_output=True, text=True, check=False
    )


# Finding 11: values are shown as `check` shows them.


def test_a_value_equal_to_its_stated_value_reads_equal(repo: Path) -> None:
    lines = render_text(diff(repo, LAYERS)).splitlines()
    assert f"  ✗ {KV}#kv-bytes expect[0] (bytes_per_elem=2 byte): ✓ 131072 → ✗ 135168 (stated 131072)" in [
        line.split("  records/")[0] for line in lines
    ]
    assert f"    {KV}#kv-bytes at bytes_per_elem=1 byte: 65536 byte → 67584 byte +3.12%" in lines

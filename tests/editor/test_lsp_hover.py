"""Hover shows what flopkb computed: a formula's tables are `flopkb eval`'s, a link's target its kind and title."""

from __future__ import annotations

import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
from lsprotocol import types
from markdown_it import MarkdownIt

from kbfixture import accelerator, write_kb
from lsp_session import environment, lsp_session, open_file, settled

pytestmark = pytest.mark.asyncio

ALPHA = accelerator("hw/alpha", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s")
BETA = accelerator("hw/beta", peak_bf16_dense="500 TFLOP/s", memory_bandwidth="2.5 TB/s")
FACT = """\
id: facts/f
kind: fact
title: Ridge points
statement: The ridge point of [[hw/alpha]] against batch, as [[facts/g#gain]] has it.
formulas:
  - id: ridge
    title: Ridge point
    expr: hw.peak_bf16_dense / hw.memory_bandwidth * batch / (batch + k)
    unit: FLOP/byte
    inputs:
      batch: [1, 32]
      k: 4
    hardware: [hw/alpha, hw/beta]
    expect:
      - where: {batch: 32}
        hardware: hw/alpha
        value: 222.22
"""
GAIN = """\
id: facts/g
kind: fact
statement: A gain.
formulas:
  - id: gain
    expr: k / batch
    inputs: {k: 4, batch: 32}
"""


def eval_output(root: Path, record: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "flopkb", "eval", "--root", str(root), record],
        capture_output=True,
        text=True,
        env={**environment(), "NO_COLOR": "1"},
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


async def hover_at(lsp: object, uri: str, text: str, needle: str) -> str | None:
    before = text[: text.index(needle)]
    position = types.Position(line=before.count("\n"), character=len(before.rsplit("\n", 1)[-1]) + 1)
    hovered = await lsp.text_document_hover_async(  # type: ignore[attr-defined]
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    return hovered.contents.value if hovered is not None else None


async def test_hover_on_a_formula_shows_what_flopkb_eval_prints(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}
    root = write_kb(tmp_path, {**files, "records/facts/g.yaml": GAIN})
    printed = eval_output(root, "facts/f")
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/f.yaml")
        await settled(lsp, uri)
        for needle in ("id: ridge", "batch: [1, 32]", "value: 222.22"):
            shown = await hover_at(lsp, uri, FACT, needle)
            assert shown is not None and shown.startswith("```text\nfacts/f#ridge  Ridge point")
            table = shown.removeprefix("```text\n").removesuffix("\n```")
            assert table in printed
            assert "hw/beta" in table and "177.778" in table
        assert await hover_at(lsp, uri, FACT, "kind: fact") is None


async def test_hover_on_a_link_shows_its_target(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}
    root = write_kb(tmp_path, {**files, "records/facts/g.yaml": GAIN})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/f.yaml")
        await settled(lsp, uri)
        shown = await hover_at(lsp, uri, FACT, "[[hw/alpha]]")
        assert shown is not None and shown.startswith("**hw/alpha** · accelerator")
        anchored = await hover_at(lsp, uri, FACT, "[[facts/g#gain]]")
        assert anchored is not None and anchored.startswith("**facts/g**#gain · fact\nevidence: ")
        assert "A gain." in anchored
        assert "facts/g#gain" in anchored.split("```text\n", 1)[1] and "0.125" in anchored


PAPER = (
    "id: sources/paper\nkind: source\ntitle: P\nmeasurements:\n"
    "  - {id: b32, quantity: gain, value: 0.2, basis: simulated, where: Figure 22}\n"
)


async def test_inlay_hints_show_each_claim_as_computed(tmp_path: Path) -> None:
    gain = GAIN + "    expect:\n      - {measured: sources/paper#b32}\n"
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}
    root = write_kb(tmp_path, {**files, "records/facts/g.yaml": gain, "records/sources/paper.yaml": PAPER})
    async with lsp_session(root) as lsp:
        hints = {}
        for rel, text in (("records/facts/f.yaml", FACT), ("records/facts/g.yaml", gain)):
            uri = open_file(lsp, root, rel)
            await settled(lsp, uri)
            whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=99, character=0))
            found = await lsp.text_document_inlay_hint_async(
                types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=whole)
            )
            lines = text.split("\n")
            for hint in found or []:
                assert hint.position.character == len(lines[hint.position.line])  # at the end of the claim's line
                hints[(rel, hint.position.line)] = hint.label
    assert hints == {
        ("records/facts/f.yaml", 14): "= 222.222 FLOP/byte ✓",
        ("records/facts/g.yaml", 8): "≠ model 0.125, measured 0.2 (off by 60%)",
    }


GAMMA = accelerator("hw/gamma", peak_bf16_dense="200 TFLOP/s", memory_bandwidth="8 TB")  # a bandwidth that is no rate


async def test_hover_on_a_hardware_parameter_shows_it_on_every_accelerator_as_eval_does(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}
    root = write_kb(tmp_path, {**files, "records/facts/g.yaml": GAIN, "records/hw/gamma.yaml": GAMMA})
    printed = eval_output(root, "facts/f")
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/f.yaml")
        await settled(lsp, uri)
        in_expression = await hover_at(lsp, uri, FACT, "hw.memory_bandwidth")
        spec = open_file(lsp, root, "records/hw/beta.yaml")
        await settled(lsp, spec)
        on_spec = await hover_at(lsp, spec, BETA, "memory_bandwidth:")
        on_other_spec = await hover_at(lsp, spec, BETA, "peak_bf16_dense:")
    assert in_expression is not None and in_expression == on_spec
    heading, _, *rows = in_expression.split("\n")
    assert heading == "**hw.memory\\_bandwidth** · byte/s: Peak memory bandwidth."  # `_` shown, never emphasis
    assert rows == [
        "- hw/alpha: 4 TB/s (derived)",
        "- hw/beta: 2.5 TB/s (derived)",
        "- hw/gamma: its value fails the spec check; no formula computes with it",
    ]
    for row in rows[:2]:  # the figure and basis `flopkb eval` prints beside each evaluation on that accelerator
        accelerator, figure = row.removeprefix("- ").split(": ")
        assert any(accelerator in line and figure in line for line in printed.splitlines())
    assert on_other_spec is not None and on_other_spec.startswith("**hw.peak\\_bf16\\_dense**")
    assert "- hw/gamma: 200 TFLOP/s (derived)" in on_other_spec.split("\n")


EVIL = """\
id: facts/evil
kind: fact
title: "x* ![pixel](https://attacker.example/track.png?who=victim) [open](command:workbench.action.terminal.new) *y"
statement: |
  <img src="https://attacker.example/t2.png"> [click me](https://attacker.example/phish)
  ```
  - a list <script>alert(1)</script> <https://attacker.example/auto>
formulas:
  - id: f
    title: "t FENCES <img src=x> [open](command:x) end"
    expr: 2 * 3
"""
# The table folds the title onto a line of backticks only, as a fence is; 80 of them: a title short enough for the
# hover to show it whole (`LIMIT.width`).
EVIL = EVIL.replace("FENCES", "`" * 80)
LINKS_EVIL = "id: facts/reader\nkind: fact\nstatement: See [[facts/evil]] and [[facts/evil#f]].\n"
_TAG = re.compile(r"<(/?)([a-z0-9]+)")


def rendered(markdown: str) -> str:
    """The hover as an editor's Markdown renderer (markdown-it, CommonMark) makes it HTML."""
    return MarkdownIt("commonmark").render(markdown)


async def test_hover_shows_what_a_record_wrote_as_text_never_as_markup(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/facts/evil.yaml": EVIL, "records/facts/reader.yaml": LINKS_EVIL})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/reader.yaml")
        await settled(lsp, uri)
        plain = await hover_at(lsp, uri, LINKS_EVIL, "[[facts/evil]]")
        anchored = await hover_at(lsp, uri, LINKS_EVIL, "[[facts/evil#f]]")
    assert plain is not None and anchored is not None
    for shown in (plain, anchored):
        html = rendered(shown)
        assert {tag for _, tag in _TAG.findall(html)} <= {"p", "strong", "em", "pre", "code"}, html
        text = unescape(re.sub(r"<[^>]+>", "", html))
        assert "![pixel](https://attacker.example/track.png?who=victim) [open](command:" in text
        assert '<img src="https://attacker.example/t2.png"> [click me](https://attacker.example/phish)' in text
        assert "- a list <script>alert(1)</script> <https://attacker.example/auto>" in text
    assert rendered(plain).startswith("<p><strong>facts/evil</strong> · fact\n<em>x* ![pixel]")
    html = rendered(anchored)
    assert html.count("<pre>") == 1 and html.rstrip().endswith("</code></pre>")  # the table's fence holds
    table = unescape(html.split("<pre><code", 1)[1].split(">", 1)[1])
    assert "".join(table.split()).startswith("facts/evil#ft" + "`" * 80 + "<imgsrc=x>[open](command:x)end")

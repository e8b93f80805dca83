"""What a hover shows when the base is hostile: record and vocabulary text stay text, and a hover stays small.

Every file of a base comes from a pull request: its records and `schema/vocabulary.yaml`. A hover is markdown an
editor renders (markdown-it, CommonMark), and fetches what it links to: an image of a record's would load when the
author hovers.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from markdown_it import MarkdownIt

from flopkb.editor.hover import entry_at, hover_markdown
from kbfixture import VOCABULARY, accelerator, compile_kb, write_kb

PIXEL = "![x](https://attacker.example/pixel.png)"
HOSTILE = f"{PIXEL} [open](https://attacker.example/phish) <img src=x> *em* _u_ `tick`"
_TAG = re.compile(r"<(/?)([a-z0-9]+)")


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def tags(html: str) -> set[str]:
    return {tag for _, tag in _TAG.findall(html)}


def seen_text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


HOSTILE_VOCABULARY = (
    VOCABULARY.replace(
        "memory_bandwidth: {unit: byte/s, description: Peak memory bandwidth.}",
        f"memory_bandwidth: {{unit: '{HOSTILE}', description: '{HOSTILE}'}}",
    )
    .replace("derived: {description: Derived from other figures.}", f"'{HOSTILE}': {{description: x}}")
    .replace("basis:\n", f"basis:\n  derived: {{description: d}}\n  '{PIXEL}': {{description: p}}\n")
)
"""The bandwidth's unit and description, and a basis term, are markup; `derived` is kept (a required term)."""


def hostile_base(tmp_path: Path) -> Path:
    strong = 'id: hw/a._em_\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth: {value: "4 TB**1/s**1", basis: '
    invalid = f"id: hw/b._u_\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth: {{value: '{HOSTILE}', basis: "
    files = {
        "records/hw/a._em_.yaml": strong + f"'{HOSTILE}'}}\n",
        "records/hw/b._u_.yaml": invalid + "derived}\n",
        "records/hw/c.yaml": accelerator("hw/c", memory_bandwidth="2 TB/s") + f"  '{PIXEL}': {{value: 1, basis: x}}\n",
    }
    return write_kb(tmp_path, files, vocabulary=HOSTILE_VOCABULARY)


def test_a_hostile_record_or_vocabulary_shows_as_text_in_a_parameter_s_hover(tmp_path: Path) -> None:
    root = hostile_base(tmp_path)
    kb = compile_kb(root)
    entry = entry_at(kb, "records/hw/c.yaml")
    assert entry is not None
    on_bandwidth = hover_markdown(kb, entry.path, 5, 3)
    on_unknown = hover_markdown(kb, entry.path, 6, 3)  # a spec of no parameter the vocabulary declares
    assert on_bandwidth is not None and on_unknown is not None
    html = rendered(on_bandwidth)
    assert tags(html) <= {"p", "strong", "ul", "li"}, html
    assert (
        seen_text(html).split()
        == " ".join(
            [
                f"hw.memory_bandwidth · {HOSTILE}: {HOSTILE}",
                "",
                f"hw/a._em_: 4 TB**1/s**1 ({HOSTILE})",
                "hw/b._u_: its value fails the spec check; no formula computes with it",
                "hw/c: 2 TB/s (derived)",
            ]
        ).split()
    )
    unknown = rendered(on_unknown)
    assert tags(unknown) <= {"p", "strong", "ul", "li"}, unknown
    assert (
        seen_text(unknown).split()
        == f"hw.{PIXEL} hw/c: its value fails the spec check; no formula computes with it".split()
    )

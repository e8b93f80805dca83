"""What a hover shows when the base is hostile: record and vocabulary text stay text, and a hover stays small.

Every file of a base comes from a pull request: its records and `schema/vocabulary.yaml`. A hover is markdown an
editor renders (markdown-it, CommonMark), and fetches what it links to: an image of a record's would load when the
author hovers.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from html import unescape
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from flopkb.editor.hover import LIMIT, entry_at, hover_markdown
from flopkb.formulas.eval_table import WIDTH, evaluate, render
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.review.markdown import editor_text
from kbfixture import VOCABULARY, accelerator, codes, compile_kb, write_kb

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


NEOVIM_CONCEALED = re.compile(r"\\([\\`*{}\[\]()#+\-,.!_>~|\"$%&'/:;<=?@^ ])")
"""The backslash escapes Neovim hides in a hover (its runtime's syntax/lsp_markdown.vim, `markdownEscape`): it shows
markdown as text, so a character reference (`&#95;`) would show as it is written."""


@given(
    st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]) | st.sampled_from("\n\r\\`*_[]~&<>|#!-+=.1"),
        max_size=40,
    )
)
@example(PIXEL)
@example("1. not a list")
@example("=====")
@example("- not an item")
def test_text_in_a_hover_reads_as_written_where_markdown_is_rendered_and_where_it_is_shown_as_text(text: str) -> None:
    """VS Code, Helix and Zed render a hover's markdown: they show the text and no markup of its. Neovim shows the
    markdown as text, hiding backslash escapes: it shows the text too, with no `&#...;` in it."""
    shown = editor_text(text)
    written = " ".join(text.replace("\r", " ").replace("\n", " ").split())
    html = rendered(f"a line above\n{shown}")  # as a record's lines are shown: under one another
    assert tags(html) <= {"p"}
    assert " ".join(seen_text(html).split()) == f"a line above {written}".strip()
    assert " ".join(NEOVIM_CONCEALED.sub(r"\1", shown).split()) == written


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


def sized_base(root: Path, accelerators: int, points: int, claims: int) -> Path:
    """A formula swept over `points` on `accelerators`, with `claims` claims that name a measurement each."""
    files = {
        f"records/hw/a{i}.yaml": accelerator(f"hw/a{i}", memory_bandwidth=f"{i + 1} TB/s") for i in range(accelerators)
    }
    for source in range(0, claims, 1000):  # a thousand measurements a record: records are limited to a megabyte
        measurements = "".join(
            f"  - {{id: m{k}, quantity: moved, value: '{k} TB', basis: measured, where: Figure {k}}}\n"
            for k in range(source, min(source + 1000, claims))
        )
        files[f"records/sources/p{source}.yaml"] = (
            f"id: sources/p{source}\nkind: source\ntitle: P\nmeasurements:\n{measurements}"
        )
    expect = "".join(
        f"      - {{measured: sources/p{k // 1000 * 1000}#m{k}, where: {{t: 1 s}}, hardware: hw/a{k % accelerators}}}\n"
        for k in range(claims)
    )
    sweep = ", ".join(f"{t} s" for t in range(1, points + 1))
    hardware = ", ".join(f"hw/a{i}" for i in range(accelerators))
    files["records/facts/f.yaml"] = (
        "id: facts/f\nkind: fact\nstatement: S.\nformulas:\n  - id: moved\n    expr: hw.memory_bandwidth * t\n"
        f"    unit: TB\n    inputs: {{t: [{sweep}]}}\n    hardware: [{hardware}]\n"
        + (f"    expect:\n{expect}" if claims else "")
    )
    return write_kb(root, files)


def eval_printed(kb: KnowledgeBase) -> list[str]:
    """What `flopkb eval facts/f` prints (its command's `evaluate` and `render`, not on a terminal)."""
    stream = io.StringIO()
    render(evaluate(kb, "facts/f", None, ()), stream, color=False, terminal=False)
    return stream.getvalue().splitlines()


EVALUATION = re.compile(r"\s*\d+ s\s+hw/a\d+\s")
MEASURED = re.compile(r"t = 1 s on hw/a\d+\s")


def rows(lines: list[str], kind: re.Pattern[str]) -> list[list[str]]:
    """The rows of one table, each as its words (a cut table's columns may be narrower than the whole table's)."""
    return [line.split() for line in lines if kind.match(line)]


def first_on_each(table: list[list[str]], each: int) -> list[list[str]]:
    """The rows of `table` within the first `each` on their accelerator (a row's third word)."""
    counts: Counter[str] = Counter()
    kept = []
    for row in table:
        counts[row[2]] += 1
        if counts[row[2]] <= each:
            kept.append(row)
    return kept


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(accelerators=300, points=2, claims=12_000)
@example(accelerators=3, points=25, claims=0)
@given(st.integers(1, 120), st.integers(1, 15), st.integers(0, 400))
def test_a_formula_s_hover_stays_bounded_and_shows_the_head_of_what_eval_prints(
    tmp_path_factory: pytest.TempPathFactory, accelerators: int, points: int, claims: int
) -> None:
    kb = compile_kb(sized_base(tmp_path_factory.mktemp("kb"), accelerators, points, claims))
    assert codes(kb, ignore={"orphan", "measurement-disagrees"}) == []
    shown = hover_markdown(kb, "records/facts/f.yaml", 5, 5)
    assert shown is not None
    lines = shown.split("\n")
    assert len(lines) <= 2 * LIMIT.total + 10 and max(map(len, lines)) <= WIDTH  # whatever the base's size
    printed = eval_printed(kb)
    assert (len(rows(printed, EVALUATION)), len(rows(printed, MEASURED))) == (accelerators * points, claims)  # all
    head = first_on_each(rows(printed, EVALUATION), LIMIT.each)
    assert rows(lines, EVALUATION) == head[: LIMIT.total]
    cut = accelerators * points - len(head[: LIMIT.total])
    assert (f"  … {cut:,} more rows: flopkb eval facts/f" in lines) == (cut > 0)
    assert rows(lines, MEASURED) == rows(printed, MEASURED)[: LIMIT.total]
    more = claims - LIMIT.total
    assert (f"  … {more:,} more measurements: flopkb eval facts/f" in lines) == (more > 0)
    summary = [line for line in printed if line.startswith("  claims:") or line == "  no claims"]
    assert [line for line in lines if line in summary] == summary  # the claims' line counts them all

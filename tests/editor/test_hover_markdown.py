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

from flopkb.editor.hover import FIRST_LINES, LIMIT, entry_at, hover_markdown
from flopkb.formulas.eval_table import WIDTH, evaluate, render
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.report.cut import cut
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


def sized_base(root: Path, accelerators: int, points: int, claims: int, text: dict[str, int] | None = None) -> Path:
    """A formula swept over `points` on `accelerators`, with `claims` claims that name a measurement each; `text`:
    the length of the formula's title, of the first measurement's `where` and anchor (`sources/p0#m0...`), and of the
    basis of every spec (a vocabulary term), all short by default."""
    long = {"title": 5, "where": 5, "anchor": 0, "basis": 0, **(text or {})}
    basis = "derived".ljust(long["basis"], "d")
    files = {
        f"records/hw/a{i}.yaml": accelerator(f"hw/a{i}", memory_bandwidth=f"{i + 1} TB/s", basis=basis)
        for i in range(accelerators)
    }
    ids = ["m0".ljust(long["anchor"] - len("sources/p0#"), "x"), *(f"m{k}" for k in range(1, claims))]
    for source in range(0, claims, 1000):  # a thousand measurements a record: records are limited to a megabyte
        measurements = "".join(
            f"  - {{id: {ids[k]}, quantity: moved, value: '{k} TB', basis: measured, "
            f"where: '{'W' * long['where'] if k == 0 else f'Figure {k}'}'}}\n"
            for k in range(source, min(source + 1000, claims))
        )
        files[f"records/sources/p{source}.yaml"] = (
            f"id: sources/p{source}\nkind: source\ntitle: P\nmeasurements:\n{measurements}"
        )
    expect = "".join(
        f"      - {{measured: sources/p{k // 1000 * 1000}#{ids[k]}, where: {{t: 1 s}}, "
        f"hardware: hw/a{k % accelerators}}}\n"
        for k in range(claims)
    )
    sweep = ", ".join(f"{t} s" for t in range(1, points + 1))
    hardware = ", ".join(f"hw/a{i}" for i in range(accelerators))
    files["records/facts/f.yaml"] = (
        "id: facts/f\nkind: fact\nstatement: S.\nformulas:\n  - id: moved\n    expr: hw.memory_bandwidth * t\n"
        f"    unit: TB\n    inputs: {{t: [{sweep}]}}\n    hardware: [{hardware}]\n    title: '{'T' * long['title']}'\n"
        + (f"    expect:\n{expect}" if claims else "")
    )
    term = f"  ? {basis}\n  : {{description: The basis of every spec.}}\n"  # `?`: a key of any length
    vocabulary = VOCABULARY.replace("basis:\n", f"basis:\n{term}")
    return write_kb(root, files, vocabulary=VOCABULARY if basis == "derived" else vocabulary)


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


LENGTHS = st.sampled_from((5, WIDTH, WIDTH + 1, 20_000))
"""Lengths of a piece of record text: short, as long as a hover shows whole, one character longer, huge."""
TEXT_CUT = "  … text cut: flopkb eval facts/f prints it whole"
MORE_LINES = re.compile(r"  … [\d,]+ more lines: flopkb eval facts/f$")


def shown_head(shown: list[list[str]], head: list[list[str]], lines: list[str], whole: bool) -> bool:
    """Whether the rows a hover shows are the head of `head`: word for word when no text is cut (`whole`), else by
    their first two words (a cut cell is laid out otherwise) and fewer only when the hover says how many more lines
    `flopkb eval` prints."""
    if whole:
        return shown == head
    fewer = len(shown) < len(head) and any(MORE_LINES.match(line) for line in lines)
    return [row[:2] for row in shown] == [row[:2] for row in head[: len(shown)]] and (len(shown) == len(head) or fewer)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(accelerators=300, points=2, claims=12_000, text={})
@example(accelerators=3, points=25, claims=0, text={})
@example(accelerators=70, points=1, claims=70, text={"title": 200_000, "where": 20_000, "anchor": 400, "basis": 300})
@given(
    st.integers(1, 120),
    st.integers(1, 15),
    st.integers(0, 400),
    st.fixed_dictionaries({}, optional={key: LENGTHS for key in ("title", "where", "anchor", "basis")}),
)
def test_a_formula_s_hover_stays_bounded_and_shows_the_head_of_what_eval_prints(
    tmp_path_factory: pytest.TempPathFactory, accelerators: int, points: int, claims: int, text: dict[str, int]
) -> None:
    kb = compile_kb(sized_base(tmp_path_factory.mktemp("kb"), accelerators, points, claims, text))
    assert codes(kb, ignore={"orphan", "measurement-disagrees"}) == []
    shown = hover_markdown(kb, "records/facts/f.yaml", 5, 5)
    assert shown is not None
    lines = shown.split("\n")
    # whatever the base's size and the length of its text: LIMIT's lines in a code block, none wider than `eval`'s
    assert len(lines) <= LIMIT.lines + 2 and max(map(len, lines)) <= WIDTH
    assert len(shown) <= (LIMIT.lines + 2) * (WIDTH + 1)
    printed = eval_printed(kb)
    assert (len(rows(printed, EVALUATION)), len(rows(printed, MEASURED))) == (accelerators * points, claims)  # all
    title = "T" * text.get("title", 5)
    assert title in "".join(line.strip() for line in printed)  # `flopkb eval` prints the text whole
    any_cut = any(length > WIDTH for length in text.values())
    # a cut title's marker (`… (199,907 more characters)`) may wrap at its spaces, as words of a table's cell do
    assert cut(title, WIDTH) in " ".join(shown.split()) and (title in shown) == (len(title) <= WIDTH)
    announced = TEXT_CUT in lines or any(MORE_LINES.match(line) for line in lines)  # the text cut, or what follows
    assert (TEXT_CUT in lines) <= any_cut and announced >= any_cut
    whole = not any(length > 5 for length in text.values())
    head = first_on_each(rows(printed, EVALUATION), LIMIT.each)
    assert shown_head(rows(lines, EVALUATION), head[: LIMIT.total], lines, whole)
    more = accelerators * points - len(head[: LIMIT.total])
    assert (f"  … {more:,} more rows: flopkb eval facts/f" in lines) == (more > 0) or not whole
    assert shown_head(rows(lines, MEASURED), rows(printed, MEASURED)[: LIMIT.total], lines, whole)
    more = claims - LIMIT.total
    assert (f"  … {more:,} more measurements: flopkb eval facts/f" in lines) == (more > 0) or not whole
    summary = [line for line in printed if line.startswith("  claims:") or line == "  no claims"]
    # the claims' line counts them all; rows of cut text take a line more (the cut's marker wraps at its spaces), and
    # 60 such rows may push it past the hover's lines, which then say how many more `flopkb eval` prints
    pushed = not whole and any(MORE_LINES.match(line) for line in lines)
    assert [line for line in lines if line in summary] == summary or pushed


HUGE = 100_000
"""A piece of record text no hover shows whole: a tenth of the megabyte a record may have."""


def bounded(shown: str, lines: int) -> bool:
    """Whether a hover is at most `lines` lines, of at most twice `LIMIT.width` characters (a cut piece escaped)."""
    return shown.count("\n") < lines and len(shown) <= lines * 2 * LIMIT.width


def test_a_formula_s_hover_cuts_huge_text_and_says_where_the_rest_is(tmp_path: Path) -> None:
    text = {"title": 2 * HUGE, "where": HUGE, "anchor": HUGE, "basis": 1000}
    kb = compile_kb(sized_base(tmp_path, 70, 1, 70, text))
    shown = hover_markdown(kb, "records/facts/f.yaml", 5, 5)
    assert shown is not None and bounded(shown, LIMIT.lines + 2)
    lines = shown.split("\n")
    assert cut("T" * 2 * HUGE, WIDTH) == "T" * (WIDTH - 27) + "… (199,907 more characters)"  # as a message cuts it
    assert cut("T" * 2 * HUGE, WIDTH) in " ".join(shown.split())  # its marker may wrap at its spaces
    assert any(MORE_LINES.match(line) for line in lines)  # the cut rows, and the text cut
    title_only = compile_kb(sized_base(tmp_path / "title", 3, 1, 0, {"title": 2 * HUGE}))
    shown = hover_markdown(title_only, "records/facts/f.yaml", 5, 5)
    assert shown is not None and bounded(shown, 12) and TEXT_CUT in shown.split("\n")


def test_a_link_s_hover_cuts_a_huge_title_and_first_lines_and_says_which_file_has_them(tmp_path: Path) -> None:
    statement = "".join(f"  {'D' * HUGE}\n" for _ in range(FIRST_LINES + 1))
    title, x = "T" * 2 * HUGE, "x" * HUGE
    files = {
        "records/facts/target.yaml": f"id: facts/target\nkind: fact\ntitle: {title}\nstatement: |\n{statement}",
        "records/facts/from.yaml": f"id: facts/from\nkind: fact\nstatement: See [[facts/target]] and [[{x}]].\n",
    }
    kb = compile_kb(write_kb(tmp_path, files))
    shown = hover_markdown(kb, "records/facts/from.yaml", 3, 18)
    assert shown is not None and bounded(shown, 12)
    assert shown.split("\n")[1:] == [
        f"*{'T' * 93}… (199,907 more characters)*",  # cut at WIDTH characters, as a message quotes it
        "evidence: no-sources",
        "",
        *[f"{'D' * 93}… (99,907 more characters)"] * FIRST_LINES,
        "",
        "… the rest is in records/facts/target.yaml",
    ]
    unresolved = hover_markdown(kb, "records/facts/from.yaml", 3, 40)
    assert unresolved == f"\\[\\[{'x' * 91}… (99,911 more characters) resolves to no single record"  # as written


def test_a_parameter_s_hover_shows_the_first_accelerators_cut_and_how_many_more(tmp_path: Path) -> None:
    count = LIMIT.total + 5
    files = {
        f"records/hw/a{i:03}.yaml": accelerator(f"hw/a{i:03}", memory_bandwidth=f"{i + 1} TB/s") for i in range(count)
    }
    vocabulary = VOCABULARY.replace("Peak memory bandwidth.", "P" * HUGE)
    kb = compile_kb(write_kb(tmp_path, files, vocabulary=vocabulary))
    shown = hover_markdown(kb, "records/hw/a000.yaml", 5, 3)
    assert shown is not None and bounded(shown, LIMIT.total + 3)
    lines = shown.split("\n")
    assert lines[0] == f"**hw.memory\\_bandwidth** · byte/s: {'P' * 93}… (99,907 more characters)"
    assert lines[2:4] == ["- hw/a000: 1 TB/s (derived)", "- hw/a001: 2 TB/s (derived)"]
    assert lines[-1] == "- … 5 more accelerators: the site's accelerators/compare.html has them all"
    assert len(lines) == 2 + LIMIT.total + 1

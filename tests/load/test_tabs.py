"""Tabs that start lines hide nothing (docs/authoring.md, docs/cli.md): a file that parses only with those tabs
replaced (`flopkb.load.tabs`, the replacement `flopkb fmt` makes) is read from the replaced text, its tab reported,
and every other problem of its record reported too, at its place in the file as it is."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flopkb.editor.related import related_places
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.source import parse
from flopkb.load.tabs import Untabbing, replace_line_start_tabs, tab_message
from kbfixture import compile_kb, compile_warm, located, write_kb
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

DILUTION = "records/flops/sd-batch-dilution-problem.yaml"

Tabbing = dict[str, dict[int, int]]
"""The lines of each tabbed file (root-relative path) that start with tabs: how many, by 1-based line."""
Place = tuple[str, int, int, str]
Seen = tuple[str, int, int, str, str, str | None, str, tuple[Place, ...]]
"""A diagnostic as compared: path, line, column, code, message, hint, severity, its related places."""


@dataclass(repr=False)
class Base:
    root: Path
    texts: dict[str, str]
    indented: dict[str, list[tuple[int, int]]]
    """Each file's lines that start with two-space units: (1-based line, how many units)."""
    seen: list[Seen]
    """What a check of the base as it is reports."""
    busy: dict[str, list[tuple[int, int]]]
    """The indented lines on which the check reports something (a diagnostic or a related place), by file."""

    def __repr__(self) -> str:
        return f"Base({self.root.name})"


def _seen(root: Path) -> list[Seen]:
    kb = compile_kb(root)
    return sorted(
        (d.path, d.line, d.column, d.code, d.message, d.hint, str(d.severity), tuple(related_places(kb, d)))
        for d in kb.diagnostics
    )


def _base(root: Path) -> Base:
    texts = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((root / "records").rglob("*.yaml"))
    }
    indented: dict[str, list[tuple[int, int]]] = {}
    for rel, text in texts.items():
        for number, line in enumerate(text.split("\n"), 1):
            units = (len(line) - len(line.lstrip(" "))) // 2
            if units and line.strip():
                indented.setdefault(rel, []).append((number, units))
    seen = _seen(root)
    places = {(path, line) for path, line, *_ in seen} | {
        (path, line) for *_, related in seen for path, line, _, _ in related
    }
    busy: dict[str, list[tuple[int, int]]] = {}
    for rel, lines in indented.items():
        for line, units in lines:
            if (rel, line) in places:
                busy.setdefault(rel, []).append((line, units))
    return Base(root, texts, indented, seen, busy)


@pytest.fixture(scope="module", params=["project", "generated"])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Base:
    root = tmp_path_factory.mktemp(str(request.param))
    if request.param == "project":
        for folder in ("records", "schema"):
            shutil.copytree(REPO / folder, root / folder)
    else:
        generate(root, 24, seed=11)
    return _base(root)


def _tabbed(text: str, lines: dict[int, int]) -> str:
    """`text` with the first `lines[n]` two-space units of each line n replaced by as many tabs."""
    split = text.split("\n")
    for number, tabs in lines.items():
        split[number - 1] = "\t" * tabs + split[number - 1][2 * tabs :]
    return "\n".join(split)


@st.composite
def tabbings(draw: st.DrawFn, base: Base) -> Tabbing:
    """Tabs at the start of random lines of random files, the lines on which something is reported drawn often."""
    files = st.sampled_from(sorted(base.indented))
    if base.busy:
        files = st.sampled_from(sorted(base.busy)) | files
    tabbing: Tabbing = {}
    for rel in draw(st.lists(files, min_size=1, max_size=3, unique=True)):
        lines = st.sampled_from(base.indented[rel])
        if rel in base.busy:
            lines = st.sampled_from(base.busy[rel]) | lines
        chosen = draw(st.lists(lines, min_size=1, max_size=4, unique=True))
        tabbing[rel] = {line: draw(st.integers(1, units)) for line, units in chosen}
    return tabbing


def _tabbed_check(base: Base, tabbing: Tabbing) -> list[Seen]:
    """What a check reports with the files of `tabbing` tabbed as it says, each then put back as it was."""
    try:
        for rel, lines in tabbing.items():
            tabbed = _tabbed(base.texts[rel], lines)
            assert replace_line_start_tabs(tabbed) == base.texts[rel]  # the same data: only the indentation differs
            (base.root / rel).write_text(tabbed, encoding="utf-8", newline="")
        return _seen(base.root)
    finally:
        for rel in tabbing:
            (base.root / rel).write_text(base.texts[rel], encoding="utf-8", newline="")


def _moved(place: tuple[str, int, int], tabbing: Tabbing) -> tuple[str, int, int]:
    path, line, column = place
    return path, line, column - tabbing.get(path, {}).get(line, 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tabs_that_start_lines_hide_nothing_and_move_every_place_by_their_count(
    base: Base, data: st.DataObject
) -> None:
    """The rule: put tabs in place of the two-space units that start some lines of some files (so that replacing
    them gives each file back, and its data is the same). Then the check reports what it reported of the base as it
    was, each diagnostic and each of its related places that stands on a line now starting with n tabs moved n
    columns left (the place of the same character in the file as it is), and nothing else, but for one `yaml-syntax`
    error for each tabbed file that libyaml does not read as it is: at the start of one of its tabbed lines, with the
    hint that `flopkb fmt` fixes it."""
    tabbing = data.draw(tabbings(base), label="tabbing")
    seen = _tabbed_check(base, tabbing)
    tab_errors = [entry for entry in seen if entry[3] == "yaml-syntax" and entry[0] in tabbing]
    for rel, lines in tabbing.items():
        errors = [entry for entry in tab_errors if entry[0] == rel]
        assert len(errors) == _refused_as_it_is(_tabbed(base.texts[rel], lines)), (rel, errors)
        for _, line, column, _, message, hint, _, related in errors:
            assert line in lines and column == 1
            assert (message, hint) == tab_message(line, 1, fmt_fixes=True)
            assert related == ()
    expected = sorted(
        (
            *_moved((path, line, column), tabbing),
            code,
            message,
            hint,
            severity,
            tuple((*_moved((where, at, column), tabbing), what) for where, at, column, what in related),
        )
        for path, line, column, code, message, hint, severity, related in base.seen
    )
    assert [entry for entry in seen if entry not in tab_errors] == expected


def _refused_as_it_is(text: str) -> int:
    """1 when libyaml does not read `text` (a tab before the continuation of a top-level plain scalar is whitespace
    YAML allows: such a file is read as it is); else 0."""
    try:
        yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return 1
    return 0


# The author's view: one run, every problem


def test_a_tab_and_a_misspelt_category_are_both_reported_and_links_to_the_record_resolve(tmp_path: Path) -> None:
    for folder in ("records", "schema"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    text = (REPO / DILUTION).read_text(encoding="utf-8")
    line = text[: text.index("  - factor: batch_size")].count("\n") + 1
    category = text[: text.index("category: arithmetic-intensity")].count("\n") + 1
    broken = text.replace("  - factor: batch_size", "\t- factor: batch_size", 1).replace(
        "category: arithmetic-intensity", "category: arithmetic-intensty"
    )
    (tmp_path / DILUTION).write_text(broken, encoding="utf-8")
    kb = compile_kb(tmp_path)
    found = [(d.code, d.line, d.column) for d in kb.diagnostics if d.path == DILUTION]
    assert ("yaml-syntax", line, 1) in found
    assert ("unknown-term", category, 11) in found
    assert not [d for d in kb.diagnostics if d.code == "dangling-link"]
    assert kb.entries["flops/sd-batch-dilution-problem"].source.text == broken  # type: ignore[union-attr]


def test_a_tabbed_record_from_the_load_cache_is_at_the_same_places(tmp_path: Path) -> None:
    """An unchanged file's source in a warm run is deferred: whether its data came from the replaced text is found
    out from its text, and its positions are the cold run's."""
    ridge = "id: facts/ridge\nkind: fact\nstatement: |\n\tSee [[nowhere]] and [[flops/user]].\nformulas:\n\t- id: r\n"
    user = "id: flops/user\nkind: flop\ncategory: memory-bandwidth\ndescription: See [[facts/ridge]].\n"
    write_kb(tmp_path, {"records/facts/ridge.yaml": ridge + '\t  expr: "1"\n', "records/flops/user.yaml": user})

    def view(kb: KnowledgeBase) -> tuple[list[tuple[str, str, int, int]], list[tuple[str, tuple[int, int]]]]:
        return located(kb), [(link.target, link.position) for link in kb.links_of("facts/ridge")]

    cold = compile_warm(tmp_path)
    warm = compile_warm(tmp_path)
    source = warm.entries["facts/ridge"].source
    assert source is not None and source._later is not None  # deferred: not parsed in this run
    assert view(warm) == view(cold)
    assert view(cold) == (
        [("yaml-syntax", "records/facts/ridge.yaml", 4, 1), ("dangling-link", "records/facts/ridge.yaml", 4, 6)],
        [("nowhere", (4, 6)), ("flops/user", (4, 22))],
    )
    assert source.untabbed and source.position(("formulas", 0, "expr")) == (7, 10)


def test_a_file_whose_replaced_text_does_not_parse_either_is_no_record() -> None:
    text = "id: flops/x\nkind: flop\n\tcategory: memory-bandwidth\n"  # one level of spaces would not parse either
    source, problems = parse(text, "records/flops/x.yaml")
    assert source is None
    assert [(p.code, p.line, p.column, p.hint) for p in problems] == [
        ("yaml-syntax", 3, 1, "replace the tab with spaces")
    ]


def test_a_tab_after_spaces_is_reported_as_before_and_makes_no_record() -> None:
    text = "id: flops/x\nkind: flop\nscales_with:\n  - factor: batch_size\n  \teffect: grows\n"
    source, problems = parse(text, "records/flops/x.yaml")
    assert source is None
    assert [(p.code, p.line, p.column) for p in problems] == [("yaml-syntax", 5, 3)]


def test_a_repeated_key_on_a_tabbed_line_is_reported_where_it_stands() -> None:
    text = "id: flops/x\nkind: flop\nscales_with:\n\t- factor: a\n\t  factor: b\n"
    source, problems = parse(text, "records/flops/x.yaml")
    assert source is not None and source.untabbed and source.text == text
    assert [(p.code, p.line, p.column) for p in problems] == [("yaml-syntax", 4, 1), ("duplicate-key", 5, 4)]
    assert source.position(("scales_with", 0, "factor")) == (4, 12)
    span = source.span(("scales_with", 0, "factor"))
    assert span is not None and text[span.start : span.end] == "a"


@given(st.lists(st.sampled_from(["a: 1", "\tb: [x]", "\t\t- c", "  d", "\t  e", ""]), max_size=8))
@example(["\t\tx"])
def test_every_offset_of_the_replaced_text_maps_to_the_same_character_or_the_tab_it_replaced(lines: list[str]) -> None:
    text = "\n".join(lines)
    replaced = replace_line_start_tabs(text)
    untabbing = Untabbing(text)
    at = [untabbing.original(index) for index in range(len(replaced) + 1)]
    assert at == sorted(at) and at[-1] == len(text)
    for index, character in enumerate(replaced):
        original = text[at[index]]
        assert original == character or (character == " " and original == "\t")

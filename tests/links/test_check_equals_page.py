"""What `check` reports is what the reader sees, end to end: a record's markdown field, compiled by the real
checker and rendered by the real page renderer (`Page.prose`: the wikilink callbacks and the sanitiser).

The markdown is generated from the constructs that decide what is a link (`prose_markdown`). The links the
check finds in the field (resolved or dangling, `dangling-link` turned down to a warning as a site build
needs) must be the wikilinks of the page, in order; the text around them must render as it would with no
link there; and each reported link and `ambiguous-emphasis` must stand at its `[[` or `*` in the file, in
every YAML scalar style.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import PROSE, Link
from flopkb.links.prose import NESTED, UNRESOLVED
from flopkb.site.pages.common import Page, Site, environment, record_path, template_dirs
from kbfixture import compile_kb, write_kb
from prose_markdown import inside_a, markdown, texts

RECORD = "flops/x"
FACTS = {name: f"id: facts/{name}\nkind: fact\ntitle: Fact {name.upper()}\nstatement: A fact.\n" for name in "abcde"}
CONFIG = '[tool.flopkb.severity]\ndangling-link = "warning"\norphan = "off"\n'


def record(description: str) -> str:
    return f"id: {RECORD}\nkind: flop\ncategory: memory-bandwidth\ndescription: {description}"


_FOLDERS: list[Path] = []


@pytest.fixture(autouse=True, scope="module")
def _bases_folder() -> Iterator[None]:
    """One folder for the module's bases (hypothesis makes hundreds, too many to leave in the system's temp)."""
    with tempfile.TemporaryDirectory(prefix="flopkb-prose-") as folder:
        _FOLDERS.append(Path(folder))
        yield
        _FOLDERS.pop()


def compiled(description: str) -> tuple[KnowledgeBase, Path]:
    root = Path(tempfile.mkdtemp(dir=_FOLDERS[-1]))
    files = {f"records/facts/{name}.yaml": text for name, text in FACTS.items()}
    write_kb(root, {"pyproject.toml": CONFIG, **files, "records/flops/x.yaml": record(description)})
    return compile_kb(root), root


def page_html(kb: KnowledgeBase, root: Path, text: str) -> str:
    site = Site(kb, root / "docs", environment(template_dirs(root)))
    try:
        return str(Page(site, record_path(RECORD)).prose(text))
    finally:
        site.close()


_UNRESOLVED = re.escape(UNRESOLVED).replace(r"\{\}", "([^<]*)")
_NESTED = re.escape(NESTED).replace(r"\{\}", "([^<]*)")
# A wikilink of the page: a link to a record page (markdown links in the generated text lead elsewhere: `u`, `/u`),
# an unresolved one, or one in a markdown link's text, shown as its label there.
_WIKI = re.compile(
    r'<a href="(\.\./)*records/facts/[a-e]\.html(#[^"]*)?" rel="noopener noreferrer">([^<]*)</a>|'
    + _UNRESOLVED
    + "|"
    + _NESTED
)

_E2E = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))


# The cases where the checker and a reader once disagreed (docs/links.md): `\|` as Obsidian writes it, in and out
# of a table; a wikilink in a markdown link's text and in an image's alt text; an unescaped `|` in a table.
READER_CASES = [
    "See [[a\\|the fact]].",
    "| fact |\n| --- |\n| [[a\\|the fact]] |",
    "[see [[a]]](https://x.y/u) and [[[b|B]]](u)",
    "![chart of [[c]]](u)",
    "| fact | note |\n| --- | --- |\n| [[a|the fact]] | [[zz#f|gone]] x |",
]


@_E2E
@given(texts)
@example(READER_CASES[0])
@example(READER_CASES[1])
@example(READER_CASES[2])
@example(READER_CASES[3])
@example(READER_CASES[4])
def test_the_links_check_reports_are_the_links_of_the_page_and_the_text_around_them_is_unchanged(text: str) -> None:
    dumped = yaml.safe_dump({"description": text}, allow_unicode=True, width=10**6)
    assume(yaml.safe_load(dumped) == {"description": text})
    kb, root = compiled(dumped.removeprefix("description: "))
    entry = kb.entries[RECORD]
    assume(entry.record is not None and entry.record.description == text)
    reported = [link for link in kb.links.get(RECORD, []) if link.origin == PROSE]
    dangling = [d for d in kb.diagnostics if d.code == "dangling-link"]
    assert [d.message for d in dangling] == [
        f"{link.text} resolves to no record" for link in reported if link.resolved is None
    ]

    page = page_html(kb, root, text)
    shown = list(_WIKI.finditer(page))
    assert [match.group(4) is None for match in shown] == [link.resolved is not None for link in reported]
    titles = {f"facts/{name}": f"Fact {name.upper()}" for name in FACTS}
    assert [match.group(3) or match.group(4) or match.group(5) for match in shown] == [
        _escaped(link.label or titles.get(link.resolved or "") or _written(link)) for link in reported
    ]

    # Each link replaced by a neutral atom renders the same page around it (see tests/links/test_prose.py); in a
    # markdown link's text, an atom without the `]` that would end that text.
    pieces, shown_as, pos = [], [], 0
    for index, (link, match) in enumerate(zip(reported, shown, strict=True)):
        pipes = re.findall(r"\\\|", link.text)  # a wikilink's unescaped pipes end no table cell
        end = " ,," if match.group(5) is not None or inside_a(page, match.start()) else " ],"
        pieces += [text[pos : link.offset], f",Z{index}" + "".join(" " + pipe for pipe in pipes) + end]
        shown_as.append(f",Z{index}" + " |" * len(pipes) + end)
        pos = link.end
    replaced = iter(shown_as)
    assert _WIKI.sub(lambda match: next(replaced), page) == page_html(kb, root, "".join(pieces) + text[pos:])


def _written(link: Link) -> str:
    return link.target + (f"#{link.anchor}" if link.anchor else "")


def _escaped(label: str) -> str:
    return label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------
# Positions in every scalar style


def _block(text: str, indicator: str) -> str:
    lines = text.split("\n")
    return f"{indicator}2-\n" + "".join(f"  {line}\n" if line else "\n" for line in lines)


def _flow(text: str, quote: str) -> str:
    lines = text.split("\n")
    if quote == '"':
        lines = [line.replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    elif quote == "'":
        lines = [line.replace("'", "''") for line in lines]
    return quote + "\n  ".join(lines) + quote + "\n"


STYLES = {
    "plain": lambda text: _flow(text, ""),
    "single": lambda text: _flow(text, "'"),
    "double": lambda text: _flow(text, '"'),
    "literal": lambda text: _block(text, "|"),
    "folded": lambda text: _block(text, ">"),
}

_POSITIONS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
# Block scalars hold no tabs or carriage returns as markdown needs them; quoted ones lose a line's leading blanks.
_block_markdown = markdown.map(lambda text: text.replace("\r\n", "\n").replace("\t", "    "))


@_POSITIONS
@given(_block_markdown, st.sampled_from(sorted(STYLES)))
def test_every_reported_link_and_star_stands_at_its_brackets_in_the_file(text: str, style: str) -> None:
    scalar = STYLES[style](text)
    try:
        value = yaml.safe_load("description: " + scalar)["description"]
    except yaml.YAMLError:
        value = None
    assume(isinstance(value, str) and ("[[" in value or "*" in value))
    kb, root = compiled(scalar)
    assume(kb.entries[RECORD].record is not None)
    lines = (root / "records/flops/x.yaml").read_text(encoding="utf-8").split("\n")

    def at(line: int, column: int) -> str:
        return lines[line - 1][column - 1 :]

    links = [link for link in kb.links.get(RECORD, []) if link.origin == PROSE]
    for link in links:
        assert at(*link.position).startswith("[["), (link, link.position)
    for diagnostic in kb.diagnostics:
        if diagnostic.code in ("dangling-link", "ambiguous-emphasis"):
            assert at(diagnostic.line, diagnostic.column)[:1] == ("[" if diagnostic.code == "dangling-link" else "*")
    assert [link.position for link in links] == sorted(link.position for link in links)


@pytest.mark.parametrize(
    ("text", "reader_sees"),
    [
        (READER_CASES[0], ['<a href="../../records/facts/a.html" rel="noopener noreferrer">the fact</a>']),
        (READER_CASES[1], ['<td><a href="../../records/facts/a.html" rel="noopener noreferrer">the fact</a></td>']),
        (
            READER_CASES[2],
            [
                '<a href="https://x.y/u" rel="noopener noreferrer">see '
                '<span class="flopkb-nested-link">Fact A</span></a>',
                '<a href="u" rel="noopener noreferrer"><span class="flopkb-nested-link">B</span></a>',
            ],
        ),
        (
            READER_CASES[3],
            ['!<a href="u" rel="noopener noreferrer">chart of <span class="flopkb-nested-link">Fact C</span>'],
        ),
        (
            READER_CASES[4],
            [
                '<td><a href="../../records/facts/a.html" rel="noopener noreferrer">the fact</a></td>',
                '<td><span class="flopkb-unresolved" title="this link resolves to no record">gone</span> x</td>',
            ],
        ),
    ],
)
def test_the_page_shows_what_a_reader_expects_and_check_reports_each_link(text: str, reader_sees: list[str]) -> None:
    kb, root = compiled(yaml.safe_dump({"description": text}, width=10**6).removeprefix("description: "))
    page = page_html(kb, root, text)
    for shown in reader_sees:
        assert shown in page
    assert "[[" not in page
    reported = [link.text for link in kb.links.get(RECORD, []) if link.origin == PROSE]
    assert reported == re.findall(r"\[\[(?!\[).*?\]\]", text)

"""The pages flopkb builds without python-markdown (`flopkb.site.incremental.prerendered`) are the pages python-markdown
builds.

Whole sites: the project's, the hostile base's and a generated base's, each built by `flopkb build` (fast path
on) and again by mkdocs alone from the kept `build/site-mkdocs.yml` (`mkdocs build -f`, every page through
python-markdown), are the same file for file and byte for byte. Pages: for every heading and page form the
renderer writes, with hostile text, the fast path's HTML, table of contents, title and anchors are
python-markdown's; and for any text at all, the fast path either converts it exactly so or leaves it to
python-markdown.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import markdown
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from markupsafe import escape
from mkdocs.commands.build import build as mkdocs_build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from flopkb.site.incremental.prerendered import Heading, PageForm, page_form, render_prerendered, split_page
from flopkb.site.pages.common import breakable, heading_id, json_for_script
from flopkb.site.publishing.mkdocs import mkdocs_config, trusted_settings, write_config
from flopkb.site.publishing.notfound import relative_404
from flopkb.site.publishing.publish import MARKER
from flopkb.site.sanitize import markdown_text, prose_html
from repo import REPO
from site_fixtures import EPOCH, BuiltSite, build_base

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

SLOW_PAGES = {"codes.md"}
"""Pages not in flopkb's form, converted by python-markdown in every build: the diagnostic codes (markdown tables)."""


# ---------------------------------------------------------------------------
# Whole sites


def python_markdown_site(built: BuiltSite, out: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`mkdocs build -f build/site-mkdocs.yml` into `out`, with flopkb's settings marked and its 404.html rewritten
    (as its build does)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    kept = built.site.with_name(built.site.name + "-mkdocs.yml")
    config = load_config(config_file=str(kept), site_dir=str(out))
    trusted_settings(config)
    mkdocs_build(config)
    if not config.site_url:
        relative_404(out)
    return out


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).parts[0] not in ("pagefind", MARKER)  # flopkb's, not mkdocs'
    }


@pytest.fixture(scope="module")
def generated_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    root = tmp_path_factory.mktemp("generated") / "kb"
    generate(root, 120)
    return build_base(root)


@pytest.mark.parametrize("which", ["project_site", "hostile_site", "generated_site"])
def test_the_site_is_the_one_python_markdown_builds(
    which: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: BuiltSite = request.getfixturevalue(which)
    outcome = built.outcome
    assert outcome.prerendered == outcome.built - len(SLOW_PAGES), "every page but the codes skips python-markdown"
    fast = files_of(built.site)
    slow = files_of(python_markdown_site(built, tmp_path / "slow", monkeypatch))
    assert fast.keys() == slow.keys()
    different = [rel for rel in fast if fast[rel] != slow[rel]]
    assert not different, different[:10]
    assert sum(rel.endswith(".html") for rel in fast) >= outcome.pages


# ---------------------------------------------------------------------------
# Pages: the fast path against python-markdown, as mkdocs runs it


@pytest.fixture(scope="module")
def mkdocs_setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[MkDocsConfig, Files, PageForm]:
    folder = tmp_path_factory.mktemp("pages")
    (folder / "docs").mkdir()
    (folder / "docs" / "page.md").write_text("# x\n", encoding="utf-8")
    path = write_config(mkdocs_config(docs_dir=folder / "docs", site_dir=folder / "site", nav=[]), folder / "m.yml")
    config = load_config(config_file=str(path))
    files = Files([File("page.md", config.docs_dir, config.site_dir, use_directory_urls=False)])
    md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs or {})
    form = page_form(md)
    assert form is not None
    return config, files, form


def toc_of(items: Any) -> list[Any]:
    return [(item.title, item.id, item.level, toc_of(item.children)) for item in items]


_ESCAPED = re.compile("\x02([0-9]+)\x03")


def state(page: Page) -> tuple[Any, ...]:
    links = {file.src_uri: anchors for file, anchors in (page.links_to_anchors or {}).items()}
    # mkdocs collects a page's ids before python-markdown unescapes them: an id written `a\_` is kept as
    # "a\x0295\x03", though the page's HTML says id="a_". Only mkdocs' check of `.md#anchor` links reads them
    # (flopkb writes none); compared as the HTML has them.
    anchors = {
        _ESCAPED.sub(lambda found: chr(int(found[1])), anchor) if isinstance(anchor, str) else anchor
        for anchor in page.present_anchor_ids or ()
    }
    return page.content, toc_of(page.toc), page._title_from_render, anchors, links


def both_ways(setup: tuple[MkDocsConfig, Files, PageForm], text: str) -> tuple[tuple[Any, ...], tuple[Any, ...] | None]:
    """(python-markdown's page, the fast path's, or None when it leaves the page to python-markdown)."""
    config, files, form = setup
    file = files.get_file_from_path("page.md")
    assert file is not None
    slow, fast = Page(None, file, config), Page(None, file, config)
    slow.markdown = fast.markdown = text
    Page.render(slow, config, files)
    return state(slow), state(fast) if render_prerendered(fast, form) else None


# Text that tries to be markup: markdown punctuation, HTML, attribute lists, references, unicode and blanks.
HOSTILE = st.text(
    st.sampled_from(list("*_[]<>&`#{}:!|\\$~-=+.()\"'/;% aZ09é日\u00a0\u2028\u200b\x85\t\n")) | st.characters(),
    max_size=30,
)
RECORD_TEXT = st.text(
    st.sampled_from(list("*_[]<>&`#{}:!|\\$~-=+.()\"'/;% aZ09é日\u00a0\u2028\u200b\x85"))
    | st.characters(blacklist_categories=("Cc", "Cs")),
    max_size=30,
)
"""Text a record can hold (YAML allows no control character but blanks)."""
ONE_LINE = RECORD_TEXT.map(lambda text: " ".join(text.split()))
"""What flopkb writes on one line (a title, a cell, an attribute): its blanks collapsed."""


def heading(level: int, text: str, anchor: str | None) -> str:
    return "#" * level + " " + markdown_text(text) + (" " + str(heading_id(anchor)) if anchor is not None else "")


FORMULA_IDS = st.from_regex(r"[a-z][a-z0-9_-]*", fullmatch=True)
"""A formula id (`flop.schema.json`): the id of its heading."""
ANY_HEADING = st.builds(
    heading, st.integers(1, 6), ONE_LINE.filter(bool), st.none() | ONE_LINE.filter(bool) | FORMULA_IDS
)
"""A heading's text and id as the templates write them (`md`, `heading_id`; an id is never empty)."""


BLOCKS: list[Callable[[str], str]] = [
    lambda text: f'<p class="flopkb-lede">{escape(text)}</p>',
    lambda text: (
        f'<div class="flopkb-meta">\n<code class="flopkb-id" title="{escape(text)}">{breakable(text)}</code>\n</div>'
    ),
    lambda text: (
        "<table>\n<thead><tr><th>a</th></tr></thead>\n<tbody>\n"
        f'<tr id="{escape(text)}"><td>{escape(text)}<br>x<wbr>y</td></tr>\n</tbody>\n</table>'
    ),
    lambda text: (
        f'<details class="flopkb-backlinks"><summary>{escape(text)}</summary>\n<ul>\n'
        f'<li><a href="x.html#{escape(text)}">{escape(text)}</a></li>\n</ul>\n</details>'
    ),
    lambda text: f'<script type="application/json" id="flopkb-neighbourhood">{json_for_script([text])}</script>',
    lambda text: (
        f'<figure class="flopkb-chart">\n<img src="c.svg" alt="{escape(text)}" width="1" height="2" loading="lazy">'
        f"\n<figcaption>{escape(text)}</figcaption>\n</figure>"
    ),
    lambda text: f"<div data-search-exclude>\n<div><div>{escape(text)}</div></div>\n<hr>\n<p>{escape(text)}\n</div>",
    lambda text: f'<div class="admonition warning" id="{escape(text)}">\n<a name="{escape(text)}"></a>\n</div>',
    lambda text: f'<div class="flopkb-prose">\n{prose_html(text, lambda target, anchor: None)}\n</div>',
]


def block(kind: int, text: str) -> str:
    return BLOCKS[kind](text)


def page_of(parts: list[str], gaps: list[str]) -> str:
    return "".join(part + gap for part, gap in zip(parts, gaps, strict=False)) + parts[-1] + "\n"


@st.composite
def flopkb_pages(draw: st.DrawFn, text: st.SearchStrategy[str], headings: st.SearchStrategy[str] = ANY_HEADING) -> str:
    """A page as flopkb's templates write one: headings and blocks, a blank line between them or not."""
    blocks = st.builds(block, st.integers(0, len(BLOCKS) - 1), text)
    parts = draw(st.lists(headings | blocks, min_size=1, max_size=8))
    gaps = draw(st.lists(st.sampled_from(["\n\n", "\n", "\n\n\n"]), min_size=len(parts), max_size=len(parts)))
    return page_of(parts, gaps)


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(page=flopkb_pages(ONE_LINE))
@example(page="# &#95;\n\n# 0 {: #\\_ }\n\n# 0 {: #\\_ }\n")  # an escaped id does not take a heading's slug
def test_every_page_form_flopkb_writes_skips_python_markdown_and_is_the_same(
    mkdocs_setup: tuple[MkDocsConfig, Files, PageForm], page: str
) -> None:
    slow, fast = both_ways(mkdocs_setup, page)
    assert fast is not None, page
    assert fast == slow


# fmt: off
FRAGMENTS = st.sampled_from(
    [
        "<div>", "</div>", "<DIV>", "</Div>", "<p>", "</p>", "<span>", "</span>", "<script>", "</script>",
        "<style>", "<br>", "<br/>", "<hr>", "<hr/>", "<img src=x>", '<a name="n">', "</a>", '<div id="i">',
        "<div id>", "<details>", "<summary>", "</details>", "<pre>", "</pre>", "<!-- c -->", "<!x>", "<?x?>",
        "</>", "< div>", "\n", "\n\n", "  ", "    ", "\t", "\r", "# ", "## ", "####### ", "{: #a }", "{:#a}",
        " #", "[TOC]", "* ", "1. ", "> ", "!!! note", "??? x", "```", "~~~", ": ", "|a|b|\n|-|-|", "$$x$$",
        "&amp;", "&#35;", "&#35", "&#x4A;", "&bogus", "\x02", "\x03", "é", "x", "Notes", "<td>", "</tr>",
    ]
)
# fmt: on


@st.composite
def mutated_pages(draw: st.DrawFn) -> str:
    """A page in flopkb's form with a few fragments of markup put anywhere in it: close to the form's edge."""
    page = draw(flopkb_pages(ONE_LINE))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(page)))
        page = page[:at] + draw(FRAGMENTS | HOSTILE) + page[at:]
    return page


@settings(max_examples=900, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=flopkb_pages(HOSTILE.map(lambda text: text.replace("\x00", "")), ANY_HEADING)
    | st.lists(FRAGMENTS | HOSTILE, max_size=24).map("".join)
    | mutated_pages()
)
def test_any_text_is_converted_as_python_markdown_converts_it_or_left_to_it(
    mkdocs_setup: tuple[MkDocsConfig, Files, PageForm], text: str
) -> None:
    """Prose on many lines (tabs, code, fences), random markup, and flopkb's pages with markup put in them."""
    slow, fast = both_ways(mkdocs_setup, text)
    event("python-markdown" if fast is None else "fast path")
    assert fast is None or fast == slow


def test_a_record_page_is_headings_and_blocks(mkdocs_setup: tuple[MkDocsConfig, Files, PageForm]) -> None:
    script = f'<script type="application/json">{json_for_script({"a": "</script>"})}</script>'
    page = f"# {markdown_text('A <b> & B_*')}\n\n<div>\n<p>x</p>\n</div>\n## Notes {heading_id('Notes')}\n\n{script}\n"
    split = split_page(page, mkdocs_setup[2])
    assert split is not None
    title, div, notes, json_block = split.parts
    assert isinstance(title, Heading) and (title.level, title.id) == (1, None)
    assert div == "<div>\n<p>x</p>\n</div>"  # no blank line after it
    assert notes == Heading(2, "Notes", "Notes")
    assert json_block == script + "\n"
    slow, fast = both_ways(mkdocs_setup, page)
    assert fast == slow
    assert slow[2] == "A &#60;b&#62; &#38; B&#95;&#42;"  # the title, as Material prints it


def test_other_markdown_extensions_turn_the_fast_path_off() -> None:
    config = mkdocs_config(docs_dir="/tmp/d", site_dir="/tmp/s")
    extensions = [next(iter(e)) if isinstance(e, dict) else e for e in config["markdown_extensions"]]
    settings_of = {next(iter(e)): e[next(iter(e))] for e in config["markdown_extensions"] if isinstance(e, dict)}
    assert page_form(markdown.Markdown(extensions=extensions, extension_configs=settings_of)) is not None
    assert page_form(markdown.Markdown(extensions=[*extensions, "footnotes"], extension_configs=settings_of)) is None
    settings_of["toc"] = {"permalink": "#"}
    assert page_form(markdown.Markdown(extensions=extensions, extension_configs=settings_of)) is None


@SETTINGS
@given(level=st.integers(1, 6), text=ONE_LINE.filter(bool), anchor=FORMULA_IDS)
def test_a_heading_has_the_id_it_was_given(level: int, text: str, anchor: str) -> None:
    """`_` at a word's edge (a formula id `_a_` or `kv_`) is emphasis to python-markdown, inside `{: #id }` too:
    `heading_id` escapes it, so that the heading keeps its id and links to the formula land."""
    html = markdown.Markdown(extensions=["attr_list", "toc"]).convert(heading(level, text, anchor))
    assert f' id="{anchor}"' in html, html

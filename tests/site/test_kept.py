"""mkdocs' gathering kept from one build to the next (`flopkb.site.incremental.kept`) is a fresh gathering's
(issue 22): after any sequence of added, removed and edited files, the files, their pages and the nav that
mkdocs' build works with are what walking the docs folder afresh gives."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import mkdocs.commands.build as mkdocs_build
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mkdocs.config import load_config
from mkdocs.structure.files import get_files, set_exclusions
from mkdocs.structure.nav import Navigation, get_navigation
from mkdocs.structure.pages import Page

from flopkb.site.incremental.kept import KeptFiles
from flopkb.site.incremental.partial import PartialBuild, Reuse
from flopkb.site.publishing.mkdocs import build_site, mkdocs_config, write_config

EPOCH = 1_700_000_000
NAV: list[Any] = [{"Home": "index.md"}, {"Kinds": [{"Flops": "kinds/flop.md"}, {"Later": "kinds/later.md"}]}]
PATHS = [
    "index.md",
    "kinds/flop.md",
    "kinds/later.md",  # in the nav: a link while it is missing, a page once it is there
    "records/a.md",
    "records/b/c.md",
    "records/b/d.md",
    "records/index.md",
    "records/README.md",  # beside records/index.md, mkdocs' walk keeps only the index
    "charts/a.svg",
    "assets/flopkb.css",
    "assets/images/favicon.png",  # shadows the theme's file of that name
    ".hidden.md",
]
FILES = st.sampled_from(PATHS)
EDITS = st.one_of(
    st.tuples(st.just("write"), FILES, st.sampled_from(["# One\n\nText.\n", "# Two\n\nOther text.\n"])),
    st.tuples(st.just("remove"), FILES, st.just("")),
)
START = {"index.md": "# Home\n", "kinds/flop.md": "# Flops\n", "records/a.md": "# A\n", "charts/a.svg": "<svg/>"}


def describe_page(page: Page | None) -> Any:
    if page is None:
        return None
    links = ("file", "parent", "previous_page", "next_page", "children")
    around = [getattr(getattr(page, name), "url", None) for name in ("parent", "previous_page", "next_page")]
    return type(page), page.file.src_uri, around, {k: repr(v) for k, v in vars(page).items() if k not in links}


def describe_item(item: Any) -> Any:
    children = [describe_item(child) for child in item.children or []]
    return type(item).__name__, item.title, getattr(item, "url", None), getattr(item.parent, "title", None), children


def describe(files: Any, nav: Navigation) -> Any:
    described = [
        (
            f.src_uri,
            f.src_dir,
            f.dest_dir,
            f.use_directory_urls,
            f.inclusion,
            f.dest_uri,
            f.url,
            f.abs_src_path,
            f.abs_dest_path,
            f.generated_by,
            f.is_modified() if f.is_documentation_page() else None,
            describe_page(f.page),
        )
        for f in files
    ]
    return described, [describe_item(item) for item in nav.items], [page.url for page in nav.pages]


def digests(docs: Path) -> dict[str, str]:
    return {
        p.relative_to(docs).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in docs.rglob("*")
        if p.is_file()
    }


def fresh(config_file: Path, reuse: Reuse | None) -> Any:
    """What mkdocs' own build gathers from the folder, up to its nav (with the partial build's marks)."""
    config = load_config(config_file=str(config_file))
    files = get_files(config)
    files.add_files_from_theme(config.theme.get_env(), config)
    files = PartialBuild(reuse).on_files(files, config=config)
    set_exclusions(files, config)
    return describe(files, get_navigation(files, config))


def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edits: list[tuple[str, str, str]]) -> list[bool]:
    """Build the docs folder after each edit with the kept gathering, checking it against a fresh one; whether
    each build's gathering was the kept one."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    run = tmp_path / hashlib.sha256(repr(edits).encode()).hexdigest()[:12]
    docs = run / "docs"
    for rel, text in START.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text)
    seen: list[Any] = []

    def recorded(files: Any, config: Any) -> Navigation:
        nav = get_navigation(files, config)
        seen.append(describe(files, nav))
        return nav

    monkeypatch.setattr(mkdocs_build, "get_navigation", recorded)
    kept = KeptFiles()
    before: dict[str, str] = {}
    reuse: Reuse | None = None
    reused: list[bool] = []
    for step, (what, rel, text) in enumerate([("write", "index.md", "# Home\n"), *edits]):
        if what == "write":
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            (docs / rel).write_text(text)
        else:
            (docs / rel).unlink(missing_ok=True)
        now = digests(docs)
        if step:
            changed = frozenset(r for r, digest in now.items() if before.get(r) != digest)
            reuse = Reuse(run / f"site{step - 1}", changed, frozenset(before.keys() - now.keys()), since_kept=True)
        site = run / f"site{step}"
        config_file = write_config(mkdocs_config(docs_dir=docs, site_dir=site, nav=NAV), run / f"mkdocs{step}.yml")
        expected = fresh(config_file, reuse)
        seen.clear()
        build_site(
            docs,
            site,
            config_file=config_file,
            source_date_epoch=EPOCH,
            install=False,
            reuse=reuse,
            kept=kept,
            search=False,
            nav=NAV,
        )
        assert seen == [expected], (step, what, rel)
        reused.append(kept.reused)
        before = now
    return reused


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(EDITS, min_size=1, max_size=6))
@example([("write", "kinds/later.md", "# Later\n"), ("write", "records/index.md", "# I\n")])
@example([("write", "records/index.md", "# I\n"), ("write", "records/README.md", "# R\n")])
@example([("write", "assets/images/favicon.png", "png"), ("remove", "assets/images/favicon.png", "")])
def test_the_kept_gathering_is_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edits: list[tuple[str, str, str]]
) -> None:
    built(tmp_path, monkeypatch, edits)


def test_edits_added_and_removed_files_use_the_kept_gathering(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edits = [
        ("write", "records/a.md", "# One\n"),  # edited
        ("write", "records/b/c.md", "# Two\n"),  # added, in a new folder
        ("write", "kinds/later.md", "# Later\n"),  # added, in the nav
        ("remove", "records/a.md", ""),
        ("write", "index.md", "# Home again\n"),  # in the nav, edited
    ]
    assert built(tmp_path, monkeypatch, edits) == [False, True, True, True, True, True]

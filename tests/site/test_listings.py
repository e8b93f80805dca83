"""Listing pages (a kind's, a category's, a tag's records) come in pages of at most LISTING_ROWS rows: every record
is on exactly one page of each listing it belongs to, reached from the listing's first page by its pager (a property
over generated bases); a page weighs about what a record page does at any size of base; an incremental build of
paged listings is the full build."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.site.pages import listings
from flopkb.site.pages.common import tag_path
from flopkb.site.pages.index import kind_page
from flopkb.site.pages.listings import LISTING_ROWS, listing_files
from flopkb.site.render import render_docs
from kbfixture import compile_kb, write_kb
from repo import REPO
from site_fixtures import build_base

ROW_ID = re.compile(r'<code class="flopkb-id">(.*?)</code>')
NEXT = re.compile(r'<a class="flopkb-pager__item" href="([^"]+)">next →</a>')


def listed(docs: Path, first: str) -> tuple[list[str], list[list[str]]]:
    """The pages of the listing whose first page is `first`, as a reader reaches them by "next →" from it, and the
    record ids each page lists."""
    files, rows = [first], []
    while True:
        text = (docs / files[-1]).read_text(encoding="utf-8")
        rows.append([found.replace("<wbr>", "") for found in ROW_ID.findall(text)])
        following = NEXT.findall(text)
        assert len(following) in (0, 2), "a pager above the rows and one below, or none"
        if not following:
            return files, rows
        target = (docs / files[-1]).parent / following[0].removesuffix(".html")
        files.append(Path(target.resolve().as_posix() + ".md").relative_to(docs.resolve()).as_posix())


def pages_of(docs: Path, first: str) -> set[str]:
    """Every file of the docs folder that is a page of the listing whose first page is `first`."""
    folder = docs / first.removesuffix(".md")
    later = {path.relative_to(docs).as_posix() for path in folder.glob("*.md")} if folder.is_dir() else set()
    return {first} | later


def fact(number: int, tags: list[str]) -> str:
    return f"id: facts/f{number:02d}\nkind: fact\ntitle: Fact {number % 7} {number}\nstatement: A fact.\ntags: {tags}\n"


def flop(number: int, tags: list[str]) -> str:
    return (
        f"id: flops/p{number:02d}\nkind: flop\ncategory: memory-bandwidth\ndescription: A flop.\ntags: {tags}\n"
        if number % 2
        else f"id: flops/p{number:02d}\nkind: flop\ncategory: arithmetic-intensity\ndescription: A flop.\n"
    )


TAGS = st.lists(st.sampled_from(["alpha", "beta", "b-2"]), max_size=3, unique=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.integers(1, 4),
    facts=st.lists(TAGS, max_size=11),
    flops=st.lists(TAGS, max_size=7),
)
def test_every_record_is_on_exactly_one_page_of_each_listing_and_no_page_is_over_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, facts: list[list[str]], flops: list[list[str]]
) -> None:
    monkeypatch.setattr(listings, "LISTING_ROWS", rows)
    root = tmp_path / "kb"
    shutil.rmtree(root, ignore_errors=True)
    files = {f"records/facts/f{n:02d}.yaml": fact(n, tags) for n, tags in enumerate(facts)}
    files.update({f"records/flops/p{n:02d}.yaml": flop(n, tags) for n, tags in enumerate(flops)})
    kb = compile_kb(write_kb(root, files))
    docs = root / "docs"
    render_docs(kb, docs, parallel=False)
    expected: dict[str, Counter[str]] = {}
    for record_id, entry in kb.entries.items():
        record = entry.record
        expected.setdefault(kind_page(record.kind), Counter())[record_id] += 1
        for tag in record.tags:
            expected.setdefault(tag_path(tag), Counter())[record_id] += 1
        if record.kind == "flop":
            expected.setdefault(f"categories/{record.category}.md", Counter())[record_id] += 1
    for first, members in expected.items():
        reached, pages = listed(docs, first)
        assert set(reached) == pages_of(docs, first), "every page of the listing, and no other, is reached"
        assert reached == listing_files(first, sum(members.values()))
        assert all(0 < len(page) <= rows for page in pages), first
        assert Counter(record_id for page in pages for record_id in page) == members, first


def test_a_listing_page_weighs_what_a_record_page_does(tmp_path: Path) -> None:
    """At the real LISTING_ROWS, on a generated base whose `bench` tag lists every record (benchmarks/generate.py)."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate

    records = LISTING_ROWS * 2 + 30
    site = build_base(generate(tmp_path / "kb", records)).site
    bench = sorted(path.relative_to(site).as_posix() for path in [site / "tags/bench.html", *site.glob("tags/bench/*")])
    assert bench == ["tags/bench.html", "tags/bench/2.html", "tags/bench/3.html"]
    record_pages = sorted(path.stat().st_size for path in (site / "records").rglob("*.html"))
    median_record = record_pages[len(record_pages) // 2]
    for rel in bench:
        assert (site / rel).stat().st_size < 3 * median_record, rel

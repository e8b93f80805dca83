"""The readers' site, checked on the built files: every record's page and its parts, index pages, links,
safety against hostile records, determinism, atomic replacement, refusal on errors, templates, scale."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from flopkb.config import Config, ConfigError, load_config
from flopkb.site.pages.common import tag_path
from flopkb.site.pages.graph import SPRING_LIMIT, layout
from flopkb.site.publishing.publish import BuildError, build, source_date_epoch
from html_safety import scan_site
from kbfixture import write_kb
from repo import REPO
from site_fixtures import EPOCH, BuiltSite, build_base, copy_project_base


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.loads: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        if tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")
        if tag in ("script", "img", "iframe", "source", "audio", "video") and values.get("src"):
            self.loads.append((tag, values["src"] or ""))
        if tag == "link" and values.get("href"):
            self.loads.append((tag, values["href"] or ""))


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ---------------------------------------------------------------------------
# The project's own base


def test_every_record_has_a_page_and_no_record_is_in_the_nav(project_site: BuiltSite) -> None:
    for record_id in project_site.outcome.kb.entries:
        assert (project_site.site / "records" / f"{record_id}.html").is_file(), record_id
    nav_link = re.compile(r'<a href="([^"]*)" class="md-(?:nav|tabs)__link')
    for page in ("index.html", "records/flops/sd-batch-dilution-problem.html"):
        links = nav_link.findall(project_site.html(page))
        assert any(link.endswith("compare.html") for link in links)
        assert not [link for link in links if "records/" in link]
    for page in (
        "index.html",
        "kinds/flop.html",
        "kinds/accelerator.html",
        "categories/arithmetic-intensity.html",
        "accelerators/compare.html",
        "graph.html",
        "evidence.html",
        "codes.html",
    ):
        assert (project_site.site / page).is_file(), page


def test_every_internal_link_and_anchor_resolves(project_site: BuiltSite) -> None:
    site = project_site.site
    pages = {p.relative_to(site).as_posix(): parse(p) for p in site.rglob("*.html")}
    broken = []
    for rel, page in pages.items():
        if rel == "404.html":  # mkdocs links it from the site root ("/..."), wherever it is served
            continue
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme or href.startswith(("//", "mailto:")):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(rel), unquote(parts.path))) if parts.path else rel
            target = target.replace(os.sep, "/")
            if target.endswith("/") or target == ".":
                target = (target.rstrip("/") + "/index.html").lstrip("./") or "index.html"
            if not (site / target).exists():
                broken.append(f"{rel}: {href}")
            elif parts.fragment and target.endswith(".html") and unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{rel}: {href} (no such anchor)")
    assert broken == []


def test_prose_wikilinks_are_links_with_their_labels(project_site: BuiltSite) -> None:
    html = project_site.html("records/flops/eng-profile-spec-decoding-engine-break-even-shift.html")
    # [[engines/sglang]] has no label: the target's title shows.
    assert '<a href="../../records/engines/sglang.html">SGLang</a>' in html
    statement = project_site.html("records/accelerators/nvidia-h100-sxm.html")
    assert 'href="../../records/facts/ridge-point.html"' in statement


def test_a_formula_anchor_lands_on_the_formula(project_site: BuiltSite) -> None:
    page = parse(project_site.site / "records/facts/ridge-point.html")
    assert {"ridge-point", "decode-compute-bound-batch", "decode-compute-bound-batch-fp8"} <= page.ids
    html = project_site.html("records/flops/sd-batch-dilution-problem.html")
    assert 'href="../../records/flops/speculative-decoding-bandwidth-trade-at-batch.html#speculative-ai"' in html


def test_formulas_are_typeset_evaluated_and_checked(project_site: BuiltSite) -> None:
    html = project_site.html("records/facts/ridge-point.html")
    assert (
        '<div class="arithmatex">\\[ \\frac{\\mathrm{peak\\_bf16\\_dense}}{\\mathrm{memory\\_bandwidth}} \\]</div>'
        in html
    )
    for value in ("295.3 FLOP/byte", "206.1 FLOP/byte", "292.2 FLOP/byte", "246.7 FLOP/byte"):
        assert value in html
    assert html.count("flopkb-claim--ok") == 12
    assert "flopkb-claim--mismatch" not in html
    # Each hardware figure links to the spec row it came from, which exists.
    assert 'href="../../records/accelerators/nvidia-h100-sxm.html#specs.memory_bandwidth">3.35 TB/s</a>' in html
    assert 'id="specs.memory_bandwidth"' in project_site.html("records/accelerators/nvidia-h100-sxm.html")


def test_sweeps_get_a_table_and_a_chart(project_site: BuiltSite) -> None:
    html = project_site.html("records/facts/fct-spec-decoding-cost-model-break-even.html")
    # alpha x k: the second swept input becomes the columns.
    assert '<th class="flopkb-num">k = 8</th>' in html
    assert "6.126" in html  # alpha = 0.9, k = 8
    chart = project_site.site / "charts/facts/fct-spec-decoding-cost-model-break-even/expected-tokens-per-step.svg"
    assert chart.is_file() and chart.read_text(encoding="utf-8").startswith("<svg")
    assert 'src="../../charts/facts/fct-spec-decoding-cost-model-break-even/expected-tokens-per-step.svg"' in html
    # Quantities keep their units: t_spec is swept in ms.
    html = project_site.html("records/flops/eng-profile-spec-decoding-engine-break-even-shift.html")
    assert "<td>28 ms</td>" in html


def test_accelerators_have_spec_tables_and_rooflines(project_site: BuiltSite) -> None:
    html = project_site.html("records/accelerators/nvidia-h100-sxm.html")
    assert '<tr id="specs.peak_bf16_dense">' in html
    assert "flopkb-badge--vendor-spec" in html
    assert 'src="../../charts/accelerators/nvidia-h100-sxm/roofline.svg"' in html
    svg = (project_site.site / "charts/accelerators/nvidia-h100-sxm/roofline.svg").read_text(encoding="utf-8")
    assert "ridge 295 FLOP/byte" in svg
    compare = project_site.html("accelerators/compare.html")
    for title in ("NVIDIA H100 SXM", "NVIDIA H200 SXM", "AMD Instinct MI300X"):
        assert title in compare
    assert 'src="../charts/_compare/peak_bf16_dense.svg"' in compare
    svg = (project_site.site / "charts/_compare/peak_bf16_dense.svg").read_text(encoding="utf-8")
    accelerators = len(list((REPO / "records/accelerators").glob("*.yaml")))
    assert svg.count('class="roof"') == accelerators  # one roof per accelerator of the base


def test_sources_are_citations_and_backlinks_are_listed(project_site: BuiltSite) -> None:
    html = project_site.html("records/facts/fct-spec-decoding-cost-model-break-even.html")
    assert '<span class="flopkb-cite__authors">Yaniv Leviathan, Matan Kalman and Yossi Matias</span> (2023).' in html
    assert 'href="https://arxiv.org/abs/2211.17192"' in html
    source = project_site.html("records/sources/leviathan-2023.html")
    backlinks = source.split('id="Referenced-by"', 1)[1]
    assert "fct-spec-decoding-cost-model-break-even.html" in backlinks
    assert "cites it" in backlinks


def test_evidence_status_and_debt(project_site: BuiltSite) -> None:
    flop = project_site.html("records/flops/sd-batch-dilution-problem.html")
    assert "flopkb-status--own-debt" in flop
    assert 'href="#hardware_parameters.0"' in flop and 'id="hardware_parameters.0"' in flop
    evidence = project_site.html("evidence.html")
    assert "records/flops/sd-batch-dilution-problem.html#hardware_parameters.0" in evidence
    assert "flopkb-status--sourced" in project_site.html("records/facts/ridge-point.html")  # computes with cited specs
    seed = project_site.html("records/flops/eng-profile-spec-decoding-engine-break-even-shift.html")
    assert 'flopkb-status--no-sources" href="#Evidence"' in seed  # its errata's sources do not source its words


def test_neighbourhood_graph_is_small_inline_json(project_site: BuiltSite) -> None:
    html = project_site.html("records/facts/ridge-point.html")
    found = re.search(r'<div class="flopkb-data" id="flopkb-neighbourhood" hidden[^>]*>(.*?)</div>', html, re.DOTALL)
    assert found
    data = json.loads(found.group(1))
    assert data["focus"] == "facts/ridge-point"
    assert 2 <= len(data["nodes"]) <= 25
    assert {edge["source"] for edge in data["edges"]} <= {node["id"] for node in data["nodes"]}


def test_graph_page_has_every_record_with_positions(project_site: BuiltSite) -> None:
    data = json.loads((project_site.site / "graph.json").read_text(encoding="utf-8"))
    assert len(data["nodes"]) == project_site.records
    assert all(isinstance(node["x"], float) and isinstance(node["y"], float) for node in data["nodes"])
    assert len({(node["x"], node["y"]) for node in data["nodes"]}) == len(data["nodes"])
    assert 'data-graph="#flopkb-graph-data"' in project_site.html("graph.html")  # small: inlined, works from file://


def test_home_and_graph_pages_count_the_same_links_between_records(project_site: BuiltSite) -> None:
    """A link of a record to itself is not "between" records: neither page counts it (the project has some)."""
    kb_graph = project_site.outcome.kb.graph
    assert kb_graph is not None
    graph = kb_graph.graph
    self_links = sum(1 for source, target in graph.edges if source == target)
    assert self_links, "the project's records link to themselves somewhere: else this test proves nothing"
    between = graph.number_of_edges() - self_links
    home = re.findall(r"<strong>(\d+)</strong><span>links between them", project_site.html("index.html"))
    drawn = re.findall(r"(\d+) links between them", project_site.html("graph.html"))
    assert home == drawn == [str(between)]


def test_home_and_indexes(project_site: BuiltSite) -> None:
    home = project_site.html("index.html")
    assert "What the base holds" in home
    accelerators = len(list((REPO / "records/accelerators").glob("*.yaml")))
    assert re.search(
        rf'flopkb-card__count">{accelerators}</span><span class="flopkb-kind flopkb-kind--accelerator"', home
    )
    assert "arithmetic-intensity" in project_site.html("categories/arithmetic-intensity.html")
    kinds = project_site.html("kinds/source.html")
    assert kinds.count('class="flopkb-kind flopkb-kind--source"') >= 10
    assert "data-search-exclude" in kinds
    assert "dangling-link" in project_site.html("codes.html")


def indexed_pages(site: Path) -> dict[str, dict]:
    """Every page in the site's search index (pagefind's fragments: gzipped JSON after a signature), by URL."""
    pages = {}
    for path in sorted((site / "pagefind" / "fragment").iterdir()):
        data = gzip.decompress(path.read_bytes()).removeprefix(b"pagefind_dcd")
        fragment = json.loads(data)
        pages[fragment["url"]] = fragment
    return pages


def test_search_index_holds_titles_text_and_formulas(project_site: BuiltSite) -> None:
    pages = indexed_pages(project_site.site)
    ridge = pages["/records/facts/ridge-point.html"]
    assert ridge["meta"]["title"] == "Ridge point and the batch at which decode turns compute-bound"
    assert "peak FLOP/s / memory bandwidth" in ridge["content"]
    assert "hw.peak_bf16_dense / hw.memory_bandwidth" in ridge["content"]
    # What only lists other records is left out: backlinks, index listings; and Material's 404 page.
    assert "mentions it" in project_site.html("records/facts/ridge-point.html")
    assert "mentions it" not in ridge["content"]
    assert "Leviathan" not in pages["/kinds/source.html"]["content"]
    assert "/404.html" not in pages
    assert len(pages) == project_site.outcome.pages
    assert "data-pagefind-body" in project_site.html("records/facts/ridge-point.html")


def test_nothing_is_loaded_from_outside_the_site(project_site: BuiltSite) -> None:
    css_urls = re.compile(r"""url\(\s*["']?(?:https?:)?//""", re.IGNORECASE)
    for path in project_site.site.rglob("*"):
        if path.suffix == ".html":
            for tag, url in parse(path).loads:
                assert not urlsplit(url).scheme and not url.startswith("//"), f"{path.name}: <{tag}> {url}"
        elif path.suffix == ".css":
            assert not css_urls.search(path.read_text(encoding="utf-8")), path.name
        elif path.suffix == ".svg":
            text = path.read_text(encoding="utf-8")
            assert 'href="http' not in text and "@import" not in text, path.name


def test_the_built_site_carries_no_reload_script(project_site: BuiltSite) -> None:
    for path in project_site.site.rglob("*.html"):
        assert "__flopkb__" not in path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# Hostile records


def test_hostile_records_leave_nothing_executable(hostile_site: BuiltSite) -> None:
    assert scan_site(hostile_site.site) == []


def test_hostile_text_is_shown_escaped(hostile_site: BuiltSite) -> None:
    html = hostile_site.html("records/flops/hostile.html")
    assert "<title>&lt;script&gt;alert(10)&lt;/script&gt; Hostile" in html
    assert "&lt;script&gt;alert(15)&lt;/script&gt;" in html
    assert "[click](javascript:alert(17))" in html  # not a link: shown as written
    # The wikilink with a hostile label is a link whose label is text.
    assert re.search(
        r'<a href="../../records/accelerators/acc.html"[^>]*>&lt;script&gt;alert\(21\)&lt;/script&gt;</a>', html
    )
    assert 'href="https://example.org/&#34;onmouseover=&#34;alert(28)"' in html or "onmouseover=&#34;" in html
    engine = hostile_site.html("records/engines/eng.html")
    assert "<title>Engine &lt;/title&gt;&lt;script&gt;alert(70)&lt;/script&gt; - " in engine
    # A hostile vocabulary term gets a safe file name and an escaped nav entry.
    assert (hostile_site.site / "categories" / "img-src-x-onerror-alert-2.html").is_file()


class _SettingsShown(HTMLParser):
    """Where a page shows the site's settings, as a reader (or a search engine) reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: dict[str, str] = {}
        self.attributes: dict[str, str] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "meta" and found.get("name") == "description":
            self.attributes["description"] = found.get("content") or ""
        if "md-logo" in (found.get("class") or "") and tag == "a":
            self.attributes.setdefault("logo title", found.get("title") or "")
        name = {"title": "title", "h1": "h1"}.get(tag) or {
            "flopkb-lede": "lede",
            "md-ellipsis": "header",
        }.get(found.get("class") or "")
        self._open.append(name or "")
        if name:
            self.texts.setdefault(name, "")

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for name in self._open:
            if name and name not in self.attributes:
                self.texts[name] += data


def test_hostile_site_settings_are_shown_as_written(hostile_site: BuiltSite) -> None:
    """`[tool.flopkb.site]` name and description reach every page as text: escaped once, never run, never mangled."""
    from hostile_kb import SITE_DESCRIPTION, SITE_NAME

    home = _SettingsShown()
    home.feed(hostile_site.html("index.html"))
    assert home.texts["title"] == SITE_NAME
    assert home.texts["h1"].removesuffix("¶").strip() == SITE_NAME  # (¶: the heading's permalink)
    assert home.texts["lede"] == SITE_DESCRIPTION
    assert home.attributes == {"description": SITE_DESCRIPTION, "logo title": SITE_NAME}
    record = _SettingsShown()
    record.feed(hostile_site.html("records/facts/plain.html"))
    assert record.texts["title"].endswith(" - " + SITE_NAME)
    assert record.attributes["logo title"] == SITE_NAME


def test_hostile_json_cannot_close_its_element(hostile_site: BuiltSite) -> None:
    html = hostile_site.html("records/facts/plain.html")
    data = re.search(r'id="flopkb-neighbourhood"[^>]*>(.*?)</div>', html, re.DOTALL)
    assert data and "</" not in data.group(1) and "\\u003c/script\\u003e" in data.group(1)


def test_the_graph_json_file_is_inert_served_as_html(hostile_site: BuiltSite) -> None:
    text = (hostile_site.site / "graph.json").read_text(encoding="utf-8")
    assert not {"<", ">", "&"} & set(text), "a host that sniffs or serves .json as HTML would run the titles"
    titles = [node["label"] for node in json.loads(text)["nodes"]]
    assert "A plain fact about </script><script>alert(40)</script>" in titles, "the titles as written"


# ---------------------------------------------------------------------------
# Building: deterministic, atomic, refused on errors


def test_two_builds_are_byte_identical(tmp_path: Path, project_site: BuiltSite) -> None:
    # Another folder, another process, another hash seed, no epoch given (not a git repo: 0).
    base = copy_project_base(tmp_path / "again")
    env = {**os.environ, "PYTHONHASHSEED": "4242", "SOURCE_DATE_EPOCH": str(EPOCH)}
    subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(base), "--no-cache"],
        check=True,
        env=env,
        capture_output=True,
    )
    first, second = tree_digest(project_site.site), tree_digest(base / "build" / "site")
    assert first.keys() == second.keys()
    assert [rel for rel in first if first[rel] != second[rel]] == []


def test_source_date_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = copy_project_base(tmp_path / "kb")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert source_date_epoch(load_config(base)) == 0  # not in a git repository
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1234")
    assert source_date_epoch(load_config(base)) == 1234
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(base)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "records", "schema"], check=True)
    subprocess.run(
        [*git, "commit", "-q", "-m", "x", "--date", "@1600000000"],
        check=True,
        env={**os.environ, "GIT_COMMITTER_DATE": "@1600000000"},
    )
    assert source_date_epoch(load_config(base)) == 1600000000


BROKEN = {
    "records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Links to [[nowhere]].\n",
}


def test_build_refuses_a_base_with_errors_and_keeps_the_old_site(tmp_path: Path) -> None:
    base = write_kb(tmp_path / "kb", {"records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n"})
    first = subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(base)], capture_output=True, text=True, check=False
    )
    assert first.returncode == 0, first.stdout + first.stderr
    before = tree_digest(base / "build" / "site")
    write_kb(base, BROKEN)
    second = subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(base), "--format", "text"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert second.returncode == 1
    assert "records/facts/a.yaml:3:" in second.stdout and "dangling-link" in second.stdout
    assert "no site was written" in second.stderr
    assert tree_digest(base / "build" / "site") == before


def test_a_failed_build_leaves_the_old_site_and_no_debris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = write_kb(tmp_path / "kb", {"records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n"})
    build_base(base)
    before = tree_digest(base / "build" / "site")

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("mkdocs fell over")

    monkeypatch.setattr("flopkb.site.publishing.publish.build_site", explode)
    with pytest.raises(RuntimeError, match="fell over"):
        build(load_config(base), epoch=EPOCH)
    assert tree_digest(base / "build" / "site") == before
    assert sorted(p.name for p in (base / "build").iterdir()) == [  # the caches live outside the base
        "site",
        "site-docs",
        "site-mkdocs.yml",
        "site-state.json",
    ]


def test_a_new_build_replaces_the_old_one_whole(tmp_path: Path) -> None:
    base = write_kb(
        tmp_path / "kb",
        {
            "records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n",
            "records/facts/b.yaml": "id: facts/b\nkind: fact\nstatement: See [[a]].\n",
        },
    )
    build_base(base)
    assert (base / "build/site/records/facts/b.html").is_file()
    (base / "records/facts/b.yaml").unlink()
    build_base(base)
    assert not (base / "build/site/records/facts/b.html").exists()
    assert not (base / "build/site-docs/records/facts/b.md").exists()
    kept = ["site", "site-docs", "site-mkdocs.yml", "site-state.json"]  # the caches live outside the base
    assert sorted(p.name for p in (base / "build").iterdir()) == kept


@pytest.mark.parametrize("site_dir", [".", "records", "..", "schema/site/.."])
def test_a_site_folder_that_would_replace_the_base_is_refused(tmp_path: Path, site_dir: str) -> None:
    base = write_kb(tmp_path / "kb", {"pyproject.toml": f'[tool.flopkb]\nsite_dir = "{site_dir}"\n'})
    with pytest.raises(ConfigError):  # refused with the settings, before anything is built
        load_config(base)
    with pytest.raises(BuildError):  # and by the build, for a configuration made otherwise
        build(Config(root=base, site_dir=site_dir))
    done = subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(base)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert (base / "records").is_dir()


def test_the_cli_builds_and_reports(tmp_path: Path) -> None:
    base = copy_project_base(tmp_path / "kb")
    done = subprocess.run(
        [sys.executable, "-m", "flopkb", "build", "--root", str(base), "--format", "text"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "unverified-basis" in done.stdout  # warnings are reported as check reports them
    assert re.search(r"built \d+ pages into ", done.stdout)
    assert (base / "build/site/index.html").is_file()
    assert (base / "build/site-docs/index.md").is_file()


# ---------------------------------------------------------------------------
# Templates


def test_a_base_can_override_one_template(tmp_path: Path) -> None:
    base = write_kb(
        tmp_path / "kb",
        {
            "records/engines/e.yaml": "id: engines/e\nkind: engine\ndescription: An engine.\nfeatures: [x]\n",
            "site/templates/record/engine.md.j2": (
                '{% extends "record/base.md.j2" %}\n{% block body %}\n'
                '<p class="custom">Custom engine page: {{ features|join(", ") }}</p>\n\n{% endblock %}\n'
            ),
        },
    )
    built = build_base(base)
    html = built.html("records/engines/e.html")
    assert '<p class="custom">Custom engine page: x</p>' in html
    assert 'id="Referenced-by"' in html  # the rest comes from the default base template


# ---------------------------------------------------------------------------
# Scale


def test_large_graphs_are_laid_out_in_groups_deterministically() -> None:
    ids = [f"g{i % 40:02d}/r{i:05d}" for i in range(4000)]
    edges = sorted(
        {(ids[i], ids[(i * 7 + 13) % 4000]) for i in range(4000)} | {(ids[i], ids[(i + 1) % 4000]) for i in range(4000)}
    )
    assert len(ids) > SPRING_LIMIT
    first = layout(ids, edges)
    assert first == layout(ids, edges)
    assert len(set(first.values())) == len(ids)


def test_neighbourhoods_stay_small_on_a_hub(tmp_path: Path) -> None:
    files = {
        "records/hw/acc.yaml": (
            "id: hw/acc\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth: {value: 1 TB/s, basis: unverified}\n"
        )
    }
    for i in range(60):
        files[f"records/facts/f{i:02d}.yaml"] = f"id: facts/f{i:02d}\nkind: fact\nstatement: Runs on [[hw/acc]].\n"
    built = build_base(write_kb(tmp_path / "kb", files))
    html = built.html("records/hw/acc.html")
    data = json.loads(re.search(r'id="flopkb-neighbourhood"[^>]*>(.*?)</div>', html, re.DOTALL).group(1))
    assert len(data["nodes"]) == 25 and data["more"] == 36
    assert html.count("mentions it") == 60  # every backlink is listed (folded)
    assert '<details class="flopkb-backlinks"><summary>60 records link here</summary>' in html


@pytest.mark.parametrize("sweep", [2, 5000])
def test_long_sweeps_are_cut_in_the_table(tmp_path: Path, sweep: int) -> None:
    values = ", ".join(str(i + 1) for i in range(sweep))
    built = build_base(
        write_kb(
            tmp_path / "kb",
            {
                "records/facts/s.yaml": (
                    "id: facts/s\nkind: fact\nstatement: A sweep.\nformulas:\n"
                    f"  - id: sq\n    expr: x * x\n    inputs:\n      x: [{values}]\n"
                ),
            },
        )
    )
    html = built.html("records/facts/s.html")
    rows = html.split('data-formula="sq"', 1)[1].count("<tr>") - 1
    assert rows == min(sweep, 60)
    if sweep > 60:
        assert f"The first 60 of {sweep} rows" in html and "flopkb eval facts/s" in html


def test_debt_inherited_through_a_formula_is_shown_and_traced(tmp_path: Path) -> None:
    built = build_base(
        write_kb(
            tmp_path / "kb",
            {
                "records/hw/acc.yaml": """\
            id: hw/acc
            kind: accelerator
            vendor: V
            specs:
              memory_bandwidth: {value: 2 TB/s, basis: unverified}
              peak_bf16_dense: {value: 500 TFLOP/s, basis: derived}
            """,
                "records/facts/ridge.yaml": """\
            id: facts/ridge
            kind: fact
            statement: The ridge of [[hw/acc]].
            formulas:
              - id: ridge
                expr: hw.peak_bf16_dense / hw.memory_bandwidth
                unit: FLOP/byte
                hardware: [hw/acc]
                expect:
                  - {hardware: hw/acc, value: 250}
            """,
            },
        )
    )
    fact = built.html("records/facts/ridge.html")
    assert "flopkb-status--inherited-debt" in fact
    evidence = fact.split('id="Evidence"', 1)[1].split('id="Referenced-by"', 1)[0]
    assert 'href="#ridge"' in evidence
    assert 'href="../../records/hw/acc.html#specs.memory_bandwidth"' in evidence
    # Readers see what a figure is, not its data path.
    assert "<code>memory_bandwidth spec</code>" in evidence and "<code>specs." not in evidence
    accelerator = built.html("records/hw/acc.html")
    assert "flopkb-status--own-debt" in accelerator
    assert "1 other record rests on it" in accelerator
    page = built.html("evidence.html")
    assert 'href="records/hw/acc.html#specs.memory_bandwidth"' in page
    assert "<code>memory_bandwidth spec</code>" in page and "<code>specs." not in page
    assert page.split('id="Resting"', 1)[1].count("records/facts/ridge.html") >= 1
    assert "250 FLOP/byte" in fact


def test_record_pages_rendered_in_worker_processes_are_the_same(
    project_site: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flopkb.site import render

    kb = project_site.outcome.kb
    alone = render.render_docs(kb, tmp_path / "alone", parallel=False)
    monkeypatch.setattr(render, "render_workers", lambda records: 2)
    shared = render.render_docs(kb, tmp_path / "shared")
    assert sorted(alone.written) == sorted(shared.written)
    assert tree_digest(tmp_path / "alone") == tree_digest(tmp_path / "shared")


def test_the_home_tab_reads_the_site_name_once(project_site: BuiltSite) -> None:
    name = project_site.outcome.kb.config.site.name
    home = project_site.html("index.html")
    assert f"<title>{name}</title>" in home
    assert f"<title>{name} - {name}</title>" not in home
    assert f"<title>Compare accelerators - {name}</title>" in project_site.html("accelerators/compare.html")


def test_build_warns_without_a_site_url_and_pages_carry_description_canonical_and_edit_links(tmp_path: Path) -> None:
    statement = "Decode reads every weight once per step. Batching shares that read."
    base = write_kb(tmp_path / "kb", {"records/facts/a.yaml": f"id: facts/a\nkind: fact\nstatement: {statement}\n"})
    command = [sys.executable, "-m", "flopkb", "build", "--root", str(base)]
    bare = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "no site URL ([tool.flopkb.site] url)" in bare.stderr
    page = (base / "build" / "site" / "records" / "facts" / "a.html").read_text(encoding="utf-8")
    assert '<meta name="description" content="Fact: Decode reads every weight once per step.">' in page
    assert '<meta property="og:description" content="Fact: Decode reads every weight once per step.">' in page
    assert 'rel="canonical"' not in page and "edit this record" not in page
    (base / "pyproject.toml").write_text(
        '[tool.flopkb.site]\nurl = "https://example.org/kb/"\nrepo_url = "https://github.com/example/kb"\n',
        encoding="utf-8",
    )
    configured = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "no site URL" not in configured.stderr
    page = (base / "build" / "site" / "records" / "facts" / "a.html").read_text(encoding="utf-8")
    assert '<link rel="canonical" href="https://example.org/kb/records/facts/a.html">' in page
    assert '<meta property="og:url" content="https://example.org/kb/records/facts/a.html">' in page
    assert (
        '<a href="https://github.com/example/kb/edit/HEAD/records/facts/a.yaml" rel="noopener noreferrer">'
        "edit this record</a>"
    ) in page


def test_every_tag_links_to_its_page_which_lists_its_records(project_site: BuiltSite) -> None:
    tagged: dict[str, set[str]] = {}
    for record_id, entry in project_site.outcome.kb.entries.items():
        for tag in entry.record.tags:
            tagged.setdefault(tag, set()).add(record_id)
    assert tagged
    index = project_site.html("tags/index.html")
    for tag, ids in tagged.items():
        page_rel = tag_path(tag)[:-3] + ".html"
        assert f'href="../{page_rel}"' in index
        listed = set(re.findall(r'<code class="flopkb-id">(.*?)</code>', project_site.html(page_rel)))
        assert {text.replace("<wbr>", "") for text in listed} == ids
    record_id = next(iter(sorted(tagged[sorted(tagged)[0]])))
    page = project_site.html(f"records/{record_id}.html")
    assert f'href="{"../" * record_id.count("/") + "../"}{tag_path(sorted(tagged)[0])[:-3]}.html"' in page


def test_categories_without_records_are_not_offered(project_site: BuiltSite) -> None:
    kb = project_site.outcome.kb
    used = {entry.record.category for entry in kb.entries.values() if entry.record.kind == "flop"}
    empty = set(kb.vocabulary.categories) - used
    assert used and empty
    home = project_site.html("index.html")
    for term in empty:
        assert f">{term}</a>" not in home
    for term in used:
        assert f">{term}</a>" in home


def test_table_cells_and_terms_are_apart_for_search(project_site: BuiltSite) -> None:
    """Search indexes a page's text: cells and terms written edge to edge would read as one word in its excerpts
    ("expressionk / batchunit")."""
    glued = re.compile(r"</(td|th|dd|dt)><(td|th|dd|dt)\b")
    pages = [path for path in project_site.site.rglob("*.html") if "data-pagefind-body" in path.read_text()]
    assert len(pages) > 20
    assert [str(path) for path in pages if glued.search(path.read_text(encoding="utf-8"))] == []

"""Properties of `flopkb diff` on random knowledge bases in real git repositories.

- diff(A, A) is empty;
- through random edit sequences, the values it reports are exactly the difference of two full, cold evaluations
  of the two commits (it evaluates only the records whose fingerprint differs: this shows it misses none);
- the second side, compiled from what the first left (one load cache: unchanged files neither parsed nor linked
  again, stage results kept with dependency keys), gives the same whole report as two sides compiled apart.
"""

from __future__ import annotations

import random
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

import jinja2
import pytest
from gitrepo import commit, git, init

from flopkb.config import Config, load_config
from flopkb.formulas.results import FormulaResult
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.review.compare import compare
from flopkb.review.git import Git, Revision
from flopkb.review.matching import Matching
from flopkb.review.points import evaluations_of, same
from flopkb.review.run import diff_report
from flopkb.review.sides import Side, SideCompiler, compiled_sides
from flopkb.site.incremental.keys import record_key
from flopkb.site.pages.common import Site
from kbfixture import compile_kb, write_kb
from random_kb import edit, initial


def random_repo(root: Path, seed: int) -> random.Random:
    rng = random.Random(seed)
    write_kb(init(root), initial(rng))
    commit(root, "a random base")
    return rng


@pytest.mark.parametrize("seed", range(3))
def test_a_commit_compared_with_itself_is_empty(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "kb"
    random_repo(root, seed)
    report = diff_report(load_config(root), "HEAD..HEAD", {})
    assert report.empty and report.evaluated == 0 and not report.causes
    assert diff_report(load_config(root), "HEAD", {}).empty, "the clean work tree is HEAD"


def full_values(root: Path) -> dict[tuple[str, str, str | None, tuple[tuple[str, str], ...]], tuple[float, str, str]]:
    """Every value of every formula of the base at `root`, evaluated cold, without any cache."""
    kb = compile_kb(root)
    found = {}
    for record_id in kb.formulas:
        result: FormulaResult
        for result in kb.formulas[record_id]:
            for (hardware, point), value in evaluations_of(result, str).items():
                found[record_id, result.id, hardware, point] = value
    return found


def checkout(root: Path, sha: str, folder: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(root), "archive", sha], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


@pytest.mark.parametrize("seed", range(8))
def test_values_reported_are_the_difference_of_two_full_evaluations(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "kb"
    rng = random_repo(root, seed)
    for step in range(4):
        before = git(root, "rev-parse", "HEAD").strip()
        for _ in range(rng.randint(1, 3)):
            edit(rng, root)
        after = commit(root, f"edits {step}")
        old = full_values(checkout(root, before, tmp_path / f"old{step}"))
        new = full_values(root)
        expected = {
            (record, formula, hardware, point)
            for (record, formula, hardware, point) in old.keys() | new.keys()
            if (record, formula, hardware, point) not in old
            or (record, formula, hardware, point) not in new
            or not same(old[record, formula, hardware, point], new[record, formula, hardware, point])
        }
        report = diff_report(load_config(root), f"{before}..{after}", {})
        assert not report.records.renamed, "random edits leave no alias of an old id"
        shown = {(v.record, v.formula, v.hardware) for v in report.values}
        assert shown == {(record, formula, hardware) for record, formula, hardware, _ in expected}
        assert len(report.values) == len(expected), f"seed {seed}, step {step}"
        for value in report.values:
            assert value.causes, "every changed value has a cause"


@pytest.mark.parametrize("seed", range(6))
def test_every_page_whose_key_differs_is_listed(tmp_path: Path, seed: int) -> None:
    """The pages `flopkb diff` lists hold every record page whose key (`flopkb.site.keys.record_key`, both sides under
    one base key) differs between the commits."""
    root = tmp_path / "kb"
    rng = random_repo(root, seed)
    config = load_config(root)
    for step in range(3):
        before = git(root, "rev-parse", "HEAD").strip()
        for _ in range(rng.randint(1, 3)):
            edit(rng, root)
        after = commit(root, f"edits {step}")
        git_ = Git(root)
        comparison = git_.compare(f"{before}..{after}", {})
        with compiled_sides(config, git_, comparison) as (base, head):
            listed = compare(base, head, comparison).pages
            match = Matching(base.kb, head.kb)
            with _site(base.kb) as old_site, _site(head.kb) as new_site:
                differ = {
                    record_id
                    for record_id in new_site.entries
                    if match.old(record_id) not in old_site.entries
                    or record_key(new_site, record_id, "")[0] is None
                    or record_key(new_site, record_id, "")[0] != record_key(old_site, match.old(record_id), "")[0]
                }
        assert differ <= set(listed), f"seed {seed}, step {step}: {sorted(differ - set(listed))} not listed"


@contextmanager
def _site(kb: KnowledgeBase) -> Iterator[Site]:
    with tempfile.TemporaryDirectory() as folder:
        site = Site(kb, Path(folder), jinja2.Environment(autoescape=True))
        try:
            yield site
        finally:
            site.close()


@pytest.mark.parametrize("seed", range(6))
def test_the_shared_compile_reports_what_two_separate_compiles_report(tmp_path: Path, seed: int) -> None:
    """Every field of the report (claims, agreement, values and their causes, evidence, diagnostics, records, links,
    orphans, pages, how many records were evaluated) from the sides compiled through one load cache equals the report
    from each side compiled by itself, from nothing; for two commits, and for a commit against an edited work tree."""
    root = tmp_path / "kb"
    rng = random_repo(root, seed)
    config = load_config(root)
    for step in range(3):
        before = git(root, "rev-parse", "HEAD").strip()
        for _ in range(rng.randint(1, 3)):
            edit(rng, root)
        if step < 2:
            commit(root, f"edits {step}")
            revisions = f"{before}..HEAD"
        else:
            revisions = before  # against the work tree, uncommitted
        git_ = Git(root)
        comparison = git_.compare(revisions, {})
        with compiled_sides(config, git_, comparison) as (base, head):
            shared = compare(base, head, comparison).to_json()
        with _apart(config, git_, comparison.base) as base, _apart(config, git_, comparison.head) as head:
            apart = compare(base, head, comparison).to_json()
        assert shared == apart, f"seed {seed}, step {step}"


@contextmanager
def _apart(config: Config, git_: Git, revision: Revision) -> Iterator[Side]:
    """One side compiled by itself, through a load cache of its own (a diff never writes the cache: it is empty)."""
    compiler = SideCompiler(config, git_)
    try:
        yield compiler.compile(revision)
    finally:
        compiler.close()

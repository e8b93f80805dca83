"""Session fixtures: sites built once per test run, shared by test_render.py and test_site_browser.py.

- `project_site`: the project's own records and schema, copied to a temporary
  base (so the tests never depend on, or touch, the working tree's build/) and
  built with `flopkb.site.publishing.publish.build`.
- `hostile_site`: the hostile base of `hostile_kb.py`, built the same way.

Each is a `BuiltSite(root, site, outcome)`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from flopkb.config import load_config
from flopkb.site.publishing.publish import BuildOutcome, build
from repo import REPO

EPOCH = 1_700_000_000


@dataclass(frozen=True)
class BuiltSite:
    root: Path
    site: Path
    outcome: BuildOutcome

    def html(self, rel: str) -> str:
        return (self.site / rel).read_text(encoding="utf-8")

    @property
    def records(self) -> int:
        return sum(1 for entry in self.outcome.kb.entries.values() if entry.record is not None)


def copy_project_base(target: Path) -> Path:
    """The project's records/ and schema/ (nothing else) in a fresh base folder."""
    for folder in ("records", "schema"):
        shutil.copytree(REPO / folder, target / folder)
    return target


def build_base(root: Path, **options: object) -> BuiltSite:
    outcome = build(load_config(root), epoch=EPOCH, **options)  # type: ignore[arg-type]
    assert not outcome.refused, [d.to_dict() for d in outcome.kb.diagnostics if d.severity == "error"]
    assert outcome.site_dir is not None
    return BuiltSite(root, outcome.site_dir, outcome)


@pytest.fixture(scope="session")
def project_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    return build_base(copy_project_base(tmp_path_factory.mktemp("project") / "kb"))


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    from hostile_kb import write_hostile_kb

    return build_base(write_hostile_kb(tmp_path_factory.mktemp("hostile") / "kb"))

"""`flopkb diff` from end to end: the commits chosen, both sides compiled, compared, and shown in a format."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flopkb.config import Config
from flopkb.review.annotations import render_github
from flopkb.review.compare import compare
from flopkb.review.git import Git
from flopkb.review.markdown import render_markdown
from flopkb.review.model import Report
from flopkb.review.sides import compiled_sides
from flopkb.review.text import render_json, render_text

FORMATS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
}


def diff_report(config: Config, revisions: str | None, env: Mapping[str, str]) -> Report:
    """The report of `flopkb diff [REVISIONS]` (a `GitError` when it cannot run)."""
    git = Git(config.root)
    comparison = git.compare(revisions, env)
    with compiled_sides(config, git, comparison) as (base, head):
        return compare(base, head, comparison)

"""The pre-commit hooks: what `.pre-commit-hooks.yaml` tells users to write is what docs/ci.md shows, and this
repository's own local hooks run as the shipped ones do (docs/ci.md: "the same commands")."""

from __future__ import annotations

import re
from typing import Any

import yaml

from repo import REPO

# pre-commit's defaults for the keys the shipped hooks set.
SETTINGS = {"entry": None, "files": "", "pass_filenames": True, "require_serial": False}


def shipped_hooks() -> dict[str, dict[str, Any]]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in hooks}


def settings(hook: dict[str, Any]) -> dict[str, Any]:
    return {key: hook.get(key, default) for key, default in SETTINGS.items()}


def test_own_local_hooks_run_as_the_shipped_hooks() -> None:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    local = {hook["id"]: hook for repo in config["repos"] if repo["repo"] == "local" for hook in repo["hooks"]}
    for hook_id, shipped in shipped_hooks().items():
        assert settings(local[hook_id]) == settings(shipped), f"{hook_id}: one process, one summary, as shipped"


def test_hooks_comment_shows_the_configuration_docs_show() -> None:
    page = (REPO / "docs/ci.md").read_text(encoding="utf-8")
    shown = re.search(r"```yaml\n(repos:\n  - repo: https://github.com/<owner>/flopkb\n.*?)```", page, re.S)
    assert shown is not None
    comment = "".join(
        line.removeprefix("#   ") + "\n"
        for line in (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").splitlines()
        if line.startswith("#   ")
    )
    assert comment == shown.group(1), "a commit hash: flopkb has no release tag"
    assert yaml.safe_load(comment)["repos"][0]["hooks"][0]["id"] in shipped_hooks()

"""The composite action (`action.yml`) runs as GitHub would run it: its shell steps, in order, against a temporary
repository, with `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT` and `RUNNER_TEMP` set; and docs/ci.md shows the workflow
this repository runs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gitrepo import commit, init, replace_in

from kbfixture import accelerator, write_kb
from repo import REPO

FACT = """\
id: facts/read-time
kind: fact
statement: Reading 80 GB at the bandwidth of [[hw/a1]].
formulas:
  - id: read-time
    expr: size / hw.memory_bandwidth
    unit: ms
    inputs: {size: 80 GB}
    hardware: [hw/a1]
    expect:
      - hardware: hw/a1
        value: 40
"""


def kb_repository(root: Path, old: str, new: str) -> Path:
    """A base, and a commit that replaces `old` with `new` in its fact."""
    hardware = accelerator("hw/a1", memory_bandwidth="2 TB/s")
    write_kb(init(root), {"records/hw/a1.yaml": hardware, "records/facts/read-time.yaml": FACT})
    commit(root, "base")
    replace_in(root / "records/facts/read-time.yaml", old, new)
    commit(root, "an edit")
    return root


def condition_holds(condition: str, context: dict[str, str]) -> bool:
    """The `if:` of a step, of the forms the action uses: `a == 'x'` joined by `&&`."""
    for part in condition.split("&&"):
        name, _, value = (piece.strip() for piece in part.partition("=="))
        if context.get(name, "") != value.strip("'"):
            return False
    return True


def substitute(text: str, context: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda match: context.get(match.group(1), ""), text)


def run_action(
    root: Path, inputs: dict[str, str], scratch: Path, event: dict[str, str] | None = None
) -> tuple[list[subprocess.CompletedProcess[str]], str]:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    context = {f"inputs.{name}": str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    context.update({f"inputs.{name}": value for name, value in inputs.items()})
    context.update({"github.action_path": str(REPO), "github.event_name": "pull_request", "github.token": "t"})
    context.update(event or {})
    summary = scratch / "summary.md"
    env = {
        **os.environ,
        "GITHUB_ACTIONS": "true",
        "GITHUB_BASE_REF": "main",
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(scratch),
    }
    done = []
    for index, step in enumerate(action["runs"]["steps"]):
        if "if" in step and not condition_holds(step["if"], context):
            continue
        output = scratch / f"output-{index}"
        output.touch()
        step_env = {name: substitute(str(value), context) for name, value in step.get("env", {}).items()}
        folder = root / substitute(step.get("working-directory", "."), context)
        assert step["shell"] == "bash"
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", substitute(step["run"], context)],
            cwd=folder,
            env={**env, **step_env, "GITHUB_OUTPUT": str(output)},
            capture_output=True,
            text=True,
        )
        done.append(result)
        for line in output.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            context[f"steps.{step['id']}.outputs.{key}"] = value
        if result.returncode != 0:
            break
    return done, summary.read_text(encoding="utf-8") if summary.exists() else ""


def test_the_action_checks_diffs_and_writes_the_job_summary(tmp_path: Path) -> None:
    root = kb_repository(tmp_path / "kb", "size: 80 GB", "size: 160 GB")
    (tmp_path / "runner").mkdir()
    steps, summary = run_action(root, {"install": "false", "fail-on": "claim-regression"}, tmp_path / "runner")
    check, diff, result = steps  # the install and comment steps do not run
    assert check.returncode == 0 and diff.returncode == 0, diff.stderr
    assert "::error file=records/facts/read-time.yaml" in check.stdout, "the check annotates the failing claim"
    assert summary.startswith("<!-- flopkb-diff -->\n### flopkb diff: HEAD&#126;1@")  # `~1 .. ~` is no strikethrough
    assert "**1 claim changed status · 1 value changed in 1 record · " in summary
    assert any(
        line.startswith("::warning file=records/facts/read-time.yaml,line=11,") for line in diff.stdout.split("\n")
    )
    assert result.returncode == 1
    assert result.stdout == "flopkb check exited with 1\nflopkb diff exited with 1\n", "the claim now fails"


def test_a_prose_edit_passes(tmp_path: Path) -> None:
    root = kb_repository(tmp_path / "kb", "Reading 80 GB", "Streaming 80 GB")
    (tmp_path / "runner").mkdir()
    steps, summary = run_action(root, {"install": "false", "fail-on": "new-error"}, tmp_path / "runner")
    assert [step.returncode for step in steps] == [0, 0, 0]
    assert "**2 pages may change**" in summary, "no value, claim or diagnostic: only pages"
    assert "- records/facts/read-time\n- records/hw/a1\n" in summary, "its own, and its accelerator's (it lists it)"


def test_docs_show_the_workflow_this_repository_runs() -> None:
    page = (REPO / "docs/ci.md").read_text(encoding="utf-8")
    workflow = (REPO / ".github/workflows/knowledge-base.yml").read_text(encoding="utf-8")
    assert f"```yaml\n{workflow}```" in page
    steps = yaml.safe_load(workflow)["jobs"]["flopkb"]["steps"]
    assert steps[-1]["uses"] == "./" and (REPO / "action.yml").is_file()
    assert "pip install flopkb" not in page and "v0.1.0" not in page, "not on PyPI; no such tag"


FAKE_GH = """\
#!{python}
import json, os, subprocess, sys

args = sys.argv[1:]
with open(os.environ["FAKE_GH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[:2] == ["api", "user"]:
    login = os.environ["FAKE_GH_LOGIN"]
    if not login:
        sys.exit("gh: Resource not accessible by integration (HTTP 403)")
    print(login)
elif "--jq" in args:
    expression = args[args.index("--jq") + 1]
    done = subprocess.run(["jq", "-r", expression], input=os.environ["FAKE_GH_COMMENTS"], text=True, check=True)
"""


def comment(number: int, login: str, kind: str) -> dict[str, object]:
    return {"id": number, "user": {"login": login, "type": kind}, "body": "<!-- flopkb-diff -->\nanything"}


MALLORY = comment(1, "mallory", "User")  # the pull request's author, first to post the marker


@pytest.mark.skipif(shutil.which("jq") is None, reason="gh's --jq is played by jq")
@pytest.mark.parametrize(
    ("login", "comments", "call"),
    [
        ("", [MALLORY, comment(2, "github-actions[bot]", "Bot")], ["--method", "PATCH", "repos/o/r/issues/comments/2"]),
        ("", [MALLORY], ["--method", "POST", "repos/o/r/issues/7/comments"]),
        ("ci-user", [MALLORY, comment(3, "ci-user", "User")], ["--method", "PATCH", "repos/o/r/issues/comments/3"]),
    ],
    ids=["app-token-updates-its-own", "app-token-posts-when-only-another-has-the-marker", "user-token-updates-its-own"],
)
def test_the_sticky_comment_updated_is_the_actions_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, login: str, comments: list[object], call: list[str]
) -> None:
    root = kb_repository(tmp_path / "kb", "size: 80 GB", "size: 160 GB")
    (tmp_path / "bin").mkdir()
    gh = tmp_path / "bin/gh"
    gh.write_text(FAKE_GH.format(python=sys.executable))
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GH_LOG", str(tmp_path / "calls"))
    monkeypatch.setenv("FAKE_GH_LOGIN", login)
    monkeypatch.setenv("FAKE_GH_COMMENTS", json.dumps(comments))
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    (tmp_path / "runner").mkdir()
    inputs = {"install": "false", "comment": "true", "fail-on": "new-error"}
    steps, _ = run_action(root, inputs, tmp_path / "runner", {"github.event.pull_request.number": "7"})
    assert steps[2].returncode == 0, steps[2].stderr
    calls = [json.loads(line) for line in (tmp_path / "calls").read_text().splitlines()]
    assert [args[1:4] for args in calls if "--method" in args] == [call]

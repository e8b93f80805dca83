"""The README's two commands: a newcomer who follows them installs into a virtual environment, never outside it."""

import re
import subprocess

from repo import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
COMMANDS = re.findall(r"```sh\n(.*?)\n```", README, flags=re.DOTALL)


def test_the_readme_opens_with_two_commands_that_each_make_and_activate_a_venv_first() -> None:
    assert README.split("\n", 2)[2].startswith("```sh\n"), "the README opens with its commands"
    build, tests = COMMANDS[:2]
    for command in (build, tests):
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && python -m pip install")
    assert build.endswith("flopkb build")
    assert tests.endswith("python -m pytest")


def test_the_venv_is_ignored_by_git() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", ".venv/bin/python"], cwd=REPO, check=False)
    assert ignored.returncode == 0, "git status would list .venv/"


def test_ci_runs_the_readmes_test_command_word_for_word() -> None:
    assert COMMANDS[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()

"""A base's templates (`site/templates/`, and Material's `site/overrides/`) are a pull request's files: they render in
a jinja2 sandbox, so that a template that reaches for Python's internals stops the build with one line at its line
(status 2), and runs nothing.

The attack of security review s12, finding 3: `{{ cycler.__init__.__globals__.os.system(...) }}` in a page template
ran a shell command in `flopkb build`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import jinja2
import pytest
from click.testing import CliRunner

from flopkb.cli import main
from flopkb.site.publishing.mkdocs import SITE_ROOT
from flopkb.site.sandbox import Sandbox
from kbfixture import write_kb

FINE = {"records/facts/a.yaml": "id: facts/a\nkind: fact\nstatement: Fine.\n"}
UNSAFE = "access to attribute '__init__' of 'type' object is unsafe: templates render in a sandbox"


def escape(marker: Path) -> str:
    return f'{{{{ cycler.__init__.__globals__.os.system("touch {marker}") }}}}'


def build(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["build", "--root", str(root)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr


def test_a_page_template_that_reaches_for_python_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": f"Kind\n\n{escape(marker)}\n"})
    status, said = build(root)
    assert not marker.exists()
    assert status == 2
    assert said == f"Error: {root}/site/templates/pages/kind.md.j2:3: {UNSAFE}, with no attribute that starts with " + (
        "'_', no module, and no call but of macros, globals and the methods of strings, numbers, lists and dicts\n"
    )
    assert not (root / "build/site").exists()


def test_a_material_override_that_reaches_for_python_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    root = write_kb(tmp_path / "kb", FINE)
    shutil.copytree(SITE_ROOT, root / "site", symlinks=True)
    (root / "site/overrides/main.html").write_text(
        f'{{% extends "base.html" %}}\n{{% block content %}}\n{escape(marker)}\n{{% endblock %}}\n', encoding="utf-8"
    )
    status, said = build(root)
    assert not marker.exists()
    assert status == 2 and said.count("\n") == 1
    assert said.startswith(f"Error: {root}/site/overrides/main.html:3: {UNSAFE}"), said


def test_a_template_that_breaks_is_one_line_at_its_line(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": "Kind\n{{ nothing.here }}\n"})
    assert build(root) == (
        2,
        f"Error: {root}/site/templates/pages/kind.md.j2:2: the template cannot be rendered: 'nothing' is undefined\n",
    )


@pytest.mark.parametrize(
    "template",
    [
        "{{ m.system('true') }}",  # an attribute of a module
        "{{ holder.module.system('true') }}",  # a module held by an object's public attribute
        "{{ holder.module }}",
        "{{ items.append(1) }}",  # a call that changes a list
        "{{ holder.__class__ }}",
        "{{ where.joinpath('x').write_text('') }}",  # a method of any other object (here: one that writes a file)
    ],
)
def test_the_sandbox_refuses_modules_internals_and_calls(template: str, tmp_path: Path) -> None:
    class Holder:
        module = os

    with pytest.raises(jinja2.exceptions.SecurityError):
        Sandbox(undefined=jinja2.StrictUndefined).from_string(template).render(
            m=os, holder=Holder(), items=[], where=tmp_path
        )
    assert list(tmp_path.iterdir()) == []


def test_the_sandbox_allows_what_templates_need() -> None:
    template = (
        "{% macro m(x) %}<{{ x }}>{% endmacro %}{% set ns = namespace(n=0) %}"
        "{% for x in range(3) %}{{ m(x) }}{{ loop.cycle('a', 'b') }}{% set ns.n = ns.n + x %}{% endfor %}"
        "{{ ns.n }} {{ 'a,b'.split(',')|join('+') }} {{ d.get('k') }} {{ d.items()|list }} {{ 'x{}'.format(1) }}"
    )
    assert Sandbox().from_string(template).render(d={"k": 1}) == "<0>a<1>b<2>a3 a+b 1 [('k', 1)] x1"

"""A base's templates (`site/templates/`, and Material's `site/overrides/`) are a pull request's files: they render in
a jinja2 sandbox, so that a template that reaches for Python's internals stops the build with one line at its line
(status 2), and runs nothing.

The attack of security review s12, finding 3: `{{ cycler.__init__.__globals__.os.system(...) }}` in a page template
ran a shell command in `flopkb build`. Review s12b, finding 1: `config.plugins` is a dict, whose `run_event` (a method
of its subclass, not of dict) ran flopkb's own plugin's `on_config` with a forged config, which imports and calls
any `module:Class` as a markdown extension.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import jinja2
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup

from flopkb.cli import main
from flopkb.site.incremental.prerendered import Prerendered
from flopkb.site.publishing.mkdocs import SITE_ROOT
from flopkb.site.sandbox import LONGEST, Sandbox
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


def with_override(root: Path, content: str) -> Path:
    """The base at `root` with flopkb's site folder, whose Material override `main.html` shows `content` on line 3."""
    write_kb(root, FINE)
    shutil.copytree(SITE_ROOT, root / "site", symlinks=True)
    (root / "site/overrides/main.html").write_text(
        f'{{% extends "base.html" %}}\n{{% block content %}}\n{content}\n{{% endblock %}}\n', encoding="utf-8"
    )
    return root


def test_a_material_override_that_reaches_for_python_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    root = with_override(tmp_path / "kb", escape(marker))
    status, said = build(root)
    assert not marker.exists()
    assert status == 2 and said.count("\n") == 1
    assert said.startswith(f"Error: {root}/site/overrides/main.html:3: {UNSAFE}"), said


def run_event(marker: Path) -> str:
    """The escape of review s12b: flopkb's own plugin's `on_config`, called with a config whose markdown extension is
    `subprocess:Popen`."""
    extension = "'subprocess:Popen'"
    configs = f"{{{extension}: {{'args': ['touch', '{marker}']}}}}"
    forged = f"namespace(markdown_extensions=[{extension}], mdx_configs={configs})"
    return f"{{{{ config.plugins.run_event('config', {forged}) }}}}"


def test_a_material_override_that_calls_a_plugin_hook_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    root = with_override(tmp_path / "kb", run_event(marker))
    status, said = build(root)
    assert not marker.exists()
    assert status == 2
    assert said == f"Error: {root}/site/overrides/main.html:3: 'PluginCollection.run_event' cannot be called: " + (
        "templates render in a sandbox, with no attribute that starts with '_', no module, and no call but of macros,"
        " globals and the methods of strings, numbers, lists and dicts\n"
    )


def test_a_template_that_breaks_is_one_line_at_its_line(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": "Kind\n{{ nothing.here }}\n"})
    assert build(root) == (
        2,
        f"Error: {root}/site/templates/pages/kind.md.j2:2: the template cannot be rendered: 'nothing' is undefined\n",
    )


def test_a_page_template_that_raises_is_one_line_at_its_line(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": "Kind\n\n{{ 1 // 0 }}\n"})
    assert build(root) == (
        2,
        f"Error: {root}/site/templates/pages/kind.md.j2:3: the template cannot be rendered: integer division or"
        " modulo by zero\n",
    )


def test_a_material_override_that_raises_is_one_line_at_its_line(tmp_path: Path) -> None:
    root = with_override(tmp_path / "kb", "{{ [] + 1 }}")
    assert build(root) == (
        2,
        f"Error: {root}/site/overrides/main.html:3: the template cannot be rendered: can only concatenate list (not"
        ' "int") to list\n',
    )


def test_a_template_that_would_exhaust_the_memory_is_one_line_at_its_line(tmp_path: Path) -> None:
    page = "Kind\n{{ 'a' * 10**10 }}\n"
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": page})
    assert build(root) == (
        2,
        f"Error: {root}/site/templates/pages/kind.md.j2:2: the template cannot be rendered: '*' would make"
        " 10000000000 items, more than 1000000\n",
    )


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{{ 'ab' * 600000 }}", "'*' would make 1200000 items, more than 1000000"),
        ("{{ 600000 * [1, 2] }}", "'*' would make 1200000 items, more than 1000000"),
        ("{{ 9 ** (10 ** 9) }}", "'**' would make a number of about 3169925002 bits, more than 100000"),
        ("{{ (2 ** 60000) * (2 ** 60000) }}", "'*' would make a number of about 120002 bits, more than 100000"),
        (
            "{% set n = namespace(x=3) %}{% for _ in range(30) %}{% set n.x = n.x * n.x %}{% endfor %}",
            "'*' would make a number of about 103874 bits, more than 100000",
        ),
    ],
)
def test_the_sandbox_bounds_what_star_and_power_make(template: str, why: str) -> None:
    with pytest.raises(jinja2.exceptions.TemplateRuntimeError) as raised:
        Sandbox().from_string(template).render()
    assert raised.value.message == why


@given(st.text(max_size=5), st.integers(min_value=-3, max_value=2 * LONGEST))
def test_a_repeat_is_refused_exactly_when_it_is_longer_than_the_bound(text: str, count: int) -> None:
    template = Sandbox().from_string("{{ text * count }}")
    if len(text) * count > LONGEST:
        with pytest.raises(jinja2.exceptions.TemplateRuntimeError):
            template.render(text=text, count=count)
    else:
        assert template.render(text=text, count=count) == text * count


def test_the_sandbox_allows_small_products_and_powers() -> None:
    template = "{{ 'ab' * 3 }} {{ [0] * 2 }} {{ 2 ** 10 }} {{ 1 ** (10 ** 9) }} {{ 1.5 * 2 }} {{ (2 ** 64) * 3 }}"
    assert Sandbox().from_string(template).render() == f"ababab [0, 0] 1024 1 3.0 {3 * 2**64}"


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


class Plugins(dict[str, object]):
    def run(self) -> str:
        return "ran"

    def get(self, key: str, default: object = None) -> object:  # an override of a plain method is not dict's
        return "ran"


class Text(str):
    def run(self) -> str:
        return "ran"


class Items(list[object]):
    def run(self) -> str:
        return "ran"


class Pair(tuple[int, int]):
    def run(self) -> str:
        return "ran"


@pytest.mark.parametrize(
    "template",
    [
        "{{ plugins.run() }}",
        "{{ plugins.get('k') }}",
        "{{ text.run() }}",
        "{{ text.upper.__self__.run() }}",
        "{{ items.run() }}",
        "{{ pair.run() }}",
        "{{ run(plugins) }}",
    ],
)
def test_the_sandbox_refuses_a_method_that_a_plain_type_s_subclass_adds(template: str, tmp_path: Path) -> None:
    context = {"plugins": Plugins(k=1), "text": Text("a"), "items": Items(), "pair": Pair((1, 2))}
    with pytest.raises(jinja2.exceptions.SecurityError):
        Sandbox().from_string(template).render(context, run=lambda plugins: plugins.run())


def test_the_sandbox_runs_no_plugin_hook(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    with pytest.raises(jinja2.exceptions.SecurityError, match=r"'PluginCollection\.run_event' cannot be called"):
        Sandbox().from_string(run_event(marker)).render(config={"plugins": plugin_collection()})
    assert not marker.exists()


def plugin_collection() -> object:
    from mkdocs.plugins import PluginCollection

    plugins = PluginCollection()
    plugins["flopkb/prerendered"] = Prerendered()
    return plugins


def test_the_sandbox_allows_the_plain_methods_of_a_subclass() -> None:
    template = "{{ plugins.items()|list }} {{ text.upper() }} {{ items.index(2) }} {{ pair.count(1) }}"
    template += " {{ m.striptags() }} {{ m.join(['<i>']) }}"
    context = {"plugins": Plugins(k=1), "text": Text("a"), "items": Items([2]), "pair": Pair((1, 2))}
    rendered = Sandbox().from_string(template).render(context, m=Markup("<b>x</b>"))
    assert rendered == "[('k', 1)] A 0 1 x &lt;i&gt;"


def test_the_sandbox_allows_what_templates_need() -> None:
    template = (
        "{% macro m(x) %}<{{ x }}>{% endmacro %}{% set ns = namespace(n=0) %}"
        "{% for x in range(3) %}{{ m(x) }}{{ loop.cycle('a', 'b') }}{% set ns.n = ns.n + x %}{% endfor %}"
        "{{ ns.n }} {{ 'a,b'.split(',')|join('+') }} {{ d.get('k') }} {{ d.items()|list }} {{ 'x{}'.format(1) }}"
    )
    assert Sandbox().from_string(template).render(d={"k": 1}) == "<0>a<1>b<2>a3 a+b 1 [('k', 1)] x1"


def test_a_call_may_pass_any_keyword() -> None:
    template = "{{ dict(self=1, context=2, obj=3) }}"
    assert Sandbox().from_string(template).render() == "{'self': 1, 'context': 2, 'obj': 3}"

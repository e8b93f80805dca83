"""A base's templates cannot make text (or lists) large enough to exhaust the build's memory: every operation that can
make much more than it is given is refused before it runs when it would make more than `LONGEST` characters or items,
and what a render makes, prints and writes in all is bounded by `MOST` (`flopkb.site.bounds`).

Each vector (huge_text_vectors.tsv, and the translations' below) is a proof of concept of the class security review
s12b left open (tests/fuzz/FINDINGS.md, S10): before the bounds, each exhausted the memory (here: a `MemoryError` under
the address-space limit the test sets) or ran past the test's time limit.
"""

from __future__ import annotations

import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_hostile_templates import FINE, build, with_override

from flopkb.site.bounds import GROWTH, LONGEST, MOST
from flopkb.site.sandbox import Sandbox
from kbfixture import write_kb

ONE = f"would make more than {LONGEST} characters or items"
ALL = f"the template would make more than {MOST} characters or items in all"


@pytest.fixture
def bounded_memory_and_time() -> Iterator[None]:
    """At most 1.5 GB more of address space and 5 seconds: a vector that is not refused fails, and quickly."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + 1_500_000_000, hard))

    def late(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("the template ran for more than 5 seconds")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, 5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def translating() -> Sandbox:
    """A sandbox with jinja2's translation globals (`_`, `gettext`, ...), as mkdocs' theme has them."""
    env = Sandbox(extensions=["jinja2.ext.i18n"])
    env.install_null_translations()  # type: ignore[attr-defined]
    return env


def vectors() -> list[tuple[str, str]]:
    """The proofs of concept (huge_text_vectors.tsv): each a template, and the message the sandbox refuses it with."""
    rows = (Path(__file__).with_name("huge_text_vectors.tsv")).read_text(encoding="utf-8").splitlines()
    pairs = [row.split("\t") for row in rows if not row.startswith("#")]
    return [(template, why.format(ONE=ONE, ALL=ALL)) for why, template in pairs]


VECTORS = vectors()


@pytest.mark.parametrize(("template", "why"), VECTORS)
def test_a_template_cannot_make_text_that_exhausts_the_memory(
    template: str, why: str, bounded_memory_and_time: None
) -> None:
    with pytest.raises(jinja2.exceptions.TemplateRuntimeError) as raised:
        Sandbox().from_string(template).render()
    assert raised.value.message == why


@pytest.mark.parametrize(
    ("template", "what"),
    [
        ('{{ _("%(a)s" * 200000, a="x" * 1000000) }}', "'_'"),
        ('{{ ngettext("%(a)s", "%(a)s" * 200000, 2, a="x" * 1000000) }}', "'ngettext'"),
        ('{% trans a="x" * 1000000 %}' + "{{ a }}" * 2000 + "{% endtrans %}", "'%'"),
    ],
)
def test_a_translation_cannot_make_text_that_exhausts_the_memory(
    template: str, what: str, bounded_memory_and_time: None
) -> None:
    with pytest.raises(jinja2.exceptions.TemplateRuntimeError) as raised:
        translating().from_string(template).render()
    assert raised.value.message == f"{what} {ONE}"


def test_a_filter_does_not_run_on_a_text_it_could_make_too_long_from() -> None:
    """A filter or method may make a few times as much as its text (`GROWTH`: a character as `%F0%9F%98%80`): it is
    refused before it runs when the render has not that much left."""
    ran: list[str] = []
    env = Sandbox()
    env.filters["spy"] = ran.append
    text = "x" * (MOST // GROWTH + 1)
    for template, what in [("{{ text|spy }}", "'|spy'"), ("{{ text.upper() }}", "'str.upper'")]:
        with pytest.raises(jinja2.exceptions.TemplateRuntimeError) as raised:
            env.from_string(template).render(text=text)
        assert raised.value.message == f"{what}: {ALL}"
    assert ran == []
    assert env.from_string("{{ text|spy }}").render(text="a") == "None"
    assert ran == ["a"]


def test_a_range_is_bounded_by_jinja2(bounded_memory_and_time: None) -> None:
    with pytest.raises(OverflowError, match="MAX_RANGE"):
        Sandbox().from_string("{{ range(10**9)|list }}").render()


@pytest.mark.parametrize(
    "template",
    [
        '{{ "x"|truncate(10**9) }} {{ "x"|indent(10**9) }} {{ "a\nb"|indent(2, first=True) }} {{ "ab"|center(6) }}',
        '{{ ("\\n" * 10)|indent(10**9) }} {{ "a\\r\\nb\\rc\\n\\nd"|indent("> ", blank=True) }}',
        "{{ (10**300)|filesizeformat }} {{ (range(3)|list ~ 'x')|wordwrap(3) }} {{ 'see a.co'|urlize }}",
        '{{ "ab"|replace("", "-") }} {{ "ab".replace("", "-", 2) }} {{ "a\tb".expandtabs(4) }} {{ "7".zfill(3) }}',
        '{{ "%5.1f|%-3s|%%|%r" % (1.25, "a", [1]) }} {{ "%(x)s"|format(x=1) }} {{ "%s" % "x" }}',
        '{{ "{:>4}|{!r}|{x}|{:{}}".format(1, "a", "b", 3, x=2) }} {{ "{a}".format_map({"a": 1}) }}',
        "{{ range(3)|join(', ') }} {{ ''.join(range(3)|map('string')) }} {{ [{'a': 1}]|join(attribute='a') }}",
        "{{ [1, 2, 3]|batch(2, 0)|list }} {{ [1, 2, 3]|slice(2)|list }} {{ [[1], [2]]|sum(start=[]) }}",
        '{{ {"k": "<v>"}|xmlattr }} {{ [1, {"a": "b"}]|tojson(2) }} {{ [1, "a"]|pprint }} {{ {"a": [1]}|urlencode }}',
        '{{ [1, "a"] }} {{ 1 ~ [2] ~ "3" }} {{ "ab".translate({97: "xy"}) }} {{ (258).to_bytes(2, "big") }}',
        '{{ ("x" * 200000)|tojson|length }} {{ ("x" * 200000)|pprint|length }} {{ ["x" * 200000]|string|length }}',
        '{% set big = "x" * 1000000 %}{{ "<p>{}</p>".format(big)|length }} {{ ("%s!" % big)|length }}'
        ' {{ "<p>%s</p>"|format(big)|length }} {{ big|center(10)|length }} {{ big.replace("y", "zz")|length }}',
        "{% set ns = namespace(s='a') %}{% for _ in range(3) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    ],
)
@pytest.mark.parametrize("autoescape", [False, True])
def test_what_templates_do_with_small_sizes_renders_as_before(template: str, autoescape: bool) -> None:
    plain = jinja2.sandbox.ImmutableSandboxedEnvironment(autoescape=autoescape).from_string(template).render()
    assert Sandbox(autoescape=autoescape).from_string(template).render() == plain


@given(st.text(max_size=4), st.text(max_size=3), st.text(max_size=3), st.integers(min_value=0, max_value=LONGEST // 3))
def test_a_replacement_is_refused_exactly_when_it_is_longer_than_the_bound(
    text: str, old: str, new: str, repeat: int
) -> None:
    """The length of a replacement is reckoned exactly: it is refused when, and only when, it would make more than
    `LONGEST` characters beyond the longest text it is given."""
    template = Sandbox().from_string("{{ text.replace(old, new * repeat) }}|{{ text|replace(old, new * repeat) }}")
    replaced = text.replace(old, new * repeat)
    if len(replaced) - max(len(text), len(new * repeat)) > LONGEST:
        with pytest.raises(jinja2.exceptions.TemplateRuntimeError):
            template.render(text=text, old=old, new=new, repeat=repeat)
    else:
        assert template.render(text=text, old=old, new=new, repeat=repeat) == f"{replaced}|{replaced}"


@given(st.text(max_size=5), st.integers(min_value=-3, max_value=2 * LONGEST), st.sampled_from(["center", "ljust"]))
def test_a_width_is_refused_exactly_when_it_is_wider_than_the_bound(text: str, width: int, method: str) -> None:
    template = Sandbox().from_string(f"{{{{ text.{method}(width) }}}}")
    if width - len(text) > LONGEST:
        with pytest.raises(jinja2.exceptions.TemplateRuntimeError):
            template.render(text=text, width=width)
    else:
        assert template.render(text=text, width=width) == getattr(text, method)(width)


def test_a_page_template_that_would_make_huge_text_is_one_line_at_its_line(tmp_path: Path) -> None:
    page = 'Kind\n\n{{ "x"|center(10**9) }}\n'
    root = write_kb(tmp_path / "kb", {**FINE, "site/templates/pages/kind.md.j2": page})
    assert build(root) == (
        2,
        f"Error: {root}/site/templates/pages/kind.md.j2:3: the template cannot be rendered: '|center' {ONE}\n",
    )


def test_a_material_override_that_would_make_huge_text_is_one_line_at_its_line(tmp_path: Path) -> None:
    root = with_override(tmp_path / "kb", '{{ "%0999999999d" % 1 }}')
    assert build(root) == (
        2,
        f"Error: {root}/site/overrides/main.html:3: the template cannot be rendered: '%' {ONE}\n",
    )


def test_a_material_override_that_prints_without_end_is_one_line(tmp_path: Path) -> None:
    root = with_override(tmp_path / "kb", '{% set x = "x" * 1000000 %}{% for _ in range(100000) %}{{ x }}{% endfor %}')
    assert build(root) == (
        2,
        f"Error: {root}/site/overrides/main.html:3: the template cannot be rendered: printing a value: {ALL}\n",
    )

"""How much a template may make: no operation more than `LONGEST` characters or items, no render more than `MOST`.

A base's templates are a pull request's files: `{{ 'x'|center(10**9) }}`, `{{ '%0999999999d' % 1 }}` or
`{{ range(100000)|join('x' * 10**6) }}` would exhaust the build's memory before the operation returns. So the size an
operation whose result can be much larger than its operands would make (a width, a count, a repetition, a join, a
replacement, a value turned into text) is reckoned from its operands before it runs (`refuse_beyond`); and what every
operation makes, every value a template prints and every piece of its own text it writes, is counted against the render
(`spend`), so that a loop that makes, prints or writes text again and again stops too. Each refusal is a
`TemplateRuntimeError`: one line at the template's line (`flopkb.site.sandbox.template_failure`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import chain
from string import Formatter

from jinja2.exceptions import TemplateRuntimeError
from jinja2.utils import Namespace

LONGEST = 1_000_000
"""The most characters (or items of a list) one operation of a template may make: `'a' * 10**10` is refused."""
MOST = 100 * LONGEST
"""The most characters (and items) one render of a template may make and write in all."""

_SPENT: ContextVar[list[int] | None] = ContextVar("flopkb_template_spent", default=None)
GROWTH = 12
"""The most characters one character of a text becomes when it is escaped, quoted, encoded or cased (`\\ud83d\\ude00`
in JSON, `%F0%9F%98%80` in a URL)."""
_LEAF = 32
"""The longest text of a number that is not an int (a float's `repr`), `None` or a bool."""


def refuse_beyond(what: str, size: int, operands: Iterable[object] = ()) -> None:
    """Refuse the operation `what`, which would make `size` characters or items, when that is more than `LONGEST`
    beyond the longest text among its `operands` (`'<p>{}</p>'.format(page.content)` copies a long text once: an
    operation on a text is bounded by `affordable`)."""
    given = max((len(operand) for operand in operands if isinstance(operand, (str, bytes))), default=0)
    if size - given > LONGEST:
        raise TemplateRuntimeError(f"{what} would make more than {LONGEST} characters or items")


@contextmanager
def rendering() -> Iterator[None]:
    """Count what is made and printed from here to the end of the block (one render of a template)."""
    token = _SPENT.set([0])
    try:
        yield
    finally:
        _SPENT.reset(token)


def spend(what: str, made: object, *operands: object) -> None:
    """Count `made` (a text, or a collection's items; not one of the `operands` given back) against the render."""
    if not any(made is operand for operand in operands):
        spend_size(what, len(made) if isinstance(made, (str, bytes, list, tuple, dict, set, frozenset)) else 0)


def spend_size(what: str, size: int) -> None:
    """Count `size` characters or items, made by `what`, against the render (none is counted out of a render); refuse
    them as `affordable` does. (Once for each text a page writes: one look-up of the count, not two.)"""
    spent = _SPENT.get()
    if spent is not None:
        if spent[0] + size > MOST:
            raise _too_much(what)
        spent[0] += size


def affordable(what: str, size: int) -> None:
    """Refuse `what`, which may make `size` characters or items, when the render has not that much left of `MOST`
    (before an operation whose result is at most a few times as long as its operands: the largest text a template
    makes, times `GROWTH`, could exhaust the memory)."""
    spent = _SPENT.get()
    if spent is not None and spent[0] + size > MOST:
        raise _too_much(what)


def _too_much(what: str) -> TemplateRuntimeError:
    return TemplateRuntimeError(f"{what}: the template would make more than {MOST} characters or items in all")


def text_size(value: object, step: int = 0) -> int:
    """The length of `str(value)`, counted to just past `LONGEST`: for a collection, about the length of its `repr`,
    its JSON, or its pretty form with `step` more characters of indentation at each level (at least, and at most
    `GROWTH` times as long: a text's characters may be escaped)."""
    if isinstance(value, str):
        return len(value)
    total = 0
    stack: list[tuple[Iterator[object], int]] = [(iter((value,)), 0)]
    while stack and total <= LONGEST:
        items, depth = stack[-1]
        item = next(items, stack)
        if item is stack:
            stack.pop()
            continue
        pad = 1 + depth * step
        total += 4 * pad  # brackets, a separator, a line's end and its indentation
        inner = _inner(item)
        if inner is None:
            total += _leaf_size(item) * pad  # a pretty form may cut a long text at each indented line
        else:
            stack.append((inner, depth + 1))
    return total


def _inner(value: object) -> Iterator[object] | None:
    """What the text of a collection (or of jinja2's `namespace`, or a dict's `keys()`, `values()`, `items()`) shows,
    keys and values; None for a single value."""
    if isinstance(value, Namespace):
        value = object.__getattribute__(value, "_Namespace__attrs")
    if isinstance(value, Mapping):
        return chain.from_iterable(value.items())
    return iter(value) if isinstance(value, (list, tuple, set, frozenset, KeysView, ValuesView, ItemsView)) else None


def _leaf_size(value: object) -> int:
    """About the length of the `repr` or JSON of a single value: a text's characters and quotes (escaped, up to
    `GROWTH` times as many: `\\ud83d\\ude00`)."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, (bytes, bytearray)):
        return len(value) + 3
    if isinstance(value, int):
        return value.bit_length() // 3 + 2
    if value is None or isinstance(value, (float, complex)):
        return _LEAF
    return len(str(value))  # an object handed to the template (a page): its text is what it is, not made here


def as_count(value: object) -> int:
    """`value` as a count or width (a bool or another type counts 0: the operation refuses it itself)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_WIDTHS = re.compile(r"\d+")
_PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)?", re.DOTALL)


def _spec_size(spec: str, arguments: list[object]) -> int:
    """The most a field's format `spec` adds to its value's text: its widths and precisions (each argument that is an
    int, when one is taken from the arguments), and what a spec like a date's `%c` may write for each character."""
    widths = sum(int(digits) if len(digits) < 19 else 10**19 for digits in _WIDTHS.findall(spec))
    taken = sum(abs(as_count(argument)) for argument in arguments) if "*" in spec or "{" in spec else 0
    return widths + taken + 16 * len(spec)


def format_size(text: str, arguments: list[object], percent: bool) -> int:
    """At least the length of `text % arguments` (`percent`) or of `text.format(*arguments)`: the text, and for each
    field its spec's widths and the longest text of an argument (its `repr` for `%r` or `!r`)."""
    fields: list[tuple[str, bool]]
    if percent:
        fields = [(match.group(0), match.group(3) in ("r", "a")) for match in _PERCENT.finditer(text)]
    else:
        fields = [
            (spec or "", conversion in ("r", "a")) for _, name, spec, conversion in _parse(text) if name is not None
        ]
    plain = max((text_size(argument) for argument in arguments), default=0)
    nested = max((text_size([argument]) for argument in arguments), default=0) if any(r for _, r in fields) else 0
    return len(text) + sum(_spec_size(spec, arguments) + (nested if r else plain) + _LEAF for spec, r in fields)


def _parse(text: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """The fields of a `str.format` text, with those nested in a field's spec (`{:{width}}`)."""
    fields = list(Formatter().parse(text))
    return fields + [nested for _, name, spec, _ in fields if name is not None and spec for nested in _parse(spec)]


def format_arguments(arguments: object) -> list[object]:
    """The values a `%` format takes its fields from: a tuple's items, a mapping's values, or the one value."""
    if isinstance(arguments, tuple):
        return list(arguments)
    return list(arguments.values()) if isinstance(arguments, Mapping) else [arguments]


Size = Callable[..., int]
"""The size an operation would make, from the arguments it is called with."""

"""The filters, methods and globals whose result can be much larger than what they are given, each with the size it
would make reckoned from its arguments before it runs (`flopkb.site.bounds`), and every filter made to count what it
makes against the render.

The size functions take the arguments the filter (jinja2's `FILTERS`, with its `environment`, `eval_ctx` or
`context` first when it takes one), the method (after the value it is bound to) or the global takes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import jinja2
from jinja2.filters import make_attrgetter
from jinja2.utils import _PassArg

from flopkb.site.bounds import (
    GROWTH,
    Size,
    affordable,
    as_count,
    format_arguments,
    format_size,
    refuse_beyond,
    spend,
    text_size,
)


def _made_text(value: object) -> int:
    """What turning `value` into text makes anew: nothing for a text, else the length of its text."""
    return 0 if isinstance(value, str) else text_size(value)


def _text(value: object, what: str) -> str:
    """`str(value)`, refused when that would make more than `LONGEST` characters."""
    refuse_beyond(what, _made_text(value))
    return str(value)


def _replaced(text: str, old: Any, new: Any, count: Any) -> int:
    """The length of `text.replace(old, new, count)` (an empty `old` matches before each character and at the end)."""
    if type(old) is not type(text) or type(new) is not type(text):
        return len(text)  # `replace` refuses it
    found = text.count(old) if old else len(text) + 1
    replaced = found if count is None or as_count(count) < 0 else min(found, as_count(count))
    return len(text) + replaced * (len(new) - len(old))


def _joined(items: list[Any], separator: object) -> int:
    return sum(text_size(item) for item in items) + max(len(items) - 1, 0) * text_size(separator)


def _items(environment: jinja2.Environment, items: list[Any], attribute: Any) -> list[Any]:
    return items if attribute is None else list(map(make_attrgetter(environment, attribute), items))


def _center(value: Any, width: Any = 80) -> int:
    return max(text_size(value), as_count(width))


def _indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> int:
    text = _text(s, "'|indent'")
    lines = f"{text}\n".splitlines()[1:]  # as `indent` cuts them (at `\r`, ..., `\u2029` too); the first and blank
    indented = bool(first) + (len(lines) if blank else sum(1 for line in lines if line))  # lines only when asked
    return len(text) + indented * (len(width) if isinstance(width, str) else as_count(width))


def _format(value: Any, *args: Any, **kwargs: Any) -> int:
    return format_size(_text(value, "'|format'"), list(args) + list(kwargs.values()), percent=True)


def _join(eval_ctx: Any, value: list[Any], d: Any = "", attribute: Any = None) -> int:
    return _joined(_items(eval_ctx.environment, value, attribute), d)


def _replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: Any = None) -> int:
    text, old, new = (_text(part, "'|replace'") for part in (s, old, new))
    return _replaced(text, old, new, count)


def _wordwrap(environment: Any, s: Any, width: Any = 79, b: Any = True, wrapstring: Any = None, h: Any = True) -> int:
    size = text_size(s)
    return size + (size + 1) * text_size(environment.newline_sequence if wrapstring is None else wrapstring)


def _urlize(eval_ctx: Any, value: Any, trim: Any = None, nofollow: Any = False, target: Any = None, rel: Any = None,
            extra_schemes: Any = None) -> int:  # fmt: skip
    """Every character escaped (at most 5 for one, `&amp;`), and each word that may be a link written twice, with a
    link's markup and attributes."""
    words = [word for word in _text(value, "'|urlize'").split() if any(mark in word for mark in ".@:")]
    markup = 64 + text_size(target or "") + text_size(rel or "")
    return 5 * text_size(value) + sum(5 * len(word) + markup for word in words)


def _batch(value: Any, linecount: Any, fill_with: Any = None) -> int:
    return 0 if fill_with is None else as_count(linecount)


def _slice(eval_ctx: Any, value: Any, slices: Any, fill_with: Any = None) -> int:
    return as_count(slices)


def _sum(environment: Any, iterable: list[Any], attribute: Any = None, start: Any = 0) -> int:
    if not isinstance(start, (list, tuple)):
        return 0  # numbers; `sum` refuses texts
    items = _items(environment, iterable, attribute)
    return len(start) + sum(len(item) for item in items if isinstance(item, (list, tuple)))


def _pretty(value: Any, step: int) -> int:
    """What the JSON or pretty form of `value` shows anew: nothing more than its text for a text (`affordable`
    bounds that), its items and indentation for a collection."""
    return 0 if isinstance(value, str) else text_size([value], step)


def _tojson(eval_ctx: Any, value: Any, indent: Any = None) -> int:
    return _pretty(value, len(indent) if isinstance(indent, str) else as_count(indent))


_FILTER_SIZES: dict[str, Size] = {
    "center": _center,
    "indent": _indent,
    "format": _format,
    "join": _join,
    "replace": _replace,
    "wordwrap": _wordwrap,
    "urlize": _urlize,
    "batch": _batch,
    "slice": _slice,
    "sum": _sum,
    "tojson": _tojson,
    "pprint": lambda value: _pretty(value, 1),
    "xmlattr": lambda eval_ctx, d, autospace=True: text_size(d),
}
_ITERATED = frozenset({"join", "sum"})
"""The filters that go through their value more than once here: a generator is made a list first."""
_KEPT = frozenset(
    {
        *("attr", "batch", "count", "d", "default", "dictsort", "first", "float", "groupby", "int", "items", "last"),
        *("length", "list", "map", "max", "min", "random", "reject", "rejectattr", "reverse", "round", "select"),
        *("selectattr", "slice", "sort", "sum", "unique", "abs", "filesizeformat"),
    }
)
"""jinja2's filters that do not turn their value into text; every other filter (`upper`, `e`, `safe`, flopkb's `md`,
mkdocs' `url`, ...) may, and is refused a value whose text would be longer than `LONGEST`."""


def bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, the filter `name`, refusing what it would make beyond `LONGEST` (its own size, or its value's text)
    and counting what it makes against the render."""
    if getattr(function, "_flopkb_bounded", False):
        return function
    what = f"'|{name}'"
    value_at = 0 if _PassArg.from_obj(function) is None else 1
    size = _FILTER_SIZES.get(name) or (lambda *args, **kwargs: 0 if name in _KEPT else _made_text(args[value_at]))

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        if name in _ITERATED and len(args) > value_at:
            args = (*args[:value_at], list(args[value_at]), *args[value_at + 1 :])
        if len(args) > value_at:
            refuse_beyond(what, size(*args, **kwargs), (*args, *kwargs.values()))
            affordable(what, growth(args[value_at]))
        made = function(*args, **kwargs)
        spend(what, made, *args)
        return made

    bounded._flopkb_bounded = True  # type: ignore[attr-defined]
    return bounded


class BoundedFilters(dict[str, Callable[..., Any]]):
    """An environment's filters, each made a `bounded_filter` as it is added (mkdocs and flopkb add their own)."""

    def __init__(self, filters: Mapping[str, Callable[..., Any]]) -> None:
        super().__init__()
        self.update(filters)

    def __setitem__(self, name: str, function: Callable[..., Any]) -> None:
        super().__setitem__(name, bounded_filter(name, function))

    def update(self, *others: Any, **more: Callable[..., Any]) -> None:
        for name, function in dict(*others, **more).items():
            self[name] = function


def _width(text: Any, width: Any, fillchar: Any = " ") -> int:
    return max(len(text), as_count(width))


def _expandtabs(text: Any, tabsize: Any = 8) -> int:
    return len(text) + text.count("\t" if isinstance(text, str) else b"\t") * as_count(tabsize)


def _str_join(text: Any, iterable: list[Any]) -> int:
    return _joined(iterable, text)


def _translate(text: Any, table: Any) -> int:
    replacements = table.values() if isinstance(table, Mapping) else []
    return len(text) * max((text_size(replaced) for replaced in replacements), default=1)


def _to_bytes(number: Any, length: Any = 1, byteorder: Any = "big", *, signed: Any = False) -> int:
    return as_count(length)


def _format_method(text: Any, *args: Any, **kwargs: Any) -> int:
    return format_size(text, list(args) + list(kwargs.values()), percent=False)


def _format_map(text: Any, mapping: Any) -> int:
    return format_size(text, format_arguments(mapping), percent=False)


_METHOD_SIZES: dict[str, Size] = {
    "center": _width,
    "ljust": _width,
    "rjust": _width,
    "zfill": _width,
    "expandtabs": _expandtabs,
    "replace": lambda text, old, new, count=None: _replaced(text, old, new, count),
    "join": _str_join,
    "translate": _translate,
    "to_bytes": _to_bytes,
    "format": _format_method,
    "format_map": _format_map,
}
"""The methods of a text (`str`, `bytes`, `Markup`) or an int that may make much more than they are given."""


def _gettext(*texts: Any, **variables: Any) -> int:
    """`gettext`, `ngettext`, `pgettext`, `npgettext`: a translation, formatted with `%` with the variables given."""
    arguments = [*variables.values(), *(text for text in texts if not isinstance(text, str))]
    return max((format_size(text, arguments, percent=True) for text in texts if isinstance(text, str)), default=0)


_GLOBAL_SIZES: dict[str, Size] = {
    "lipsum": lambda n=5, html=True, min=20, max=100: as_count(n) * (17 * as_count(max) + 16),
    **dict.fromkeys(("_", "gettext", "ngettext", "pgettext", "npgettext"), _gettext),
}
"""The globals that may make much more than they are given (`lipsum`: at most 17 characters a word)."""


def growth(value: object) -> int:
    """The most an operation that escapes, quotes, encodes or cases the text (or bytes) `value` makes of it."""
    return GROWTH * len(value) if isinstance(value, (str, bytes)) else 0


def call_size(
    name: str, bound_to: object, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[int, tuple[Any, ...]]:
    """The size the method `name` of `bound_to` (or the global `name`, when `bound_to` is None) would make with `args`
    and `kwargs`, and the `args` to call it with (`join`'s iterable made a list, so that it is gone through once)."""
    if bound_to is None:
        size = _GLOBAL_SIZES.get(name)
        return (size(*args, **kwargs) if size else 0), args
    size = _METHOD_SIZES.get(name)
    if size is None or not isinstance(bound_to, (str, bytes, int)):
        return 0, args
    if name == "join" and args:
        args = (list(args[0]), *args[1:])
    return size(bound_to, *args, **kwargs), args

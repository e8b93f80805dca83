"""The jinja2 sandbox every template of a site renders in: flopkb's page templates and mkdocs' theme.

A base's `site/templates/` and `site/overrides/` are files of a pull request: a template must not run code
(`{{ cycler.__init__.__globals__.os.system(...) }}`). jinja2's immutable sandbox refuses attributes that start
with `_` and the internals of functions, frames and code, and calls that change a list, dict or set. `Sandbox`
also refuses any attribute of a module, or whose value is a module, and every call but of what a template needs:
jinja2's own callables (macros, `super()`, `loop.cycle`, ...), the environment's globals (`range`, `namespace`,
translations), the methods of strings (markupsafe's `Markup` too), numbers, lists, dicts and sets, and reading
a mapping or a sequence (`get`, `items`, `keys`, `values`, `index`, `count`). A method is allowed only as the plain
type defines it: a subclass's own methods are not (mkdocs' `config.plugins` is a dict whose `run_event` calls every
plugin's hooks with what the template passes). The objects handed to templates (paths, flopkb's pages, mkdocs'
configuration and plugins) have methods that write files or run code: none of them is called.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Iterable, Mapping, Sequence
from types import BuiltinMethodType, MethodType, ModuleType
from typing import Any, cast

import jinja2
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.exceptions import SecurityError, TemplateRuntimeError
from jinja2.nodes import Concat
from jinja2.runtime import BlockReference, Context, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Cycler, Joiner
from markupsafe import Markup

from flopkb.site.bounded_calls import BoundedFilters, call_size, growth
from flopkb.site.bounds import (
    GROWTH,
    LONGEST,
    affordable,
    format_arguments,
    format_size,
    refuse_beyond,
    rendering,
    spend,
    spend_size,
    text_size,
)

_PLAIN = (Markup, str, bytes, int, float, tuple, list, dict, set, frozenset, LoopContext, Cycler, Joiner)
"""The types whose own methods a template may call (the immutable sandbox already refuses those that change them)."""
_READS = frozenset({"get", "items", "keys", "values", "index", "count"})
"""The methods a template may call on any other mapping or sequence (mkdocs' configuration, its theme)..."""
_ABSTRACT = (Mapping, Sequence)
"""...as `collections.abc` defines them (they read through `[]` and iteration, which a template has anyway)."""
_JINJA = (Macro, BlockReference, LoopContext, Cycler, Joiner)
"""jinja2's own callables: macros, `caller()`, `super()`, `self.block()`, `loop()`, a cycler, a joiner."""

_FORMAT = getattr(ImmutableSandboxedEnvironment().wrap_str_format("".format), "__code__", None)

WIDEST = 100_000
"""The most bits a template may make an integer of with `*` or `**`: `9 ** (10 ** 9)` is refused."""


class _BoundedTemplate(jinja2.Template):
    """A template whose render counts what it makes and prints (`flopkb.site.bounds.MOST`)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        with rendering():
            return super().render(*args, **kwargs)


class _BoundedCodeGenerator(CodeGenerator):
    """jinja2's compiler, with `a ~ b` checked before it joins (`Sandbox.joinable`), and the template's own text
    counted as it is written (`Sandbox.written`: a loop in a macro keeps a reference to it at each turn)."""

    def _output_const_repr(self, group: Iterable[Any]) -> str:
        return f"environment.written({super()._output_const_repr(group)})"

    @optimizeconst
    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        else:
            join = "markup_join" if frame.eval_ctx.autoescape else "str_join"
        self.write(f"{join}(environment.joinable((")
        for operand in node.nodes:
            self.visit(operand, frame)
            self.write(", ")
        self.write(")))")


def _printed(value: Any) -> Any:
    """`value`, which `{{ value }}` prints: its text counted against the render, and, when it is not a text already
    (a list), refused when its text would be longer than `LONGEST`."""
    size = len(value) if isinstance(value, str) else text_size(value)
    if not isinstance(value, str):
        refuse_beyond("printing a value", size)
    spend_size("printing a value", size + 1)  # and the item that holds it in the output
    return value


class Sandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, with no way into a module, calls only of what a template needs (see the
    module's docstring), and no operation whose result would exhaust the memory of the build
    (`flopkb.site.bounds`)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    compiled_with = " ".join(sorted(intercepted_binops)) + " ~ finalize written"
    """What the compiled code of a template calls the sandbox for (the seal of the template cache names it)."""
    template_class = _BoundedTemplate
    code_generator_class = _BoundedCodeGenerator

    def __init__(self, **options: Any) -> None:
        super().__init__(**options, finalize=_printed)
        self.filters = BoundedFilters(self.filters)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        too_large = _too_large(operator, left, right)
        if too_large:
            raise TemplateRuntimeError(f"{operator!r} would make {too_large}")
        if operator == "%" and isinstance(left, (str, bytes)):
            arguments = format_arguments(right)
            refuse_beyond("'%'", format_size(str(left), arguments, percent=True), (left, *arguments))
        if operator == "+" and all(isinstance(operand, (str, bytes, list, tuple)) for operand in (left, right)):
            affordable("'+'", len(left) + len(right))
        made = super().call_binop(context, operator, left, right)
        spend(repr(operator), made, left, right)
        return made

    def written(self, text: str) -> str:
        """`text`, the template's own, written: counted against the render with the item that holds it."""
        spend_size("writing the template's text", len(text) + 1)
        return text

    def joinable(self, operands: tuple[Any, ...]) -> tuple[Any, ...]:
        """The operands of `~`, when the text of each that is not a text is no longer than `LONGEST`; all their text
        is counted against the render."""
        sizes = [len(operand) if isinstance(operand, str) else text_size(operand) for operand in operands]
        for operand, size in zip(operands, sizes, strict=True):
            if not isinstance(operand, str):
                refuse_beyond("'~'", size)
        affordable("'~'", GROWTH * sum(sizes))  # `markup_join` escapes the texts that are not `Markup`
        spend_size("'~'", sum(sizes))
        return operands

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, ModuleType) or isinstance(value, ModuleType):
            return False
        return super().is_safe_attribute(obj, attr, value)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not self.is_safe_callable(obj):  # jinja2's message would hold the object's repr (and its address)
            raise SecurityError(f"{getattr(obj, '__qualname__', type(obj).__name__)!r} cannot be called")
        made_by_jinja = isinstance(obj, _JINJA)  # a macro, a block: what it writes is counted as it is printed
        if made_by_jinja:
            return context.call(obj, *args, **kwargs)
        name, bound_to = self._named(obj)
        what = repr(name if bound_to is None else f"{type(bound_to).__name__}.{name}")
        size, args = call_size(name, bound_to, args, kwargs)
        refuse_beyond(what, size, (bound_to, *args, *kwargs.values()))
        affordable(what, growth(bound_to))
        made = context.call(obj, *args, **kwargs)
        spend(what, made, bound_to, *args)
        return made

    def _named(self, obj: Any) -> tuple[str, Any]:
        """The name of `obj`, a global or a method (the sandbox's `str.format` as the method it wraps), and the value
        the method is bound to (None for a global)."""
        given = next((name for name, value in self.globals.items() if obj is value), None)
        if given is not None:
            return given, None
        method = obj.__wrapped__ if getattr(obj, "__code__", None) is _FORMAT else obj
        return method.__name__, method.__self__

    def is_safe_callable(self, obj: Any) -> bool:
        if not super().is_safe_callable(obj):
            return False
        if isinstance(obj, _JINJA) or any(obj is given for given in self.globals.values()):
            return True
        if getattr(obj, "__code__", None) is _FORMAT:  # the sandbox's own `str.format`, which wraps the method
            obj = obj.__wrapped__
        owner = getattr(obj, "__self__", None)
        if not isinstance(obj, (BuiltinMethodType, MethodType)) or owner is None:
            return False
        if isinstance(owner, _PLAIN):
            return _defined_by(obj, owner, _PLAIN)
        return isinstance(owner, _ABSTRACT) and obj.__name__ in _READS and _defined_by(obj, owner, _ABSTRACT)


def _defined_by(method: BuiltinMethodType | MethodType, owner: object, kinds: tuple[type, ...]) -> bool:
    """Whether `method`, bound to `owner`, is the method that `owner`'s class takes from one of `kinds`, and not one
    that a subclass adds or overrides (those can do anything)."""
    name = method.__name__
    definer = next((kind for kind in type(owner).__mro__ if name in vars(kind)), None)
    if definer not in kinds:
        return False
    bind = getattr(vars(definer)[name], "__get__", None)
    return bind is not None and bool(bind(owner, type(owner)) == method)


def _too_large(operator: str, left: Any, right: Any) -> str | None:
    """What `left <operator> right` would make, when more than `LONGEST` items or `WIDEST` bits; else None."""
    if not (isinstance(left, int) and isinstance(right, int)):
        if operator == "*":
            repeated, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(repeated, (str, bytes, list, tuple)) and isinstance(count, int):
                items = len(repeated) * count
                return f"{items} items, more than {LONGEST}" if items > LONGEST else None
        return None
    bits = left.bit_length() + right.bit_length() if operator == "*" else 0
    if operator == "**" and right > 0 and abs(left) > 1:
        bits = math.ceil(right * math.log2(abs(left)))
    return f"a number of about {bits} bits, more than {WIDEST}" if bits > WIDEST else None


def sandboxed(env: jinja2.Environment) -> Sandbox:
    """`env`, made by code that is not flopkb's (mkdocs' theme: its loader, filters, extensions and translations),
    turned into a `Sandbox` before it loads a template, with what `SandboxedEnvironment.__init__` adds."""
    reference = Sandbox()
    env.__class__ = Sandbox
    env.globals["range"] = reference.globals["range"]
    turned = cast(Sandbox, env)
    turned.binop_table, turned.unop_table = reference.binop_table, reference.unop_table
    turned.filters, turned.finalize = BoundedFilters(env.filters), _printed
    return turned


class TemplateFailed(Exception):
    """A template of the site cannot be rendered; the message is one line: the template's file and line, and why."""


def _template_frames(error: BaseException) -> list[tuple[str, int]]:
    """The template files and lines in `error`'s traceback, outermost first (jinja2 gives the frames of a template's
    code the template's file and line)."""
    walked = traceback.walk_tb(error.__traceback__)
    return [(frame.f_code.co_filename, line) for frame, line in walked if "__jinja_exception__" in frame.f_globals]


def raised_in_template(error: Exception) -> bool:
    """Whether `error` is jinja2's, or was raised by a template's code (`{{ 1 // 0 }}`), and not by the code around."""
    return isinstance(error, jinja2.TemplateError) or bool(_template_frames(error))


def template_failure(error: Exception, name: str) -> TemplateFailed:
    """`error`, raised rendering the template `name`, as a `TemplateFailed` at the template's line that raised it."""
    frames = _template_frames(error)
    where, line = frames[-1] if frames else (getattr(error, "filename", None) or name, getattr(error, "lineno", None))
    at = f"{where}:{line}" if line else where
    if isinstance(error, SecurityError):
        refused = (error.message or "").rstrip(".")
        return TemplateFailed(
            f"{at}: {refused}: templates render in a sandbox, with no attribute that starts with '_', no module, and"
            " no call but of macros, globals and the methods of strings, numbers, lists and dicts"
        )
    why = error.message if isinstance(error, jinja2.TemplateError) else str(error)
    return TemplateFailed(f"{at}: the template cannot be rendered: {why or type(error).__name__}")

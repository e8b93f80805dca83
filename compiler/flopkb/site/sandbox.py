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

import traceback
from collections.abc import Mapping, Sequence
from types import BuiltinMethodType, MethodType, ModuleType
from typing import Any, cast

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.runtime import BlockReference, Context, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Cycler, Joiner
from markupsafe import Markup

_PLAIN = (Markup, str, bytes, int, float, tuple, list, dict, set, frozenset, LoopContext, Cycler, Joiner)
"""The types whose own methods a template may call (the immutable sandbox already refuses those that change them)."""
_READS = frozenset({"get", "items", "keys", "values", "index", "count"})
"""The methods a template may call on any other mapping or sequence (mkdocs' configuration, its theme)..."""
_ABSTRACT = (Mapping, Sequence)
"""...as `collections.abc` defines them (they read through `[]` and iteration, which a template has anyway)."""
_JINJA = (Macro, BlockReference, LoopContext, Cycler, Joiner)
"""jinja2's own callables: macros, `caller()`, `super()`, `self.block()`, `loop()`, a cycler, a joiner."""

_FORMAT = getattr(ImmutableSandboxedEnvironment().wrap_str_format("".format), "__code__", None)


class Sandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, with no way into a module, and calls only of what a template needs (see the
    module's docstring)."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, ModuleType) or isinstance(value, ModuleType):
            return False
        return super().is_safe_attribute(obj, attr, value)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not self.is_safe_callable(obj):  # jinja2's message would hold the object's repr (and its address)
            raise SecurityError(f"{getattr(obj, '__qualname__', type(obj).__name__)!r} cannot be called")
        return context.call(obj, *args, **kwargs)

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


def sandboxed(env: jinja2.Environment) -> Sandbox:
    """`env`, made by code that is not flopkb's (mkdocs' theme: its loader, filters, extensions and translations),
    turned into a `Sandbox` before it loads a template, with what `SandboxedEnvironment.__init__` adds."""
    reference = Sandbox()
    env.__class__ = Sandbox
    env.globals["range"] = reference.globals["range"]
    turned = cast(Sandbox, env)
    turned.binop_table, turned.unop_table = reference.binop_table, reference.unop_table
    return turned


class TemplateFailed(Exception):
    """A template of the site cannot be rendered; the message is one line: the template's file and line, and why."""


def template_failure(error: jinja2.TemplateError, name: str) -> TemplateFailed:
    """`error`, raised rendering the template `name`, as a `TemplateFailed` at the template's line that raised it
    (jinja2 gives the frames of a template's code the template's file and line)."""
    where = getattr(error, "filename", None) or name
    line = getattr(error, "lineno", None)
    for frame, number in traceback.walk_tb(error.__traceback__):
        if "__jinja_exception__" in frame.f_globals:
            where, line = frame.f_code.co_filename, number
    at = f"{where}:{line}" if line else where
    if isinstance(error, SecurityError):
        refused = (error.message or "").rstrip(".")
        return TemplateFailed(
            f"{at}: {refused}: templates render in a sandbox, with no attribute that starts with '_', no module, and"
            " no call but of macros, globals and the methods of strings, numbers, lists and dicts"
        )
    return TemplateFailed(f"{at}: the template cannot be rendered: {error.message or type(error).__name__}")

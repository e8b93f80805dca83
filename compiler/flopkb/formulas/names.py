"""The names an expression uses that are neither inputs of its formula nor hardware parameters, each with the fix
an author applies: a formula's expression is checked before it is evaluated, so every unknown name of it is told in
the same run (`hw.memory_bandwith` and `kv_byte` of one expression together)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import NamedTuple

from flopkb.formulas.expr import HwParam, Name, Node
from flopkb.report.cut import cut
from flopkb.report.hints import closest, snake_case, suggest


class Unknown(NamedTuple):
    """A name no formula can use: its column in the expression, the message and the hint."""

    offset: int
    message: str
    hint: str


def unknown_names(nodes: Iterable[Node], inputs: Collection[str], parameters: Collection[str]) -> list[Unknown]:
    """Each name of `nodes` that is not one of `inputs`, and each `hw.<name>` that is not one of `parameters`, in the
    order written (a name written twice is told at its first place)."""
    told: dict[str, Unknown] = {}
    for node in nodes:
        if isinstance(node, HwParam) and node.name not in parameters:
            told.setdefault(f"hw.{node.name}", unknown_parameter(node, parameters))
        elif isinstance(node, Name) and node.id not in inputs:
            hint = input_hint(node.id, inputs, [f"hw.{param}" for param in sorted(parameters)])
            message = f"`{cut(node.id)}` is neither an input of the formula nor hw.<parameter>"
            told.setdefault(node.id, Unknown(node.offset, message, hint))
    return sorted(told.values())


def unknown_parameter(node: HwParam, parameters: Collection[str]) -> Unknown:
    close = closest(node.name, list(parameters))
    listed = f"the parameters are {', '.join(sorted(parameters))}"
    hint: str = suggest(f"hw.{node.name}", [f"hw.{close[0]}"]) if close else listed
    message = f"hw.{cut(node.name)} is not a hardware parameter (schema/vocabulary.yaml has no `{cut(node.name)}`)"
    return Unknown(node.offset, message, hint)


def input_hint(name: str, inputs: Collection[str], parameters: Collection[str]) -> str:
    """The fix of `name`, no input of the formula: the input or `hw.<parameter>` (of `parameters`) it is closest
    to, or to add it to the formula's inputs."""
    close = closest(name, [*inputs, *parameters])
    if not close:
        return "add it to the formula's `inputs`"
    if close[0] in inputs and not close[0].isidentifier():  # never suggest a name the expression cannot use
        return f"rename the input `{cut(close[0])}` to {cut(snake_case(close[0]) or name)}"
    return suggest(name, close[:1])

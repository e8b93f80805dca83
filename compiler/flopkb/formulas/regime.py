"""A formula's regime, `valid_when`: comparisons of expressions, joined by `and`, that say where the model holds.

`batch * (k + 1) <= hw.peak_bf16_dense * bytes_per_param / (flops_per_param_token * hw.memory_bandwidth)`
is parsed by the formula grammar (`flopkb.formulas.expr`): each side is an
expression of the language, and the only additions are the comparisons
`< <= > >=` (chained, `a <= b < c`) and `and`. Nothing is executed. Each
comparison is evaluated as the difference of its sides, so the two sides must
have the same dimension (else `formula-unit-mismatch`), with the evaluator
that computes the formula itself (`flopkb.formulas.evaluate`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flopkb.formulas.evaluate import Evaluation, FormulaProblem, QuantityLike, Scope, evaluate_over
from flopkb.formulas.expr import (
    BinOp,
    Expr,
    HwParam,
    Name,
    Node,
    expression_converter,
    node_text,
    parsable_text,
    walk,
)

_COMPARISONS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_HOLDS = {
    "<": lambda difference: difference < 0,
    "<=": lambda difference: difference <= 0,
    ">": lambda difference: difference > 0,
    ">=": lambda difference: difference >= 0,
}


@dataclass(frozen=True)
class Comparison:
    op: str
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"{node_text(self.left)} {self.op} {node_text(self.right)}"

    @property
    def difference(self) -> Expr:
        """`left - right` as an expression: its sign decides the comparison."""
        root = BinOp("-", self.left, self.right, self.left.offset)
        nodes = list(walk(root))
        names = frozenset(node.id for node in nodes if isinstance(node, Name))
        params = frozenset(node.name for node in nodes if isinstance(node, HwParam))
        return Expr(root, str(self), names, params)


@dataclass(frozen=True)
class Condition:
    """A parsed `valid_when`: every comparison must hold."""

    comparisons: tuple[Comparison, ...]
    source: str

    def __str__(self) -> str:
        return " and ".join(str(comparison) for comparison in self.comparisons)

    @property
    def inputs_used(self) -> frozenset[str]:
        return frozenset().union(*(c.difference.inputs_used for c in self.comparisons))

    @property
    def hw_params_used(self) -> frozenset[str]:
        return frozenset().union(*(c.difference.hw_params_used for c in self.comparisons))


def parse_condition(source: str) -> Condition:
    """Parse a `valid_when`, or raise ExprSyntaxError (offset: the column in `source`)."""
    text, shift = parsable_text(source, "valid_when", "valid_when")
    converter = expression_converter(text, shift)
    tree = converter.parse()
    parts = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
    comparisons: list[Comparison] = []
    for part in parts:
        if not isinstance(part, ast.Compare):
            raise converter.error(part, "valid_when is comparisons (<, <=, >, >=) of expressions, joined by `and`")
        left = part.left
        for op, right in zip(part.ops, part.comparators, strict=True):
            if type(op) not in _COMPARISONS:
                raise converter.error(part, "valid_when compares with <, <=, > or >= only")
            comparisons.append(
                Comparison(_COMPARISONS[type(op)], converter.convert(left, 1), converter.convert(right, 1))
            )
            left = right
    return Condition(tuple(comparisons), source)


def holds_at(
    condition: Condition,
    inputs: Mapping[str, QuantityLike | list[QuantityLike]],
    scopes: Sequence[Scope],
    swept: Sequence[str],
) -> list[bool]:
    """Whether the condition holds at each point of the sweep over `swept` (in the formula's order: per scope, then
    per point); raises FormulaProblem when a side does not evaluate or the sides' units differ."""
    holds: list[bool] | None = None
    for comparison in condition.comparisons:
        try:
            values = evaluate_over(comparison.difference, inputs, list(scopes), swept)
        except FormulaProblem as problem:
            raise _as_compared(problem, comparison) from None
        test = _HOLDS[comparison.op]
        now = [test(value) for value in values]
        holds = now if holds is None else [a and b for a, b in zip(holds, now, strict=True)]
    return holds or []


def _as_compared(problem: FormulaProblem, comparison: Comparison) -> FormulaProblem:
    """A problem of the difference the comparison is evaluated as, told of the comparison as written: its two sides
    in other dimensions (`weight_bytes <= hw.memory_bandwidth`), not an `a - b` the author never wrote."""
    clash = f"in `{node_text(comparison.difference.root)}`: units do not match: "
    if problem.code != "formula-unit-mismatch" or not problem.message.startswith(clash):
        return problem
    left, right = problem.message.removeprefix(clash).split(" - ", 1)
    return FormulaProblem(
        problem.code,
        f"`{comparison}` compares {left} with {right}",
        "compare quantities of one dimension: correct the side that is not the quantity meant",
        offset=problem.offset,
    )


def mark(evaluations: Sequence[Evaluation], holds: Sequence[bool]) -> list[Evaluation]:
    """The evaluations, each marked in or outside the regime."""
    return [
        evaluation if inside else evaluation.outside() for evaluation, inside in zip(evaluations, holds, strict=True)
    ]

"""Numeric evaluation of parsed formulas, with units checked once per formula, not per point.

pint arithmetic costs 10-20 µs an operation: too slow for ~1,000 formulas times
accelerators times sweep points. So each input and spec is reduced once to a
float in base units (byte, FLOP, s, J) and a dimension; dimensions propagate
symbolically over the tree, once per formula and accelerator; then every point
is plain float arithmetic in a closure compiled from the tree, and the result
is divided by the factor of the formula's `unit`.

Only floats are ever computed (never Python big ints), powers are bounded
before they are computed, and sweeps are sized before they are enumerated.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Union

from flopkb.formulas.expr import (
    BinOp,
    Call,
    Expr,
    HwParam,
    Name,
    Neg,
    Node,
    Num,
    node_text,
    number_text,
    walk,
)
from flopkb.formulas.names import input_hint
from flopkb.formulas.units import (
    DIMENSIONLESS,
    Dimension,
    Exponent,
    QuantityError,
    base_scale,
    dimension_unit,
    exact,
    format_dimension,
    format_value,
    parse_unit,
    to_base,
)
from flopkb.report.cut import cut
from flopkb.report.paths import field_path

if TYPE_CHECKING:
    from flopkb.formulas.units import Quantity

SWEEP_LIMIT = 10_000
RECORD_VALUE_LIMIT = 100_000
"""The values a record's formulas may compute in all, borrowed (`ref`) formulas included."""
BASE_VALUE_LIMIT = 2_000_000
"""The values every formula of a base may compute in all."""
EXPONENT_LIMIT = 1024.0

QuantityLike = Union["Quantity", float, int]
"""An input or spec value: a pint quantity, or a bare (dimensionless) number."""


class FormulaProblem(Exception):
    """A formula that cannot be evaluated. `code` is a catalogue code; `offset` a column in the expression."""

    def __init__(
        self,
        code: str,
        message: str,
        hint: str | None = None,
        offset: int | None = None,
        in_inputs: tuple[str | int, ...] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.offset = offset
        self.in_inputs = in_inputs
        """Where in `inputs` the problem is, when it is there: `(name,)` or `(name, index)` of a sweep's value."""
        self.of_regime = False
        """Whether it comes of a `hw.` that only the formula's `valid_when` uses: it is told there."""
        self.computes: Dimension | None = None
        """What the expression computes, when it is not of the dimension of the formula's `unit`."""


Point = tuple[tuple[str, QuantityLike], ...]
"""A sweep point: the swept inputs' values as given, in input order; () without sweeps."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One computed value: for one accelerator (None when the expression uses no `hw.`) and one sweep point."""

    hardware: str | None
    point: Point
    value: float  # in `unit`
    unit: str
    in_regime: bool = True
    """False when the formula's `valid_when` does not hold at this point (`flopkb.formulas.regime`)."""

    def outside(self) -> Evaluation:
        return Evaluation(self.hardware, self.point, self.value, self.unit, in_regime=False)


Scope = tuple[str | None, Mapping[str, QuantityLike]]


def evaluate_formula(
    expr: Expr,
    unit: str,
    inputs: Mapping[str, QuantityLike | list[QuantityLike]],
    hardware: Mapping[str, Mapping[str, QuantityLike]] | None = None,
    also_swept: Sequence[str] = (),
) -> list[Evaluation]:
    """Every value of `expr` in `unit`: per accelerator in `hardware` (id -> spec values) when the
    expression uses `hw.`, once otherwise; per point of the cartesian product of the list-valued
    (swept) inputs. Inputs the expression does not use are ignored, but for `also_swept` (the inputs of
    its regime). Raises FormulaProblem."""
    if not expr.hw_params_used:
        scopes: list[Scope] = [(None, {})]
    elif hardware:
        scopes = list(hardware.items())
    else:
        raise _no_accelerator(expr)
    return _evaluate(expr, unit, inputs, scopes, also_swept)


def evaluate_point(
    expr: Expr,
    unit: str,
    values: Mapping[str, QuantityLike],
    hw: Mapping[str, QuantityLike] | None = None,
) -> float:
    """The value of `expr` in `unit` at one point (an `expect` row, a what-if); `hw` is one accelerator's specs."""
    swept = [name for name in expr.inputs_used if isinstance(values.get(name), list)]
    if swept:
        raise FormulaProblem("formula-error", f"input `{cut(min(swept))}` has several values; give one")
    if expr.hw_params_used and hw is None:
        raise _no_accelerator(expr)
    return _evaluate(expr, unit, values, [(None, hw or {})])[0].value


def value_count(expr: Expr, inputs: Mapping[str, object], accelerators: int, also_swept: Sequence[str] = ()) -> int:
    """How many values `evaluate_formula` would compute: sweep points times accelerators (0 for a sweep over the
    limit, which is refused before anything is computed)."""
    points = math.prod(
        len(value)
        for name, value in inputs.items()
        if isinstance(value, list) and (name in expr.inputs_used or name in also_swept)
    )
    return 0 if points > SWEEP_LIMIT else points * (max(accelerators, 1) if expr.hw_params_used else 1)


def evaluate_over(
    expr: Expr,
    inputs: Mapping[str, QuantityLike | list[QuantityLike]],
    scopes: list[Scope],
    swept: Sequence[str],
) -> list[float]:
    """The values of `expr` in base units, whatever its dimension, at the points of the sweep over `swept` (inputs
    the expression does not use included), per scope: aligned with a formula's evaluations over the same sweep."""
    return [evaluation.value for evaluation in _evaluate(expr, None, inputs, scopes, swept)]


def _user(expr: Expr, param: str) -> str:
    """What uses `hw.<param>`: the expression, or only its formula's `valid_when` (whose parameters the stage adds to
    the expression's, to put the formula on its accelerators)."""
    own = any(isinstance(node, HwParam) and node.name == param for node in walk(expr.root))
    return "the expression" if own else "valid_when"


def _no_accelerator(expr: Expr) -> FormulaProblem:
    param = min(expr.hw_params_used)
    return _used_by(
        expr,
        param,
        FormulaProblem(
            "formula-missing-spec",
            f"{_user(expr, param)} uses hw.{cut(param)} but no accelerator is in scope",
            "name accelerators in the formula's `hardware`, or in the record's `affected_by_hardware`",
        ),
    )


def _used_by(expr: Expr, param: str, problem: FormulaProblem) -> FormulaProblem:
    problem.of_regime = _user(expr, param) == "valid_when"
    return problem


def _evaluate(
    expr: Expr,
    unit: str | None,
    inputs: Mapping[str, QuantityLike | list[QuantityLike]],
    scopes: list[Scope],
    also_swept: Sequence[str] = (),
) -> list[Evaluation]:
    """Every value in `unit` (None: in base units, any dimension); the sweep covers the inputs the expression uses
    and `also_swept`."""
    scale, target = _target(unit) if unit is not None else (1.0, None)
    _check_names(expr, inputs, scopes)
    used = [name for name in inputs if name in expr.inputs_used or name in also_swept]
    sweeps = {name: values for name in used if isinstance(values := inputs[name], list)}
    _check_sweep_size(sweeps)
    fixed: dict[str, float] = {}
    swept_bases: dict[str, list[float]] = {}
    input_dimensions: dict[str, Dimension] = {}
    mixed: dict[str, list[Dimension]] = {}
    for name in used:
        value = inputs[name]
        if isinstance(value, list):
            reduced = [_reduce(f"input `{cut(name)}`", item) for item in value]
            found = [dimension for _, dimension in reduced]
            if len(set(found)) > 1:
                mixed[name] = found
            swept_bases[name], input_dimensions[name] = [base for base, _ in reduced], found[0]
        else:
            fixed[name], input_dimensions[name] = _reduce(f"input `{cut(name)}`", value)
    if mixed:
        raise _mixed_sweep(expr, target, input_dimensions, mixed, inputs, scopes[0])
    points = _points(sweeps, swept_bases)
    compiled = _compile(expr.root)
    analysed: dict[frozenset[tuple[str, Dimension]], Dimension] = {}
    evaluations: list[Evaluation] = []
    for hardware, specs in scopes:
        env, dimensions = dict(fixed), dict(input_dimensions)
        for param in sorted(expr.hw_params_used):
            env[f"hw.{param}"], dimensions[f"hw.{param}"] = _reduce_spec(hardware, specs, param, expr)
        key = frozenset(dimensions.items())  # accelerators with specs in the same dimensions share one analysis
        if key not in analysed:
            analysed[key] = _dimension(expr.root, dimensions)
        if unit is not None and target is not None:
            _check_target(expr, analysed[key], target, unit)
        for shown, bases in points:
            env.update(bases)
            value = _run(compiled, env, hardware, shown) / scale
            if not math.isfinite(value):
                raise _arithmetic_problem("the value overflows in the formula's unit", hardware, shown)
            evaluations.append(Evaluation(hardware, shown, value, unit or ""))
    return evaluations


# Inputs, specs and names -----------------------------------------------------


def _points(
    sweeps: Mapping[str, list[QuantityLike]], bases: Mapping[str, list[float]]
) -> list[tuple[Point, list[tuple[str, float]]]]:
    """Each sweep point as given (for display) and as base-unit floats (for computing)."""
    swept = list(sweeps)
    axes = [list(zip(sweeps[name], bases[name], strict=True)) for name in swept]
    return [
        (
            tuple(zip(swept, (given for given, _ in point), strict=True)),
            list(zip(swept, (base for _, base in point), strict=True)),
        )
        for point in itertools.product(*axes)
    ]


@functools.lru_cache(maxsize=1024)
def _target(unit: str) -> tuple[float, Dimension]:
    try:
        return base_scale(parse_unit(unit))
    except QuantityError as error:
        raise FormulaProblem("invalid-value", f"unit: {error.message}", error.hint) from None


def _check_names(expr: Expr, inputs: Mapping[str, object], scopes: list[Scope]) -> None:
    if expr.inputs_used <= inputs.keys():
        return
    unknown = [node for node in walk(expr.root) if isinstance(node, Name) and node.id not in inputs]
    names = list(dict.fromkeys(node.id for node in unknown))
    others = f" (also unknown: {', '.join(f'`{cut(name)}`' for name in names[1:])})" if names[1:] else ""
    params = sorted({f"hw.{param}" for _, specs in scopes for param in specs})
    raise FormulaProblem(
        "formula-unknown-name",
        f"`{cut(names[0])}` is neither an input of the formula nor hw.<parameter>{others}",
        input_hint(names[0], inputs, params),
        unknown[0].offset,
    )


def _check_sweep_size(sweeps: Mapping[str, list[QuantityLike]]) -> None:
    sizes = [len(values) for values in sweeps.values()]
    empty = [name for name, size in zip(sweeps, sizes, strict=True) if size == 0]
    if empty:
        raise FormulaProblem("formula-error", f"sweep input `{cut(empty[0])}` has no values")
    points = math.prod(sizes)
    if points > SWEEP_LIMIT:
        shape = " × ".join(f"{size} ({cut(name)})" for name, size in zip(sweeps, sizes, strict=True))
        raise FormulaProblem(
            "formula-error", f"the sweep has {points:,} points ({shape}); the limit is {SWEEP_LIMIT:,}"
        )


def _mixed_sweep(
    expr: Expr,
    target: Dimension | None,
    dimensions: Mapping[str, Dimension],
    mixed: Mapping[str, list[Dimension]],
    inputs: Mapping[str, QuantityLike | list[QuantityLike]],
    scope: Scope,
) -> FormulaProblem:
    """The problem of a sweep whose values differ in dimension, at its odd value: the one whose dimension is not
    the one that gives the formula its unit, or else not the one most of the sweep has. The first value is no
    more likely to be right than any other."""
    name, found = next(iter(mixed.items()))
    values = inputs[name]
    assert isinstance(values, list)
    truth, by_formula = _sweep_dimension(expr, target, dimensions, mixed, scope)
    if truth is None:
        kinds = sorted(set(found))
        return FormulaProblem(
            "formula-unit-mismatch",
            f"sweep input `{cut(name)}` mixes {' and '.join(format_dimension(dimension) for dimension in kinds)}",
            f"write every value of `{cut(name)}` in units of one dimension, e.g. all in "
            + " or all in ".join(dimension_unit(dimension) for dimension in kinds),
            in_inputs=(name,),
        )
    index = next(index for index, dimension in enumerate(found) if dimension != truth)
    needs = (
        f"`{cut(str(expr))}` needs {format_dimension(truth)}"
        if by_formula
        else f"the sweep is {format_dimension(truth)}"
    )
    return FormulaProblem(
        "formula-unit-mismatch",
        f"sweep input `{cut(name)}`: {format_value(values[index])} ({cut(field_path(('inputs', name, index)))}) is "
        f"{format_dimension(found[index])}, but {needs}",
        f"write it in a unit of {dimension_unit(truth)}, like {format_value(values[found.index(truth)])}",
        in_inputs=(name, index),
    )


def _sweep_dimension(
    expr: Expr,
    target: Dimension | None,
    dimensions: Mapping[str, Dimension],
    mixed: Mapping[str, list[Dimension]],
    scope: Scope,
) -> tuple[Dimension | None, bool]:
    """The dimension the first mixed sweep should have: the only one of its values' that makes the formula come
    out in its unit (then True), or else the one most of its values have; None when neither tells."""
    name, found = next(iter(mixed.items()))
    counts = Counter(found).most_common()
    env = {**dimensions, **{other: Counter(values).most_common(1)[0][0] for other, values in mixed.items()}}
    try:
        for param in expr.hw_params_used:
            env[f"hw.{param}"] = _reduce_spec(scope[0], scope[1], param, expr)[1]
    except FormulaProblem:
        pass  # the formula cannot tell without this accelerator's spec: the sweep's majority may
    else:  # a target of None (a computation in base units, of any dimension) tells nothing either
        fitting = [
            dimension for dimension, _ in counts if target is not None and _fits(expr, {**env, name: dimension}, target)
        ]
        if len(fitting) == 1:
            return fitting[0], True
    return (counts[0][0] if counts[0][1] > counts[1][1] else None), False


def _fits(expr: Expr, env: Mapping[str, Dimension], target: Dimension) -> bool:
    try:
        return _dimension(expr.root, env) == target
    except FormulaProblem:
        return False


def _reduce_spec(
    hardware: str | None, specs: Mapping[str, QuantityLike], param: str, expr: Expr
) -> tuple[float, Dimension]:
    if param not in specs:  # `param` is a term of the vocabulary (the stage reports any other): the spec is missing
        accelerator = hardware or "the accelerator"
        raise _used_by(
            expr,
            param,
            FormulaProblem(
                "formula-missing-spec",
                f"{accelerator} has no spec `{cut(param)}`, which {_user(expr, param)} uses (hw.{cut(param)})",
                f"give {accelerator} a spec `{cut(param)}` in its `specs` "
                f'(e.g. `{cut(param)}: {{value: "...", basis: vendor-spec}}`), '
                "or leave it out of the formula's `hardware`",
            ),
        )
    return _reduce(f"hw.{cut(param)} of {hardware or 'the accelerator'}", specs[param])


def _reduce(what: str, value: QuantityLike) -> tuple[float, Dimension]:
    if isinstance(value, bool):
        raise FormulaProblem("invalid-value", f"{what} is a boolean, not a quantity")
    if isinstance(value, (int, float)):
        reduced = float(value), DIMENSIONLESS
    elif hasattr(value, "magnitude") and hasattr(value, "_units"):
        reduced = to_base(value)
    else:
        raise FormulaProblem("invalid-value", f"{what} is a {type(value).__name__}, not a quantity")
    if not math.isfinite(reduced[0]):
        raise FormulaProblem("formula-error", f"{what} is not a finite number")
    return reduced


# Dimensions ------------------------------------------------------------------


def _dimension(node: Node, env: Mapping[str, Dimension]) -> Dimension:
    """The dimension of `node`'s value, or FormulaProblem where units do not add up."""
    match node:
        case Num():
            return DIMENSIONLESS
        case Name(id=name):
            return env[name]
        case HwParam(name=name):
            return env[f"hw.{name}"]
        case Neg(operand=operand):
            return _dimension(operand, env)
        case BinOp(op="+" | "-", left=left, right=right):
            return _same(node, [_dimension(left, env), _dimension(right, env)], f" {node.op} ")
        case BinOp(op="*" | "/", left=left, right=right):
            return _multiply(_dimension(left, env), _dimension(right, env), 1 if node.op == "*" else -1)
        case BinOp(op="**", left=left, right=right):
            return _power_dimension(node, _dimension(left, env), _dimension(right, env))
        case Call(func="min" | "max", args=args):
            return _same(node, [_dimension(arg, env) for arg in args], ", ")
        case Call(func="abs", args=(arg,)):
            return _dimension(arg, env)
        case Call(func="sqrt", args=(arg,)):
            return _scale(_dimension(arg, env), Fraction(1, 2))
        case Call(func=func, args=(arg,)):
            dimension = _dimension(arg, env)
            if dimension:
                raise _mismatch(node, f"{func}() needs a dimensionless argument, not {format_dimension(dimension)}")
            return DIMENSIONLESS
    raise TypeError(node)


def _same(node: Node, dimensions: list[Dimension], separator: str) -> Dimension:
    if any(dimension != dimensions[0] for dimension in dimensions):
        clash = separator.join(format_dimension(dimension) for dimension in dimensions)
        raise _mismatch(node, f"units do not match: {clash}")
    return dimensions[0]


def _multiply(left: Dimension, right: Dimension, sign: int) -> Dimension:
    if not right:
        return left
    exponents = dict(left)
    for name, exponent in right:
        exponents[name] = exponents.get(name, 0) + sign * exponent
    return tuple(sorted((name, _whole(exponent)) for name, exponent in exponents.items() if exponent))


def _scale(dimension: Dimension, factor: Fraction) -> Dimension:
    return tuple((name, _whole(exponent * factor)) for name, exponent in dimension if exponent * factor)


def _whole(exponent: Exponent) -> Exponent:
    return exponent if isinstance(exponent, int) else exact(exponent)


def _power_dimension(node: BinOp, base: Dimension, exponent: Dimension) -> Dimension:
    if exponent:
        raise _mismatch(node, f"an exponent must be dimensionless, not {format_dimension(exponent)}")
    if not base:
        return DIMENSIONLESS
    if any(isinstance(child, (Name, HwParam)) for child in walk(node.right)):
        raise _mismatch(node, f"a base of dimension {format_dimension(base)} needs a constant exponent")
    value = _run(_compile(node.right), {}, None, ())
    if abs(value) > EXPONENT_LIMIT:
        raise FormulaProblem("formula-error", _exponent_message(value), offset=node.offset)
    power = Fraction(value).limit_denominator(1000)
    return _scale(base, power if math.isclose(power, value) else Fraction(value))


def _mismatch(node: Node, message: str) -> FormulaProblem:
    return FormulaProblem("formula-unit-mismatch", f"in `{cut(node_text(node))}`: {message}", offset=node.offset)


def _check_target(expr: Expr, dimension: Dimension, target: Dimension, unit: str) -> None:
    if dimension != target:
        if unit.strip() == "1":
            wanted = "the formula has no unit (dimensionless)"
        else:
            wanted = f"unit {unit!r} is {format_dimension(target)}"
        problem = FormulaProblem(
            "formula-unit-mismatch",
            f"the result is {format_dimension(dimension)} but {wanted}",
            f"`{cut(str(expr))}` comes out in {dimension_unit(dimension)}: use a unit of that dimension "
            f"(e.g. `unit: {dimension_unit(dimension)}`), or fix the expression",
        )
        problem.computes = dimension
        raise problem


# Compiled arithmetic ---------------------------------------------------------

Compiled = Callable[[Mapping[str, float]], float]


class _Refused(ArithmeticError):
    """A computation refused before it starts (an exponent too large)."""


def _exponent_message(value: float) -> str:
    return f"exponent {number_text(value)} is out of bounds (at most ±{number_text(EXPONENT_LIMIT)})"


def _power(base: float, exponent: float) -> float:
    if abs(exponent) > EXPONENT_LIMIT:
        raise _Refused(_exponent_message(exponent))
    return math.pow(base, exponent)


def _integral(function: Callable[[float], int]) -> Callable[[float], float]:
    return lambda value: float(function(value))


_BINARY: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": _power,
}
_UNARY: dict[str, Callable[[float], float]] = {
    "abs": abs,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "ceil": _integral(math.ceil),
    "floor": _integral(math.floor),
}
_VARIADIC: dict[str, Callable[[Iterable[float]], float]] = {"min": min, "max": max}


@functools.lru_cache(maxsize=4096)
def _compile(node: Node) -> Compiled:
    """A closure computing `node` from base-unit floats keyed by input name and `hw.<parameter>`."""
    match node:
        case Num(value=value):
            return lambda env: value
        case Name(id=name):
            return operator.itemgetter(name)
        case HwParam(name=name):
            return operator.itemgetter(f"hw.{name}")
        case Neg(operand=operand):
            inner = _compile(operand)
            return lambda env: -inner(env)
        case BinOp(op=op, left=left, right=right):
            binary, first, second = _BINARY[op], _compile(left), _compile(right)
            return lambda env: binary(first(env), second(env))
        case Call(func=func, args=(arg,)) if func in _UNARY:
            unary, inner = _UNARY[func], _compile(arg)
            return lambda env: unary(inner(env))
        case Call(func=func, args=args):
            variadic, inners = _VARIADIC[func], [_compile(arg) for arg in args]
            return lambda env: variadic([inner(env) for inner in inners])
    raise TypeError(node)


def _run(compiled: Compiled, env: Mapping[str, float], hardware: str | None, point: Point) -> float:
    try:
        value = compiled(env)
    except ZeroDivisionError:
        raise _arithmetic_problem("division by zero", hardware, point) from None
    except OverflowError:
        raise _arithmetic_problem("overflow: a value is too large", hardware, point) from None
    except ValueError:
        what = "math domain error (a logarithm or square root of a negative number, or 0 to a negative power)"
        raise _arithmetic_problem(what, hardware, point) from None
    except _Refused as refusal:
        raise _arithmetic_problem(str(refusal), hardware, point) from None
    if not math.isfinite(value):
        raise _arithmetic_problem("overflow: the result is not a finite number", hardware, point)
    return value


def _arithmetic_problem(what: str, hardware: str | None, point: Point) -> FormulaProblem:
    where = [f"{cut(name)} = {format_value(value)}" for name, value in point]
    if hardware:
        where.append(f"on {hardware}")
    return FormulaProblem("formula-error", f"{what} (at {', '.join(where)})" if where else what)

"""Formula expressions: parsed with `ast` against a whitelist, never executed.

The grammar (docs/record-format.md, "Formulas"): numbers, input names,
`hw.<parameter>`, `+ - * / **`, unary minus (and plus), parentheses, and calls
of `min max` (two or more arguments) and `abs sqrt exp log log2 log10 ceil
floor` (one argument). The result is a tree of small frozen dataclasses that
renders back to canonical text (`str`) and to LaTeX (`to_latex`).

Hostile input is bounded before `ast.parse` sees it (length, bracket depth)
and while it is converted (tree depth), so nothing downstream recurses deeply.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from flopkb.report.cut import cut
from flopkb.report.hints import did_you_mean

MAX_LENGTH = 2000
MAX_DEPTH = 64

UNARY_FUNCTIONS = frozenset({"abs", "sqrt", "exp", "log", "log2", "log10", "ceil", "floor"})
VARIADIC_FUNCTIONS = frozenset({"min", "max"})
FUNCTIONS = UNARY_FUNCTIONS | VARIADIC_FUNCTIONS

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GRAMMAR = "numbers, input names, hw.<parameter>, + - * / **, parentheses and " + ", ".join(sorted(FUNCTIONS))


class ExprSyntaxError(ValueError):
    """An expression outside the grammar; `offset` is the 0-based column within the expression."""

    def __init__(self, message: str, offset: int, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.hint = hint


_CLOSING = {"(": ")", "[": "]", "{": "}"}


def _python_syntax_hint(message: str) -> str | None:
    """What to do about a message of Python's parser, in a formula's terms."""
    if message.endswith("was never closed"):
        return f"add the {_CLOSING.get(message[1], ')')!r} that closes it"
    if message.startswith("unmatched"):
        return "remove it, or open its group before it"
    if message.startswith("invalid syntax"):
        return f"is an operator missing? An expression is made of {_GRAMMAR}"
    return None


# Every node carries `offset`, its 0-based column in the source (a binary
# operation's is its operator's) for messages; it takes no part in equality.


@dataclass(frozen=True)
class Num:
    value: float
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Name:
    id: str
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class HwParam:
    name: str
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Neg:
    operand: Node
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / **
    left: Node
    right: Node
    offset: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Node, ...]
    offset: int = field(default=0, compare=False)


Node = Num | Name | HwParam | Neg | BinOp | Call


@dataclass(frozen=True)
class Expr:
    """A parsed expression. Equal trees are equal, whatever their spacing in the source."""

    root: Node
    source: str = field(compare=False)
    inputs_used: frozenset[str] = field(compare=False)
    hw_params_used: frozenset[str] = field(compare=False)

    def __str__(self) -> str:
        return node_text(self.root)

    def to_latex(self) -> str:
        return _latex(self.root)


def walk(node: Node) -> Iterator[Node]:
    """`node` and its descendants, parents before children, left to right."""
    yield node
    for child in _children(node):
        yield from walk(child)


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Neg):
        return (node.operand,)
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    return ()


# Parsing ---------------------------------------------------------------------


def parse(source: str) -> Expr:
    """Parse `source` under the formula grammar, or raise ExprSyntaxError."""
    text, shift = parsable_text(source, "expression", "an expression")
    converter = _Converter(text, shift)
    root = converter.convert(converter.parse(), depth=1)
    return Expr(root, source, frozenset(converter.names), frozenset(converter.params))


def parsable_text(source: object, name: str, subject: str) -> tuple[str, int]:
    """`source` ready for the grammar's parser: the text from its first non-blank character, and how many characters
    into `source` that is; ExprSyntaxError (naming it `name`, or `subject` as a sentence's subject) when it is no
    parsable text."""
    if not isinstance(source, str):
        raise ExprSyntaxError(f"{subject} is text, not {type(source).__name__}", 0)
    if len(source) > MAX_LENGTH:
        raise ExprSyntaxError(f"{name} longer than {MAX_LENGTH} characters", MAX_LENGTH)
    # Line breaks and tabs become spaces one for one, so offsets stay those of `source`.
    flat = source.translate({ord("\n"): " ", ord("\r"): " ", ord("\t"): " "})
    check_bracket_depth(flat)
    text = flat.lstrip(" ")
    if not text.strip():
        raise ExprSyntaxError(f"empty {name}", 0)
    return text, len(flat) - len(text)


def check_bracket_depth(text: str) -> None:
    depth = 0
    for offset, char in enumerate(text):
        if char in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ExprSyntaxError(f"expression nested more than {MAX_DEPTH} levels deep", offset)
        elif char in ")]}":
            depth -= 1


def expression_converter(text: str, shift: int) -> _Converter:
    """The converter of the formula grammar over `text` (which starts `shift` characters into its source)."""
    return _Converter(text, shift)


_NOT_ALLOWED = {
    ast.Compare: "comparisons",
    ast.BoolOp: "`and`/`or`",
    ast.IfExp: "conditional expressions",
    ast.Subscript: "subscripts",
    ast.Lambda: "lambdas",
    ast.Tuple: "tuples",
    ast.List: "lists",
    ast.Dict: "dicts",
    ast.Set: "sets",
    ast.JoinedStr: "f-strings",
    ast.Starred: "`*` arguments",
    ast.NamedExpr: "assignments",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.Slice: "slices",
}
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_OPERATOR_TEXT = {
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.Not: "not",
    ast.Invert: "~",
}


class _Converter:
    """Turns a whitelisted `ast` tree into Nodes, with offsets in characters of the original source."""

    def __init__(self, text: str, shift: int) -> None:
        self.text = text
        self.encoded = text.encode("utf-8", "surrogatepass")
        self.shift = shift
        self.names: set[str] = set()
        self.params: set[str] = set()

    def parse(self) -> ast.expr:
        try:
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError as error:
            offset = self.shift + max(0, (error.offset or 1) - 1)
            raise ExprSyntaxError(error.msg, offset, _python_syntax_hint(error.msg)) from None
        except (ValueError, RecursionError, MemoryError, OverflowError) as error:
            raise ExprSyntaxError(f"cannot parse the expression: {error}", self.shift) from None
        return tree.body

    def offset(self, node: ast.AST) -> int:
        """Where a node starts; a binary operation "starts" at its operator, which is what a message points at."""
        column = getattr(node, "col_offset", 0)
        if isinstance(node, ast.BinOp) and node.left.end_col_offset is not None:  # ast.parse sets every end offset
            between = self.encoded[node.left.end_col_offset : node.right.col_offset]
            operator = _BINARY.get(type(node.op)) or _OPERATOR_TEXT.get(type(node.op), "")
            found = between.find(operator.encode()) if operator else -1
            column = node.left.end_col_offset + found if found >= 0 else column
        return self._characters(column)

    def _characters(self, column: int) -> int:
        """ast counts columns in UTF-8 bytes; an author counts characters."""
        return self.shift + len(self.encoded[:column].decode("utf-8", "ignore"))

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> ExprSyntaxError:
        return ExprSyntaxError(message, self.offset(node), hint)

    def convert(self, node: ast.AST, depth: int) -> Node:
        """The Node for `node`, `depth` levels down; the depth bound keeps this recursion shallow."""
        if depth > MAX_DEPTH:
            raise self.error(node, f"expression nested more than {MAX_DEPTH} levels deep")
        offset = self.offset(node)
        depth += 1
        match node:
            case ast.Constant(value=value):
                return Num(self._number(node, value), offset)
            case ast.Name(id=name):
                return Name(self._name(node, name), offset)
            case ast.Attribute():
                return HwParam(self._hw_param(node), offset)
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                return Neg(self.convert(operand, depth), offset)
            case ast.UnaryOp(op=ast.UAdd(), operand=operand):
                return self.convert(operand, depth)
            case ast.UnaryOp(op=op) | ast.BinOp(op=op) if type(op) not in _BINARY:
                raise self.error(node, _operator_message(op))
            case ast.BinOp(left=left, op=op, right=right):
                return BinOp(_BINARY[type(op)], self.convert(left, depth), self.convert(right, depth), offset)
            case ast.Call():
                return self._call(node, depth)
        what = _NOT_ALLOWED.get(type(node), type(node).__name__)
        raise self.error(node, f"{what} not allowed in a formula; use {_GRAMMAR}")

    def _number(self, node: ast.Constant, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            kind = "strings" if isinstance(value, str) else f"{type(value).__name__} constants"
            raise self.error(node, f"{kind} not allowed in a formula; use {_GRAMMAR}")
        try:
            number = float(value)
        except OverflowError:
            number = float("inf")
        if number in (float("inf"), float("-inf")):
            raise self.error(node, "number too large")
        return number

    def _name(self, node: ast.Name, name: str) -> str:
        if name == "hw":
            raise self.error(node, "`hw` must be followed by `.<parameter>`, e.g. hw.memory_bandwidth")
        if name in FUNCTIONS:
            raise self.error(node, f"`{cut(name)}` is a function: call it as {cut(name)}(...)")
        if not _NAME_RE.fullmatch(name):
            raise self.error(node, f"name {cut(name)!r}: names are ASCII letters, digits and _")
        self.names.add(name)
        return name

    def _hw_param(self, node: ast.Attribute) -> str:
        if not (isinstance(node.value, ast.Name) and node.value.id == "hw"):
            raise self.error(node, "only `hw.<parameter>` may use a dot")
        if not _NAME_RE.fullmatch(node.attr):
            raise self.error(node, f"parameter {cut(node.attr)!r}: names are ASCII letters, digits and _")
        self.params.add(node.attr)
        return node.attr

    def _call(self, node: ast.Call, depth: int) -> Call:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise self.error(node, *_unknown_function(node.func))
        func = node.func.id
        if node.keywords:
            raise self.error(node.keywords[0], f"{func}() takes positional arguments only")
        if func in VARIADIC_FUNCTIONS and len(node.args) < 2:
            raise self.error(node, f"{func}() takes two or more arguments")
        if func in UNARY_FUNCTIONS and len(node.args) != 1:
            hint = " (for another base, divide logarithms)" if func == "log" else ""
            raise self.error(node, f"{func}() takes exactly one argument{hint}")
        return Call(func, tuple(self.convert(arg, depth) for arg in node.args), self.offset(node))


def _operator_message(op: ast.AST) -> str:
    text = _OPERATOR_TEXT.get(type(op), type(op).__name__)
    hint = " (write powers as **)" if text == "^" else ""
    return f"operator {text} not allowed in a formula{hint}; use + - * / **"


def _unknown_function(func: ast.AST) -> tuple[str, str | None]:
    """The message and hint of a call of no function of the grammar."""
    functions = ", ".join(sorted(FUNCTIONS))
    if not isinstance(func, ast.Name):
        return f"only the functions {functions} can be called", None
    return f"unknown function {cut(func.id)!r}; the functions are {functions}", did_you_mean(func.id, sorted(FUNCTIONS))


# Canonical text --------------------------------------------------------------

_SUM, _PRODUCT, _NEGATION, _POWER, _ATOM = 1, 2, 3, 4, 5


def _precedence(node: Node) -> int:
    if isinstance(node, BinOp):
        return {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "**": _POWER}[node.op]
    return _NEGATION if isinstance(node, Neg) else _ATOM


def number_text(value: float) -> str:
    """Short text that reads back as `value`: `4`, `0.5`, `1e12`, `2.5e-5`."""
    if not (value.is_integer() and abs(value) < 1e16):
        mantissa, _, exponent = repr(value).partition("e")
        return f"{mantissa}e{int(exponent)}" if exponent else mantissa
    digits = str(int(abs(value)))
    significant = digits.rstrip("0")
    if len(digits) - len(significant) < 6:
        return str(int(value))
    sign = "-" if value < 0 else ""
    fraction = f".{significant[1:]}" if len(significant) > 1 else ""
    return f"{sign}{significant[0]}{fraction}e{len(digits) - 1}"


def node_text(node: Node) -> str:
    """Canonical text of a subtree: minimal parentheses, one space around + - * /."""
    match node:
        case Num(value=value):
            return number_text(value)
        case Name(id=name):
            return name
        case HwParam(name=name):
            return f"hw.{name}"
        case Neg(operand=operand):
            return "-" + _wrap_text(operand, _precedence(operand) <= _NEGATION)
        case BinOp(op="**", left=left, right=right):
            return (
                f"{_wrap_text(left, _precedence(left) <= _POWER)}**{_wrap_text(right, _precedence(right) < _NEGATION)}"
            )
        case BinOp(op=op, left=left, right=right):
            level = _precedence(node)
            return (
                f"{_wrap_text(left, _precedence(left) < level)} {op} {_wrap_text(right, _precedence(right) <= level)}"
            )
        case Call(func=func, args=args):
            return f"{func}({', '.join(node_text(arg) for arg in args)})"
    raise TypeError(node)


def _wrap_text(node: Node, parenthesise: bool) -> str:
    return f"({node_text(node)})" if parenthesise else node_text(node)


# LaTeX -----------------------------------------------------------------------

_GREEK = frozenset(
    {
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "mu",
        "nu",
        "xi",
        "pi",
        "rho",
        "sigma",
        "tau",
        "phi",
        "chi",
        "psi",
        "omega",
        "Gamma",
        "Delta",
        "Theta",
        "Pi",
        "Sigma",
        "Phi",
        "Psi",
        "Omega",
    }
)
_CALL_LATEX = {
    "exp": r"\exp",
    "log": r"\ln",
    "log2": r"\log_{2}",
    "log10": r"\log_{10}",
    "min": r"\min",
    "max": r"\max",
}
_DELIMITERS = {
    "abs": (r"\left|", r"\right|"),
    "ceil": (r"\left\lceil ", r"\right\rceil"),
    "floor": (r"\left\lfloor ", r"\right\rfloor"),
}


def _latex(node: Node) -> str:
    match node:
        case Num(value=value):
            return _latex_number(value)
        case Name(id=name):
            return _latex_name(name)
        case HwParam(name=name):
            return rf"\mathrm{{{_escape(name)}}}"
        case Neg(operand=operand):
            return "-" + _wrap_latex(operand, _latex_precedence(operand) <= _NEGATION)
        case BinOp(op="/", left=left, right=right):
            return rf"\frac{{{_latex(left)}}}{{{_latex(right)}}}"
        case BinOp(op="**", left=left, right=right):
            return f"{_wrap_latex(left, not _is_latex_base(left))}^{{{_latex(right)}}}"
        case BinOp(op="*", left=left, right=right):
            left_text = _wrap_latex(left, _latex_precedence(left) < _PRODUCT)
            return rf"{left_text} \cdot {_wrap_latex(right, _latex_precedence(right) <= _NEGATION)}"
        case BinOp(op=op, left=left, right=right):
            return f"{_latex(left)} {op} {_wrap_latex(right, _latex_precedence(right) <= _NEGATION)}"
        case Call(func="sqrt", args=(arg,)):
            return rf"\sqrt{{{_latex(arg)}}}"
        case Call(func=func, args=(arg,)) if func in _DELIMITERS:
            opening, closing = _DELIMITERS[func]
            return f"{opening}{_latex(arg)}{closing}"
        case Call(func=func, args=args):
            return rf"{_CALL_LATEX[func]}\left({', '.join(_latex(arg) for arg in args)}\right)"
    raise TypeError(node)


def _latex_precedence(node: Node) -> int:
    """As in text, except that a fraction groups itself."""
    return _ATOM if isinstance(node, BinOp) and node.op == "/" else _precedence(node)


def _is_latex_base(node: Node) -> bool:
    """Can carry a superscript without parentheses."""
    if isinstance(node, Num):
        return "e" not in number_text(node.value)
    return isinstance(node, (Name, HwParam)) or (isinstance(node, Call) and node.func != "sqrt")


def _wrap_latex(node: Node, parenthesise: bool) -> str:
    return rf"\left({_latex(node)}\right)" if parenthesise else _latex(node)


def _latex_number(value: float) -> str:
    text = number_text(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else rf"{mantissa} \times {power}"


def _latex_name(name: str) -> str:
    """`T_spec` -> `T_{\\mathrm{spec}}`, `alpha` -> `\\alpha`, `batch_size` -> `\\mathit{batch\\_size}`."""
    head, _, tail = name.partition("_")
    if _is_symbol(head) and tail and "_" not in tail:
        subscript = tail if len(tail) == 1 or tail.isdigit() else rf"\mathrm{{{tail}}}"
        return f"{_latex_symbol(head)}_{{{subscript}}}"
    if _is_symbol(name):
        return _latex_symbol(name)
    return rf"\mathit{{{_escape(name)}}}"


def _is_symbol(word: str) -> bool:
    return len(word) == 1 or word in _GREEK


def _latex_symbol(word: str) -> str:
    return f"\\{word}" if word in _GREEK else word


def _escape(name: str) -> str:
    return name.replace("_", r"\_")

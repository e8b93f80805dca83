import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flopkb.formulas.expr import (
    FUNCTIONS,
    MAX_DEPTH,
    MAX_LENGTH,
    BinOp,
    Call,
    ExprSyntaxError,
    HwParam,
    Name,
    Neg,
    Num,
    number_text,
    parse,
    walk,
)
from flopkb.report.hints import Suggestion

SIDE_EFFECTS: list[str] = []


def test_parses_to_a_tree():
    expr = parse("hw.peak_bf16_dense / hw.memory_bandwidth * -B + max(k, 2)")
    assert expr.root == BinOp(
        "+",
        BinOp("*", BinOp("/", HwParam("peak_bf16_dense"), HwParam("memory_bandwidth")), Neg(Name("B"))),
        Call("max", (Name("k"), Num(2.0))),
    )
    assert expr.inputs_used == {"B", "k"}
    assert expr.hw_params_used == {"peak_bf16_dense", "memory_bandwidth"}


def test_the_tree_is_immutable_and_hashable():
    expr = parse("a + 1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        expr.root.op = "-"
    assert hash(expr) == hash(parse(" a+1 "))
    assert expr == parse("(a) + (1.0)")


def test_numbers_are_floats():
    assert parse("2 ** 10").root == BinOp("**", Num(2.0), Num(10.0))
    assert all(isinstance(node.value, float) for node in walk(parse("1 + 1_000 + 0x10").root) if isinstance(node, Num))


@pytest.mark.parametrize(
    ("source", "canonical"),
    [
        ("(1 - a**(k+1))/(1 - a)", "(1 - a**(k + 1)) / (1 - a)"),
        ("(1 - a**(k + 1)) / ((1 - a)*(k*c + 1))", "(1 - a**(k + 1)) / ((1 - a) * (k * c + 1))"),
        ("T_spec/(k*T_base)", "T_spec / (k * T_base)"),
        ("-x**2", "-x**2"),
        ("(-x)**2", "(-x)**2"),
        ("a**b**c", "a**b**c"),
        ("(a**b)**c", "(a**b)**c"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("a / (b * c)", "a / (b * c)"),
        ("a*-b", "a * -b"),
        ("+x", "x"),
        ("--x", "-(-x)"),
        ("2**-1", "2**-1"),
        ("1e12 * 2.5e-5 * 1.0", "1e12 * 2.5e-5 * 1"),
        ("max(a,b,  c)", "max(a, b, c)"),
        (" \n a +\n\tb", "a + b"),
    ],
)
def test_canonical_text(source, canonical):
    expr = parse(source)
    assert str(expr) == canonical
    assert parse(canonical) == expr


@pytest.mark.parametrize(
    ("source", "latex"),
    [
        ("hw.peak_bf16_dense / hw.memory_bandwidth", r"\frac{\mathrm{peak\_bf16\_dense}}{\mathrm{memory\_bandwidth}}"),
        ("(1 - a**(k+1))/(1 - a)", r"\frac{1 - a^{k + 1}}{1 - a}"),
        ("T_spec/(k*T_base)", r"\frac{T_{\mathrm{spec}}}{k \cdot T_{\mathrm{base}}}"),
        ("1 + P_d/(B*P_t)", r"1 + \frac{P_{d}}{B \cdot P_{t}}"),
        ("(a + b) * c", r"\left(a + b\right) \cdot c"),
        ("sqrt(x)", r"\sqrt{x}"),
        ("sqrt(x)**2", r"\left(\sqrt{x}\right)^{2}"),
        ("(a / b)**2", r"\left(\frac{a}{b}\right)^{2}"),
        ("min(a, b) + max(c, d)", r"\min\left(a, b\right) + \max\left(c, d\right)"),
        ("abs(x) + ceil(y) + floor(z)", r"\left|x\right| + \left\lceil y\right\rceil + \left\lfloor z\right\rfloor"),
        (
            "exp(x) + log(x) + log2(x) + log10(x)",
            r"\exp\left(x\right) + \ln\left(x\right) + \log_{2}\left(x\right) + \log_{10}\left(x\right)",
        ),
        ("alpha * batch_size * k_1", r"\alpha \cdot \mathit{batch\_size} \cdot k_{1}"),
        ("1e12 * 2.5e-5", r"10^{12} \cdot 2.5 \times 10^{-5}"),
        ("-(a + b)", r"-\left(a + b\right)"),
    ],
)
def test_latex(source, latex):
    assert parse(source).to_latex() == latex


@pytest.mark.parametrize(
    ("source", "offset", "fragment"),
    [
        ("__import__('os')", 0, "unknown function '__import__'"),
        ("a + 'text'", 4, "strings not allowed"),
        ("a[0]", 0, "subscripts"),
        ("lambda: 1", 0, "lambdas"),
        ("a < b", 0, "comparisons"),
        ("a if b else c", 0, "conditional"),
        ("a and b", 0, "`and`/`or`"),
        ("(a, b)", 0, "tuples"),
        ("[a]", 0, "lists"),
        ("{a: 1}", 0, "dicts"),
        ("f'{a}'", 0, "f-strings"),
        ("(a := 1)", 1, "assignments"),
        ("[x for x in y]", 0, "comprehensions"),
        ("hw", 0, "`hw` must be followed by"),
        ("1 + hw", 4, "`hw` must be followed by"),
        ("hw.a.b", 0, "only `hw.<parameter>` may use a dot"),
        ("x.real", 0, "only `hw.<parameter>` may use a dot"),
        ("min", 0, "is a function"),
        ("min(a)", 0, "two or more"),
        ("max(*a, b)", 4, "`*` arguments"),
        ("sqrt(a, b)", 0, "exactly one"),
        ("log(x, 2)", 0, "divide logarithms"),
        ("max(a=1, b=2)", 4, "positional arguments only"),
        ("sqr(2)", 0, "unknown function 'sqr'; the functions are abs,"),
        ("(lambda: 0)()", 0, "only the functions"),
        ("a ^ b", 2, "write powers as **"),
        ("a // b", 2, "operator //"),
        ("a % b", 2, "operator %"),
        ("a @ b", 2, "operator @"),
        ("not a", 0, "operator not"),
        ("~a", 0, "operator ~"),
        ("1 +", None, ""),
        ("(1", 0, "never closed"),
        ("a b", 2, ""),
        ("", 0, "empty"),
        ("  ", 0, "empty"),
        ("ab + é", 5, "ASCII"),
        ("1j", 0, "complex"),
        ("True", 0, "bool"),
        ("None", 0, "NoneType"),
        ("1e999", 0, "too large"),
        ("9" * 400, 0, "too large"),
        ("a\x00b", 0, ""),
        ("x" * (MAX_LENGTH + 1), MAX_LENGTH, "longer than"),
        ("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), MAX_DEPTH, "nested"),
        ("-" * 1999 + "1", MAX_DEPTH, "nested"),
        ("1+" * 999 + "1", None, "nested"),
        ("2**" * 600 + "2", None, "nested"),
        ("[" * 300, MAX_DEPTH, "nested"),
    ],
)
def test_outside_the_grammar(source, offset, fragment):
    with pytest.raises(ExprSyntaxError) as caught:
        parse(source)
    assert fragment in caught.value.message
    if offset is not None:
        assert caught.value.offset == offset
    assert 0 <= caught.value.offset <= len(source)


def test_an_unknown_function_is_hinted_with_the_one_it_means() -> None:
    with pytest.raises(ExprSyntaxError) as caught:
        parse("2 * sqr(x)")
    assert caught.value.hint == "did you mean sqrt?" and caught.value.offset == 4
    assert isinstance(caught.value.hint, Suggestion) and (caught.value.hint.written, caught.value.hint.offered) == (
        "sqr",
        ("sqrt",),
    )


def test_offsets_count_characters_not_bytes():
    with pytest.raises(ExprSyntaxError) as caught:
        parse("x + (é) + 'é'")
    assert caught.value.offset == 5


def test_non_text_is_a_syntax_error():
    with pytest.raises(ExprSyntaxError):
        parse(42)  # type: ignore[arg-type]


def test_number_text_reads_back():
    for value in [0.0, 4.0, 0.5, 1e12, 2.5e6, 1e16, 2.5e-5, 1e300, 5e-324, 1.7976931348623157e308, 123456789.0]:
        assert float(number_text(value)) == value


def record(text: str) -> str:
    SIDE_EFFECTS.append(text)
    return text


HOSTILE = [
    "__import__('tests.test_expr').test_expr.record('import')",
    "record('call')",
    "SIDE_EFFECTS.append(1)",
    "(lambda: record('lambda'))()",
    "[record('comprehension') for _ in [1]]",
    "hw.__class__.__base__.__subclasses__()",
    "exec('record(1)')",
    "eval('1')",
    "open('/etc/passwd').read()",
    "().__class__.__bases__[0]",
    "10**10**10**10",
]


@given(st.one_of(st.text(max_size=200), st.sampled_from(HOSTILE), st.text(alphabet="()[]{}+-*/.,=:'\"ahw_0123 ")))
def test_any_text_parses_or_raises_syntax_error_and_never_runs(source):
    try:
        expr = parse(source)
    except ExprSyntaxError as error:
        assert 0 <= error.offset <= len(source)
    else:
        assert parse(str(expr)) == expr
    assert SIDE_EFFECTS == []


NAMES = st.sampled_from(["a", "b", "B", "k", "T_spec", "hw.memory_bandwidth", "hw.peak_bf16_dense"])
NUMBERS = st.floats(min_value=0, max_value=1e20, allow_nan=False).map(repr) | st.integers(0, 10**6).map(str)


def expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"{t[0]} {t[1]} {t[2]}"
        )
        unary = st.tuples(st.sampled_from(sorted(FUNCTIONS - {"min", "max"})), inner).map(lambda t: f"{t[0]}({t[1]})")
        variadic = st.tuples(st.sampled_from(["min", "max"]), st.lists(inner, min_size=2, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        )
        return binary | unary | variadic | inner.map(lambda e: f"({e})") | inner.map(lambda e: f"-{e}")

    return st.recursive(NAMES | NUMBERS, extend, max_leaves=12)


@given(expressions())
def test_grammar_expressions_round_trip(source):
    try:
        expr = parse(source)
    except ExprSyntaxError as error:
        assert "nested" in error.message  # the only limit a grammatical expression can hit
        return
    assert parse(str(expr)) == expr
    assert str(parse(str(expr))) == str(expr)
    assert isinstance(expr.to_latex(), str)

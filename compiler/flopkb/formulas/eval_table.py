"""`flopkb eval ID [--hardware REF] [--set NAME=QUANTITY ...]`: a record's evaluations as tables, for what-ifs.

The knowledge base is compiled as `check` compiles it; then the record's
formulas are shown as the formula stage evaluated them (`kb.formulas`), or,
with `--set` or `--hardware`, evaluated again as a what-if
(`flopkb.formulas.stage.evaluate_record`):

- `--set NAME=QUANTITY` replaces input NAME in every formula of the record
  that has it (or whose expression uses it); `NAME=Q1,Q2,...` is a sweep, so a
  sweep can become one value and one value a sweep.
- `--hardware REF` (resolved like a ref) evaluates every formula that uses
  `hw.` on that one accelerator, in scope or not.

Claims are checked only without a what-if. Exit status: 0; 1 when the record
(or the what-if) has errors, which are printed; 2 for an unknown record or
accelerator, a record without formulas, an unknown input, or a value that is
no quantity or has another dimension than the input it replaces.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from flopkb.formulas.results import CLAIM_DISAGREES, CLAIM_MISMATCH, CLAIM_OK, Claim, FormulaResult
from flopkb.formulas.stage import evaluate_record
from flopkb.formulas.units import (
    Dimension,
    QuantityError,
    format_dimension,
    format_number,
    format_quantity,
    parse_quantity,
    to_base,
)
from flopkb.report import cut as cutting
from flopkb.report.codes import Severity
from flopkb.report.diagnostics import Diagnostic

if TYPE_CHECKING:
    from flopkb.formulas.evaluate import Evaluation, QuantityLike
    from flopkb.kb.knowledge_base import KnowledgeBase

FORMULA_STAGE_CODES = frozenset(
    {
        "formula-syntax",
        "formula-unknown-name",
        "formula-missing-spec",
        "formula-unit-mismatch",
        "formula-error",
        "formula-cycle",
        "claim-mismatch",
        "measurement-disagrees",
    }
)
WIDTH = 120
"""Columns when output is not a terminal (a pipe, a file, a test)."""


class EvalUsageError(ValueError):
    """What the user asked for cannot be evaluated (exit status 2)."""


@dataclass(frozen=True, slots=True)
class EvalOutcome:
    record: str
    results: list[FormulaResult]
    diagnostics: list[Diagnostic]
    what_if: bool

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == Severity.ERROR]


def parse_settings(settings: Sequence[str]) -> dict[str, str | list[str]]:
    """`NAME=QUANTITY` (or `NAME=Q1,Q2,...`) options as input overrides; EvalUsageError for anything else."""
    overrides: dict[str, str | list[str]] = {}
    for setting in settings:
        name, equals, value = setting.partition("=")
        name = name.strip()
        if not equals or not name.isidentifier():
            raise EvalUsageError(f"--set {setting!r}: write NAME=QUANTITY, e.g. --set batch=32 or --set t_spec='28 ms'")
        items = [item.strip() for item in value.split(",")]
        for item in items:
            try:
                parse_quantity(item)
            except QuantityError as error:
                hint = f" ({error.hint})" if error.hint else ""
                raise EvalUsageError(f"--set {name}: {error.message}{hint}") from None
        overrides[name] = items if len(items) > 1 else items[0]
    return overrides


def evaluate(kb: KnowledgeBase, target: str, hardware: str | None, settings: Sequence[str]) -> EvalOutcome:
    """Resolve the record and the accelerator, evaluate (a what-if when asked), and gather the record's diagnostics."""
    from flopkb.links.resolver import Resolver

    resolver = Resolver.of(kb)
    record_id = resolver.target(target)
    if record_id is None:
        found = resolver.resolve(target)
        if found.candidates:
            raise EvalUsageError(f"{target!r} matches several records: {', '.join(found.candidates)}")
        hint = resolver.hint(target, ("flop", "fact"))
        raise EvalUsageError(f"no record {target!r}" + (f"; {hint}" if hint else ""))
    entry = kb.entries[record_id]
    if entry.record is None:
        problems = [d for d in kb.diagnostics if d.path == entry.path]
        return EvalOutcome(record_id, [], problems, False)
    results = kb.formulas.get(record_id, [])
    if not results:
        raise EvalUsageError(f"{record_id} has no formulas to evaluate")
    accelerator = None
    if hardware is not None:
        accelerator = resolver.target(hardware)
        if accelerator is None or resolver.kinds.get(accelerator) != "accelerator":
            what = "no record" if accelerator is None else f"{accelerator} is not an accelerator"
            hint = resolver.hint(hardware, ("accelerator",))
            raise EvalUsageError(f"--hardware {hardware}: {what}" + (f"; {hint}" if hint else ""))
    overrides = parse_settings(settings)
    unknown = [name for name in overrides if not any(_has_input(result, name) for result in results)]
    if unknown:
        known = sorted({name for result in results for name in result.inputs})
        raise EvalUsageError(
            f"--set {unknown[0]}: no formula of {record_id} has that input (its inputs: {', '.join(known) or 'none'})"
        )
    for name, value in overrides.items():
        _check_dimension(name, value, results)
    diagnostics = [d for d in kb.diagnostics if d.path == entry.path]
    if not overrides and accelerator is None:
        return EvalOutcome(record_id, results, diagnostics, False)
    results, problems = evaluate_record(kb, record_id, overrides, accelerator)
    kept = [d for d in diagnostics if d.code not in FORMULA_STAGE_CODES and not _about_formula_inputs(d)]
    return EvalOutcome(record_id, results, sorted({*kept, *problems}), True)


def _dimension(value: object) -> Dimension | None:
    first = value[0] if isinstance(value, list) and value else value
    try:
        return to_base(parse_quantity(first))[1]
    except (QuantityError, TypeError):
        return None


def _check_dimension(name: str, value: str | list[str], results: list[FormulaResult]) -> None:
    """An override must have the dimension of the input it replaces (`t_spec=40` for an input in ms is a usage
    error)."""
    given = _dimension(value)
    for result in results:
        if name in result.inputs:
            wanted = _dimension(result.inputs[name])
            if wanted is not None and given is not None and given != wanted:
                shown = value if isinstance(value, str) else ",".join(value)
                raise EvalUsageError(
                    f"--set {name}: {shown} is {format_dimension(given)}, "
                    f"but input `{name}` of {result.anchor} is {format_dimension(wanted)}"
                )


def _has_input(result: FormulaResult, name: str) -> bool:
    return name in result.inputs or (result.expr is not None and name in result.expr.inputs_used)


def _about_formula_inputs(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == "invalid-value" and diagnostic.message.startswith(("input `", "unit:"))


# ---------------------------------------------------------------------------
# Rendering


def show(value: QuantityLike | str | float | list[Any]) -> str:
    """A value of an input or sweep point; a sweep as written (`[1, 32]`), shown when its formula has no expression
    (a `ref` to no formula) to tell which of its inputs are swept."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return f"[{', '.join(show(item) for item in value)}]"
    if isinstance(value, (int, float)):
        return format_number(float(value), 6)
    return format_quantity(value, 6)


@dataclass(frozen=True, slots=True)
class RowLimit:
    """How much a view of bounded size (a hover) shows of a formula's tables: at most `each` evaluations on each
    accelerator and `total` in all, the first `total` rows of the model against measurements, each piece of record
    text (an id, a title, an expression, a measurement's `where`, ...) cut to `width` characters as a message quotes
    it (`flopkb.report.cut.cut`), and `lines` lines in all. Each cut says where the rest is: `flopkb eval` prints it
    all."""

    each: int
    total: int
    width: int
    lines: int


@dataclass(slots=True)
class TextCut:
    """Cuts each piece of a view's record text at `limit` (None: keeps it whole), before it is laid out or escaped,
    and remembers whether it cut any."""

    limit: RowLimit | None
    cut_any: bool = False

    def __call__(self, text: str) -> str:
        if self.limit is None:
            return text
        shown = cutting.cut(text, self.limit.width)
        self.cut_any = self.cut_any or shown != text
        return shown


def formula_table(result: FormulaResult, what_if: bool, limit: RowLimit | None = None) -> Group:
    """One formula: a heading, its definition, a table of its evaluations, the hardware figures it used, its claims,
    the model against each measurement they name; `limit`: how much of the tables and of each text to show (all:
    None)."""
    cut = TextCut(limit)
    heading = Text.assemble(
        (cut(f"{result.record}#{result.id}"), "bold"), f"  {cut(result.title)}" if result.title else ""
    )
    parts: list[Text | Table] = [heading]
    if result.expr is not None:
        definition = Text.assemble("  ", (cut(str(result.expr)), "cyan"), f"  [{cut(result.unit)}]")
        if result.defined_in is not None:
            definition.append(f"  (from {cut(f'{result.defined_in[0]}#{result.defined_in[1]}')})", "dim")
        parts.append(definition)
    if result.valid_when is not None:
        parts.append(Text.assemble("  valid when ", (cut(str(result.valid_when)), "cyan")))
    fixed = [
        (name, value)
        for name, value in result.inputs.items()
        if name not in result.swept and (result.expr is None or name in result.expr.inputs_used)
    ]
    if fixed:
        parts.append(Text("  " + cut(", ".join(f"{name} = {show(value)}" for name, value in fixed)), "dim"))
    if result.evaluations:
        shown = _first_rows(result, limit)
        parts += [_evaluation_table(result, shown, cut), *_more(result, len(result.evaluations) - len(shown), "rows")]
    else:
        parts.append(Text("  no evaluations: see the problems below", "yellow"))
    parts.append(_claims(result, what_if))
    measured = [claim for claim in result.claims if claim.measurement is not None]
    if not what_if and measured:
        first = measured if limit is None else measured[: limit.total]
        parts += [measured_table(result, first, cut), *_more(result, len(measured) - len(first), "measurements")]
    if cut.cut_any:
        parts.append(Text(f"  … text cut: flopkb eval {result.record} prints it whole", "dim"))
    return Group(*parts, Text(""))


def limited_text(result: FormulaResult, limit: RowLimit) -> str:
    """The formula's tables as `flopkb eval` prints them (without colour, at its width), cut at `limit`: at most
    `limit.lines` lines, the last saying how many more `flopkb eval` prints."""
    stream = io.StringIO()
    Console(file=stream, no_color=True, highlight=False, width=WIDTH).print(formula_table(result, False, limit))
    lines = stream.getvalue().rstrip().split("\n")
    if len(lines) <= limit.lines:
        return "\n".join(lines)
    kept = lines[: limit.lines - 1]
    return "\n".join([*kept, f"  … {len(lines) - len(kept):,} more lines: flopkb eval {result.record}"])


def _more(result: FormulaResult, more: int, what: str) -> list[Text]:
    """The line under a table cut by a `RowLimit`: how many more of its rows `flopkb eval` prints (none: no line)."""
    return [Text(f"  … {more:,} more {what}: flopkb eval {result.record}", "dim")] if more else []


def _first_rows(result: FormulaResult, limit: RowLimit | None) -> Sequence[Evaluation]:
    """The evaluations `limit` shows, in their order: the first `each` on each accelerator (or without one), until
    `total` are shown; all when `limit` is None."""
    if limit is None:
        return result.evaluations
    counts: dict[str | None, int] = {}
    shown: list[Evaluation] = []
    for evaluation in result.evaluations:
        if len(shown) == limit.total:
            break
        seen = counts.get(evaluation.hardware, 0)
        if seen < limit.each:
            counts[evaluation.hardware] = seen + 1
            shown.append(evaluation)
    return shown


def _evaluation_table(result: FormulaResult, evaluations: Sequence[Evaluation], cut: Callable[[str], str]) -> Table:
    """Columns: the swept inputs, the accelerator and each spec it lent (value and basis), the value; a row for each
    of `evaluations`, each piece of text as `cut` shows it."""
    figures = {(figure.accelerator, figure.parameter): figure for figure in result.figures}
    parameters = list(dict.fromkeys(figure.parameter for figure in result.figures))
    with_hardware = any(evaluation.hardware for evaluation in result.evaluations)
    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
    for name in result.swept:
        table.add_column(cut(name), justify="right")
    if with_hardware:
        table.add_column("hardware")
        for parameter in parameters:
            table.add_column(f"hw.{cut(parameter)}", justify="right")
    table.add_column(
        f"value [{cut(result.unit)}]" if result.unit.strip() != "1" else "value", justify="right", style="bold"
    )
    if result.valid_when is not None:
        table.add_column("regime")
    for evaluation in evaluations:
        point = dict(evaluation.point)
        row = [cut(show(point[name])) if name in point else "" for name in result.swept]
        if with_hardware:
            row.append(cut(evaluation.hardware or ""))
            for parameter in parameters:
                figure = figures.get((evaluation.hardware or "", parameter))
                row.append(f"{cut(figure.value)} ({cut(figure.basis)})" if figure is not None else "")
        row.append(format_number(evaluation.value, 6))
        if result.valid_when is not None:
            row.append("" if evaluation.in_regime else "outside the model's regime")
        table.add_row(*(Text(cell) for cell in row))
    return table


def _claims(result: FormulaResult, what_if: bool) -> Text:
    if not result.claims:
        return Text("  no claims", "dim")
    if what_if:
        return Text(f"  {len(result.claims)} claim(s) not checked in a what-if", "dim")
    ok = sum(claim.status == CLAIM_OK for claim in result.claims)
    off = sum(claim.status == CLAIM_MISMATCH for claim in result.claims)
    disagree = sum(claim.status == CLAIM_DISAGREES for claim in result.claims)
    rest = len(result.claims) - ok - off - disagree
    text = Text(f"  claims: {ok} of {len(result.claims)} within tolerance", "green" if ok == len(result.claims) else "")
    if off:
        text.append(f", {off} off", "red")
    if disagree:
        text.append(f", {disagree} disagreeing with a measurement", "yellow")
    if rest:
        text.append(f", {rest} not checked", "yellow")
    outside = sum(not claim.in_regime for claim in result.claims)
    if outside:
        text.append(f", {outside} outside the model's regime", "red")
    return text


def measured_table(result: FormulaResult, claims: Sequence[Claim], cut: Callable[[str], str]) -> Table:
    """The model against the measurement each of `claims` names: where, the measurement, both values, the
    difference; each piece of text as `cut` shows it."""
    unit = "" if result.unit.strip() == "1" else f" [{cut(result.unit)}]"
    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2), title_justify="left")
    for heading, justify in (
        ("at", "left"),
        ("measurement", "left"),
        ("basis", "left"),
        (f"measured{unit}", "right"),
        (f"model{unit}", "right"),
        ("off by", "right"),
        ("", "left"),
    ):
        table.add_column(heading, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for claim in claims:
        point = claim.measurement
        if point is None:
            continue
        at = ", ".join(f"{name} = {show(value)}" for name, value in claim.where)
        if claim.hardware:
            at = f"{at} on {claim.hardware}" if at else claim.hardware
        off = claim.off_by
        table.add_row(
            Text(cut(at)),
            Text(f"{cut(point.anchor)} ({cut(point.where)})"),
            Text(cut(point.basis)),
            Text(format_number(claim.stated, 6) if claim.stated is not None else cut(point.value)),
            Text(format_number(claim.computed, 6) if claim.computed is not None else "–"),
            Text(f"{format_number(off * 100, 3)}%" if off is not None else "–"),
            Text(_MEASURED_WORDS.get(claim.status, claim.status), "yellow" if claim.status == CLAIM_DISAGREES else ""),
        )
    return table


_MEASURED_WORDS = {CLAIM_OK: "agrees", CLAIM_DISAGREES: "disagrees", "unchecked": "not checked"}


def render(outcome: EvalOutcome, stream: TextIO, *, color: bool, terminal: bool) -> None:
    console = Console(
        file=stream,
        no_color=not color,
        highlight=False,
        width=None if terminal else WIDTH,
        force_terminal=color or None,
    )
    if outcome.what_if:
        console.print(Text("what-if: claims are not checked", "yellow"))
    for result in outcome.results:
        console.print(formula_table(result, outcome.what_if))

"""The catalogue of diagnostic codes: one place for every code's severity and docs.

The docs page of all codes (`docs/codes.md`) is generated from this table by
`flopkb.report.codes_doc`; reporters (SARIF rules) read it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


E = Severity.ERROR
W = Severity.WARNING


@dataclass(frozen=True, slots=True)
class Code:
    name: str
    severity: Severity
    summary: str
    why: str
    example: str
    fix: str


_CATALOGUE = [
    Code(
        "yaml-syntax",
        E,
        "The file is not valid YAML.",
        "Nothing in a file that does not parse can be checked; the rest of the knowledge base still is. One "
        "exception: a file that fails only because tabs start some of its lines, and parses with each such tab "
        "replaced by two spaces, is reported with `a tab indents line N (at N:1)` and checked as the replaced text "
        "reads (which holds the same values), so its other problems are reported too, at their places in the file "
        "as it is.",
        "description: [unclosed",
        "Fix the syntax at the reported position. The slips authors make most are told in their words, at the "
        "line of the slip rather than where the parser stopped: a ':' missing after a key, a ': ' inside a value "
        "that is not quoted (a wrapped one too), a quote, '[' or '{' left open, a line indented unlike its "
        "neighbours or off a level open around it (an enclosing key or item, an item's key, 2 less than its own "
        "block below), the space after a key's ':' or an item's '-' left out, a ' inside a value quoted with '; "
        "each with the change that makes the file parse (checked before it is told). Otherwise the "
        "message quotes the parser. A tab that indents: replace it with spaces (`flopkb fmt` does it when the hint "
        "says so).",
    ),
    Code(
        "duplicate-key",
        E,
        "A mapping repeats a key.",
        "YAML loaders silently keep the last value, so the first one would vanish without a word.",
        "title: A\ntitle: B",
        "Keep one of the two keys. A key with no value indented into the mapping above it, whose keys below it "
        "repeat that mapping's (a spec indented under the spec before it), is told once, at that key: indent it as "
        "the hint says, as the mapping's own key; the record is checked as it reads so indented.",
    ),
    Code(
        "not-a-record",
        E,
        "The top level is not a mapping, or the file is empty, too large, nested too deep, no regular file, or a "
        "symlink that leads out of the base (or into its .git).",
        "A record is a mapping of fields in a regular file; anything else cannot be one. A FIFO, a device or a "
        "symlink to one would hang or never end; a folder under records/ that cannot be read would hide its "
        "records; a symlink to a file of the machine (a pull request's, checked in CI) would print parts of it in "
        "the diagnostics.",
        "- just\n- a list",
        "Write the record as `key: value` lines, starting with `id:` and `kind:`.",
    ),
    Code(
        "encoding",
        E,
        "The file, or its name, is not UTF-8.",
        "Records are shared text; a file in another encoding reads differently on every machine.",
        "(a file saved as Latin-1 with an `é`)",
        "Re-save the file as UTF-8.",
    ),
    Code(
        "internal-error",
        E,
        "flopkb itself failed on a file or in a stage: a bug, not a problem of the records.",
        "A crash must not hide the rest of the report: the failure is reported on the file it happened on "
        "(or on the records folder, for a stage), every other file and stage still runs, and the command exits "
        "with status 2, so CI can tell flopkb failing from the knowledge base having errors. It cannot be turned "
        "off or down in [tool.flopkb.severity].",
        "records/flops/x.yaml:1:1: error internal-error: flopkb failed while validating the file: "
        "KeyError: 'x' (at flopkb/load/validate.py:42)",
        "Report it to flopkb's maintainers with the message, `flopkb --version` and the file; "
        "until it is fixed, the file's other problems may be unreported.",
    ),
    Code(
        "unfinished-move",
        E,
        "A `flopkb mv` was interrupted: its journal, `.flopkb-mv.json`, is still there.",
        "A move rewrites several files; killed half way, it would leave links dangling, or the record both "
        "under its old and its new path. It writes its plan down first, so that it can always be finished or "
        "undone, and `check` says so until it is.",
        ".flopkb-mv.json:1:1: error unfinished-move: `flopkb mv facts/a facts/b` was interrupted",
        "Run `flopkb mv --finish` (the next `mv`, `fmt` or `new` does it too), or `flopkb mv --undo` to put "
        "every file back. A record edited since the move began is never overwritten: the message names it.",
    ),
    Code(
        "missing-field",
        E,
        "A required field is absent.",
        "Required fields are what every reader and every formula counts on.",
        "kind: flop\n# no category",
        "Add the field; the message names it, and the hint says what to write: the id the path implies, the values a"
        " closed set allows, what the field holds, or which misspelt key of the same mapping to rename.",
    ),
    Code(
        "unknown-field",
        E,
        "A field that the record's kind does not have.",
        "A typo such as `workaround:` for `workarounds:` must not pass silently.",
        "workaround:\n  - Disable it",
        "Rename the field as the hint suggests, or remove it. A key that the mapping one level up takes (a spec "
        "parameter inside another spec) is told as indented into the mapping that holds it: indent it as the hint "
        "says.",
    ),
    Code(
        "invalid-value",
        E,
        "A value of the wrong type or shape.",
        "A list where a string belongs, or a string where a number belongs, cannot be read as the author meant.",
        "year: twenty-twenty-three",
        "Write the value in the type the field asks for.",
    ),
    Code(
        "unknown-term",
        E,
        "A term that `schema/vocabulary.yaml` does not list.",
        "Categories, parameters and bases are controlled so that records can be compared and indexed.",
        "basis: verified",
        "Use a listed term (the hint names the closest), or add the term to the vocabulary.",
    ),
    Code(
        "invalid-id",
        E,
        "An id that breaks the id grammar.",
        "Ids are paths and link targets; they must be lower-case segments `[a-z0-9][a-z0-9._-]*` joined by `/`.",
        "id: Flops/My Record",
        "Use lower-case letters, digits, `.`, `_` and `-` only. At the `id:` field the hint names the id the "
        "file's path implies (`set id: flops/my-record`); at an invalid file name, the name the closest id would "
        "have (`records/flops/my-record.yaml`).",
    ),
    Code(
        "id-path-mismatch",
        E,
        "The `id` is not the file's path below `records/`.",
        "Readers and links find a record by its id; the file must be where its id says.",
        "records/flops/a.yaml with id: flops/b",
        "Rename the file or the id (`flopkb mv` does both and keeps links working).",
    ),
    Code(
        "duplicate-id",
        E,
        "Two records claim one id (an alias counts).",
        "A link to a shared id could not know which record it means.",
        "aliases: [flops/a] in a record other than flops/a",
        "Remove the alias or rename one of the records.",
    ),
    Code(
        "dangling-link",
        E,
        "A `[[wikilink]]` resolves to no record.",
        "A reader who follows it lands nowhere.",
        "See [[flops/no-such-record]].",
        "Correct the target (the hint names the closest ids, or the few a half-typed name begins) or write the "
        "missing record. With no id close, a target in no kind's folder (`[[notes/x]]`) gets the id it would have in "
        "each kind's folder: a record lives in its kind's folder, so the link names its kind.",
    ),
    Code(
        "dangling-ref",
        E,
        "A typed reference resolves to no record.",
        "Typed references carry hardware figures and evidence; a broken one silently drops them.",
        "values_for: [nvidia-h300]",
        "Correct the target (the hint names the closest ids, or the few a half-typed name begins) or write the "
        "missing record.",
    ),
    Code(
        "ambiguous-link",
        E,
        "A link or reference matches several records by its last segment.",
        "The compiler will not guess which record an author meant.",
        "[[vllm]] with records engines/vllm and papers/vllm",
        "Write more of the id, e.g. `[[engines/vllm]]`.",
    ),
    Code(
        "dangling-anchor",
        E,
        "A `#anchor` names no formula of the target record (or no measurement of the target source), or a `ref` "
        "or `measured` has none.",
        "The link would land on the page but not on the formula or measurement it promises.",
        "[[facts/x#ridge]] where facts/x has no formula `ridge`; measured: sources/y#b64 where sources/y has no b64",
        "Use one of the target's formula or measurement ids: the hint offers the closest (a quick fix in an editor), or"
        " lists them.",
    ),
    Code(
        "ambiguous-emphasis",
        W,
        "A `*` between word characters, brackets or digits turned prose into emphasis.",
        "In a performance record `k*T_base` is nearly always a product, but markdown reads the two `*` of "
        "`(k*T_base) ... (B*P_t)` as emphasis: the page drops both and sets the text between them in italics, and "
        "the reader sees a wrong formula.",
        "description: A_be = T_spec/(k*T_base) memory-bound, A_be = 1 + P_d/(B*P_t)",
        "Put the formula in a code span (`` `T_spec/(k*T_base)` ``), or write the product as `k\\*T_base` or "
        "`k×T_base`; the hint quotes the place.",
    ),
    Code(
        "split-link",
        W,
        "A `[[` link broken over two lines: the page shows it as text.",
        "Prose wrapped at a fixed width can break a link between two lines. A link stands on one line, so the page "
        "shows its brackets and text, the link graph lacks the edge, and no other check notices.",
        "statement: |\n  The cost grows with [[flops/prefill-attention-\n  quadratic]] as the prompt grows.",
        "Join the two lines: the hint gives the link as it reads on one line (a line may be longer than the others).",
    ),
    Code(
        "indented-field",
        W,
        "A field of the record indented into the block of text above it: it is read as that text.",
        "YAML reads every line indented as deep as a `description: |` block's text as that text. A key indented by a "
        "slip (`  formulas:` under the description) turns the field and everything under it into prose: the page "
        "publishes it as text, the record lacks the field, and no other check notices. A line of the text that is "
        "one of the record kind's fields, at the block's indentation, followed by a list item or a `key:` line, is "
        "taken for one; prose does not read so.",
        "description: |\n  The engine evicts blocks.\n  formulas:\n  - id: stall-time",
        "Unindent the key to the start of its line (the lines under it may stay as they are): it then ends the "
        "text and is a field of the record.",
    ),
    Code(
        "wrong-kind-ref",
        E,
        "A typed reference lands on a record of the wrong kind.",
        "`values_for` must name accelerators, `sources` source records: anything else breaks evaluation and citations.",
        "values_for: [engines/vllm]",
        "Point the reference at a record of the kind the field asks for.",
    ),
    Code(
        "orphan",
        W,
        "No other record links to or references this one.",
        "An unreachable record is invisible to readers browsing the base.",
        "a new record that nothing mentions",
        "Link to it from a related record.",
    ),
    Code(
        "unverified-basis",
        W,
        "A hardware row or spec whose basis is `unverified`.",
        "Unverified figures are debt: visible until someone finds the evidence.",
        "basis: unverified",
        "Find a source, then set the basis to `measured`, `vendor-spec`, `cited` or `derived` with `sources`.",
    ),
    Code(
        "missing-source",
        E,
        "A basis that needs evidence (`measured`, `vendor-spec`, `cited`) has no `sources`.",
        "A figure that claims evidence must say where the evidence is.",
        "basis: vendor-spec\n# no sources",
        "Add `sources:` with a source record or URL, or set the basis to `unverified`.",
    ),
    Code(
        "unit-mismatch",
        E,
        "A quantity's unit has the wrong dimension.",
        "A bandwidth in FLOP/s would make every formula that uses it wrong.",
        'memory_bandwidth: {value: "989 TFLOP/s"}',
        "Write the value in a unit of the dimension the parameter declares.",
    ),
    Code(
        "formula-syntax",
        E,
        "An expression does not parse under the formula grammar.",
        "Formulas are parsed, never executed; "
        "only numbers, inputs, `hw.<parameter>`, arithmetic and a few functions are allowed.",
        "expr: __import__('os')",
        "Rewrite the expression with the allowed grammar.",
    ),
    Code(
        "formula-unknown-name",
        E,
        "A name that is neither an input nor `hw.<parameter>` (in `expr` or `valid_when`).",
        "An undefined name has no value to compute with.",
        "expr: B * k  # no input k",
        "Add the input, or correct the name (the hint names the closest).",
    ),
    Code(
        "formula-missing-spec",
        E,
        "An accelerator in scope lacks a spec the expression (or its `valid_when`) uses.",
        "The formula cannot be evaluated for that accelerator.",
        "expr: hw.peak_fp8_dense on an accelerator without it",
        "Add the spec to the accelerator, or narrow the formula's `hardware` (a misspelt parameter is a "
        "`formula-unknown-name`, with the closest named).",
    ),
    Code(
        "formula-unit-mismatch",
        E,
        "The result cannot be expressed in `unit`, or units do not add up.",
        "Adding bandwidth to compute, or stating a time in bytes, is a mistake in the formula.",
        "expr: hw.memory_bandwidth + hw.peak_bf16_dense",
        "Fix the expression or the formula's `unit`.",
    ),
    Code(
        "formula-error",
        E,
        "Evaluation failed: division by zero, overflow, a domain error or too many points.",
        "A formula that cannot be evaluated gives readers no number.",
        "expr: 1 / (B - B)",
        "Fix the expression or its inputs; sweeps are limited to 10,000 points.",
    ),
    Code(
        "formula-cycle",
        E,
        "Formula references form a cycle.",
        "A formula defined through itself has no value.",
        "a#f refs b#g, which refs a#f",
        "Break the cycle: one of the formulas must have its own `expr`.",
    ),
    Code(
        "claim-mismatch",
        E,
        "An `expect` value differs from the computed one by more than `rel_tol`.",
        "A number in prose that its own formula contradicts is a number readers cannot trust.",
        "expect: [{where: {a: 0.8, k: 4}, value: 3.5}]",
        "Correct the stated value or the formula (the message gives both).",
    ),
    Code(
        "claim-unchecked",
        W,
        "A claim on an accelerator whose record, or a spec the claim needs, has errors of its own.",
        "The claim cannot be computed until the accelerator reads; without a word at the claim, a wrong claim "
        "would pass unnoticed until the accelerator is fixed.",
        "expect:\n  - hardware: accelerators/acme-x1   # its file has errors\n    value: 5 ms",
        "Fix the errors of the accelerator's file (the message names it); the claim is checked then.",
    ),
    Code(
        "measurement-disagrees",
        W,
        "A formula's value differs from the source measurement a claim names by more than `rel_tol`.",
        "A model that its own sources' measurements contradict is knowledge a reader needs: "
        "the page shows the disagreement instead of a check mark.",
        "expect: [{where: {batch: 32}, measured: sources/eagle3-2025#sglang-b32}]",
        "Correct the formula or its inputs if the model is wrong; give the claim a wider `rel_tol` if the model is "
        "known to hold only within that margin; else leave it: the disagreement is knowledge, and the page shows it "
        "(say why in the record's prose). The message gives both numbers, the tolerance and where in the source the "
        "measurement stands.",
    ),
    Code(
        "claim-out-of-regime",
        E,
        "A claim stands at a point where its formula's `valid_when` does not hold.",
        "A model applied outside the regime it was derived for describes no real configuration: "
        "a number claimed there reads as knowledge and is not.",
        "valid_when: batch * (k + 1) >= hw.peak_bf16_dense * 2 / (2 * hw.memory_bandwidth)\n"
        "expect: [{where: {batch: 1, k: 4}, hardware: nvidia-h100-sxm, value: 1.35}]",
        "Claim a point inside the regime, or claim the value with the formula of the regime the point is in.",
    ),
    Code(
        "erratum-quote-missing",
        E,
        "An erratum's `quote` does not occur verbatim in the field it corrects.",
        "An erratum is pinned to the words it corrects; when they change, it must not silently "
        "drift onto nothing (or onto text it was not written for).",
        "errata: [{field: description, quote: 'a kx improvement', correction: '...'}]",
        "Copy the quote again from the field, exactly, or remove the erratum if the words it corrected are gone.",
    ),
    Code(
        "placeholder",
        W,
        "A record still holds a sentence of the `flopkb new` template, or an accelerator its empty `specs: {}`.",
        "A scaffolded record that was never filled in would be published as knowledge; it is a draft.",
        "statement: Replace this sentence with the fact.",
        "Write the record's own words in place of the template's sentence, and an accelerator's specs under "
        "`specs:` (`--strict` fails on it).",
    ),
]

CODES: dict[str, Code] = {code.name: code for code in _CATALOGUE}

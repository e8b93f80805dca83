"""The planted set: realistic slips in the core folders, each with the tests of its area (run by run.py).

The first eight are the classes that once survived (issue 21, item 11); the others are the kind of slip each
module invites: an off-by-one limit, a check dropped, a condition inverted, a unit confused.
"""

from __future__ import annotations

from typing import NamedTuple


class Mutant(NamedTuple):
    name: str
    path: str
    """Below compiler/."""
    old: str
    new: str
    tests: tuple[str, ...]
    why: str


SURVIVORS = "tests/test_survivors.py"

MUTANTS = [
    Mutant(
        "column-in-bytes",
        "flopkb/load/positions.py",
        "return line, index - starts[line - 1] + 1",
        'return line, len(self.text[starts[line - 1] : index].encode("utf-8")) + 1',
        ("tests/load/test_positions.py", SURVIVORS),
        "a column counted in bytes for non-ASCII text",
    ),
    Mutant(
        "expression-offset-in-bytes",
        "flopkb/formulas/expr.py",
        'return self.shift + len(self.encoded[:column].decode("utf-8", "ignore"))',
        "return self.shift + column",
        ("tests/formulas/test_expr.py", SURVIVORS),
        "an expression offset counted in bytes",
    ),
    Mutant(
        "alias-shadows-id",
        "flopkb/pipeline/compile.py",
        "claimed = {record_id: record_id for record_id in kb.entries}",
        "claimed: dict[str, str] = {}",
        ("tests/load/test_schema_codes.py", SURVIVORS),
        "an alias allowed to shadow an id",
    ),
    Mutant(
        "fmt-second-comment",
        "flopkb/authoring/comments.py",
        'above.setdefault(number, []).append(" " * (len(content) - len(content.lstrip(" "))) + note.text)',
        "pass",
        ("tests/authoring/test_fmt.py", SURVIVORS),
        "fmt dropping a second end-of-line comment",
    ),
    Mutant(
        "sanitiser-event-handler",
        "flopkb/site/sanitize.py",
        '"ol": {"start"},',
        '"ol": {"start", "onclick"},',
        ("tests/site/test_sanitize.py", SURVIVORS),
        "the sanitiser letting an event-handler attribute through on one element",
    ),
    Mutant(
        "serve-ignores-templates",
        "flopkb/site/publishing/serve.py",
        "folders = [self.config.records_path, self.config.root / self.config.schema, site_root_of(self.config)]",
        "folders = [self.config.records_path, self.config.root / self.config.schema]",
        (SURVIVORS,),
        "serve ignoring a changed template",
    ),
    Mutant(
        "path-filter-prefix",
        "flopkb/cli.py",
        'path == prefix or path.startswith(prefix.rstrip("/") + "/") or prefix == "."',
        'path.startswith(prefix) or prefix == "."',
        ("tests/test_cli.py", SURVIVORS),
        "a path filter matching a prefix of a folder name",
    ),
    Mutant(
        "claim-tolerance-shown",
        "flopkb/site/pages/formulas.py",
        '"tolerance": f"{format_number(claim.rel_tol * 100, 3)} %",',
        '"tolerance": f"{format_number(claim.rel_tol * 10, 3)} %",',
        (SURVIVORS,),
        "claim tolerances shown wrongly",
    ),
    # --- load/ and pipeline/
    Mutant(
        "id-length-unchecked",
        "flopkb/load/models.py",
        "if len(value) <= MAX_ID_LENGTH and _VALID_ID.fullmatch(value):",
        "if _VALID_ID.fullmatch(value):",
        ("tests/load",),
        "an over-long id accepted",
    ),
    Mutant(
        "url-http-only",
        "flopkb/load/models.py",
        'return text.startswith(("http://", "https://"))',
        'return text.startswith("http://")',
        ("tests/load", "tests/authoring/test_fmt.py", "tests/links/test_evidence.py"),
        "an https URL not taken for a URL",
    ),
    Mutant(
        "file-size-limit-off",
        "flopkb/load/files.py",
        "if len(raw) > limit:",
        "if len(raw) > limit + 1:",
        ("tests/load",),
        "a file one byte over the limit read whole",
    ),
    # --- links/
    Mutant(
        "ambiguous-suffix-resolves",
        "flopkb/links/resolver.py",
        "if len(candidates) == 1:",
        "if len(candidates) >= 1:",
        ("tests/links/test_resolver.py", "tests/links/test_links.py"),
        "an ambiguous suffix resolved to its first candidate",
    ),
    Mutant(
        "mv-suffix-becomes-full-id",
        "flopkb/links/mv.py",
        "                    return short\n",
        "                    return new\n",
        ("tests/links/test_mv.py",),
        "mv writing the full id where a suffix still lands",
    ),
    Mutant(
        "journal-outside-records",
        "flopkb/links/journal.py",
        "if records not in (config.root / path).resolve().parents:",
        "if records == (config.root / path).resolve():",
        ("tests/links/test_mv_transaction.py::test_a_journal_naming_a_file_outside_records_is_refused",),
        "a journal allowed to name a file outside records/",
    ),
    Mutant(
        "undo-overwrites-a-save",
        "flopkb/links/journal.py",
        "kept = _carry_out(config, sorted(steps, key=lambda step: step[2] is None), strict=False)",
        "kept = _carry_out(config, sorted(steps, key=lambda step: step[2] is None), strict=True)",
        ("tests/links/test_mv_transaction.py::test_a_save_during_the_move_is_kept_and_the_move_undone",),
        "undoing a move stopping at the file an author saved",
    ),
    Mutant(
        "wikilink-over-code-span",
        "flopkb/links/prose.py",
        "if not target or not _closes(state, pos + 2, match.end() - 2):",
        "if not target:",
        ("tests/links/test_prose.py",),
        "a wikilink taken across a code span that starts inside it",
    ),
    Mutant(
        "label-guard-off-by-one",
        "flopkb/links/prose.py",
        "if failed[None] <= start or",
        "if failed[None] <= start + 1 or",
        ("tests/links/test_prose_cost.py", "tests/links/test_prose.py"),
        "no label taken to close right after its `[`",
    ),
    # --- formulas/
    Mutant(
        "claim-tolerance-percent",
        "flopkb/formulas/claims.py",
        "if difference <= row.tolerance:",
        "if difference <= row.tolerance * 100:",
        ("tests/formulas/test_formulas.py",),
        "a claim's tolerance read as a percentage",
    ),
    Mutant(
        "exponent-unbounded",
        "flopkb/formulas/evaluate.py",
        "    if abs(exponent) > EXPONENT_LIMIT:",
        "    if abs(exponent) > EXPONENT_LIMIT * 1000:",
        ("tests/formulas/test_evaluate.py", "tests/formulas/test_formulas.py"),
        "a power's exponent bound a thousand times too loose",
    ),
    Mutant(
        "sweep-limit-loose",
        "flopkb/formulas/evaluate.py",
        "    if points > SWEEP_LIMIT:",
        "    if points > SWEEP_LIMIT * 10:",
        ("tests/formulas/test_evaluate.py", "tests/formulas/test_formulas.py"),
        "a sweep ten times the limit computed",
    ),
    Mutant(
        "record-work-unbounded",
        "flopkb/formulas/context.py",
        "if record > RECORD_VALUE_LIMIT:",
        "if record > RECORD_VALUE_LIMIT * 10:",
        ("tests/formulas/test_work_limits.py",),
        "a record's work bound ten times too loose",
    ),
    Mutant(
        "memo-ignores-inputs",
        "flopkb/formulas/stage.py",
        "key = (definition.expr, definition.unit, inputs, swept, tuple(scope))",
        "key = (definition.expr, definition.unit, swept, tuple(scope))",
        ("tests/formulas/test_work_limits.py",),
        "a borrowed formula's evaluation shared across different inputs",
    ),
    Mutant(
        "memo-ignores-hardware",
        "flopkb/formulas/stage.py",
        "key = (definition.expr, definition.unit, inputs, swept, tuple(scope))",
        "key = (definition.expr, definition.unit, inputs, swept)",
        ("tests/formulas/test_formulas.py",),
        "a borrowed formula's evaluation shared across accelerators",
    ),
    # --- authoring/ and the writes
    Mutant(
        "fmt-flow-width-ignores-key",
        "flopkb/authoring/fmt.py",
        "fits = column + width <= FLOW_WIDTH",
        "fits = width <= FLOW_WIDTH",
        ("tests/authoring/test_fmt.py", "tests/authoring/test_fmt_cost.py"),
        "a flow list allowed past 100 columns",
    ),
    Mutant(
        "save-overwritten",
        "flopkb/atomic.py",
        "if expected is not None and _current(target) != expected:",
        "if expected is None and _current(target) != expected:",
        ("tests/test_atomic.py", "tests/authoring/test_safe_writes.py"),
        "a file saved meanwhile replaced",
    ),
    Mutant(
        "symlink-replaced",
        "flopkb/atomic.py",
        "    _replace(path, target, data, expected=expected)",
        "    _replace(path, path, data, expected=expected)",
        ("tests/test_atomic.py", "tests/authoring/test_safe_writes.py"),
        "a symlinked record turned into a regular file",
    ),
    Mutant(
        "read-only-replaced",
        "flopkb/atomic.py",
        "if status is not None and not status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):",
        "if status is None and not (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):",
        ("tests/test_atomic.py", "tests/authoring/test_safe_writes.py"),
        "a read-only record replaced",
    ),
    Mutant(
        "sweep-young-temporaries",
        "flopkb/atomic.py",
        "dead = _is_dead(int(pid), modified) if pid else now - modified > _UNOWNED_AGE_SECONDS",
        "dead = _is_dead(int(pid), modified) if pid else True",
        ("tests/test_atomic.py",),
        "a temporary file of a run that may still be writing swept",
    ),
    # --- report/ and the command line
    Mutant(
        "strict-fails-without-warnings",
        "flopkb/cli.py",
        "return EXIT_PROBLEMS if Severity.ERROR in severities or (strict and severities) else EXIT_OK",
        "return EXIT_PROBLEMS if Severity.ERROR in severities or strict else EXIT_OK",
        ("tests/test_cli.py", "tests/test_exit_status.py"),
        "--strict failing a base without warnings",
    ),
    Mutant(
        "sanitiser-data-urls",
        "flopkb/site/sanitize.py",
        'URL_SCHEMES = frozenset({"http", "https", "mailto"})',
        'URL_SCHEMES = frozenset({"http", "https", "mailto", "data"})',
        ("tests/site/test_sanitize.py",),
        "data: URLs let through",
    ),
]

"""The `flopkb` command line: thin commands over the compile pipeline (see docs/cli.md)."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from flopkb.config import Config, ConfigError, find_base, load_config

if TYPE_CHECKING:
    from flopkb.kb.knowledge_base import KnowledgeBase
    from flopkb.pipeline.cache import FileCache
    from flopkb.report.diagnostics import Diagnostic
    from flopkb.report.reporters import Summary

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class UsageError(click.ClickException):
    """The command cannot run: exit status 2 with a clear message."""

    exit_code = EXIT_USAGE


def open_config(root: str | None) -> Config:
    """The configuration of the knowledge base at `root` (default: the one the current folder lies in)."""
    base = Path(root).resolve() if root is not None else find_base(Path.cwd())
    if base is None:
        raise UsageError(
            f"no knowledge base here: neither {Path.cwd()} nor a folder above it has a records/ folder or a"
            " [tool.flopkb] table in pyproject.toml; run flopkb inside a knowledge base, or pass --root DIR"
        )
    try:
        config = load_config(base)
    except ConfigError as error:
        raise UsageError("\nError: ".join(error.problems)) from error  # each problem a line of its own
    if not config.records_path.is_dir():
        raise UsageError(f"no {config.records}/ folder in {base}: run flopkb in a knowledge base, or pass --root DIR")
    return config


def relative_filters(config: Config, paths: tuple[str, ...]) -> list[str]:
    """PATH arguments as root-relative, '/'-separated prefixes."""
    filters = []
    for given in paths:
        absolute = Path(given).resolve()
        try:
            filters.append(absolute.relative_to(config.root).as_posix())
        except ValueError as error:
            raise UsageError(f"{given} is not inside the knowledge base {config.root}") from error
    return filters


def in_paths(path: str, filters: list[str]) -> bool:
    return not filters or any(
        path == prefix or path.startswith(prefix.rstrip("/") + "/") or prefix == "." for prefix in filters
    )


@contextlib.contextmanager
def writing(config: Config, *, finish_move: bool = True) -> Iterator[None]:
    """Around a command that writes records: SIGTERM cleans up like Ctrl-C, the temporary files of killed runs are
    removed, a move that was interrupted is finished first, and a failed write is one line with exit status 2."""
    from flopkb.atomic import WriteError, interruptible, sweep_temporaries
    from flopkb.links.journal import JournalError, finish, pending

    with interruptible():
        try:
            swept = sweep_temporaries(config.records_path) + sweep_temporaries(config.root, recursive=False)
            if swept:
                click.echo(f"removed {len(swept)} temporary file{'s' if len(swept) > 1 else ''} of killed runs")
            journal = pending(config) if finish_move else None
            if journal is not None:
                finish(config, journal)
                click.echo(f"finished the interrupted `{journal.command}`")
            yield
        except (WriteError, JournalError) as error:
            raise UsageError(str(error)) from error
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            raise UsageError(f"{where}cannot write: {error.strerror or error}") from error


root_option = click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=None,
    help="The knowledge base folder (default: the nearest folder, from the current one up, with records/ or a"
    " [tool.flopkb] table).",
)
format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["auto", "text", "json", "github", "sarif"]),
    default="auto",
    show_default=True,
    help="How diagnostics are printed; auto: GitHub annotations under GitHub Actions, text elsewhere.",
)
cache_option = click.option(
    "--cache/--no-cache",
    "use_cache",
    default=None,
    help="Keep what loading each file gave in the user's cache folder, for the next run (default: on, off under CI),"
    " or load every file again, neither reading nor writing it.",
)


def open_cache(config: Config, use_cache: bool | None, *, once: bool = True) -> FileCache | None:
    """The load cache, unless turned off: by --no-cache, or under CI (`CI` set to true) without --cache.

    A CI run starts from a fresh clone and ends with its machine: a cache written there is never read. A command that
    loads `once` answers first, as `--no-cache` does, when the cache is empty (`FileCache`'s `answer_first`).
    """
    from flopkb.pipeline.cache import FileCache

    if use_cache is None:
        use_cache = os.environ.get("CI", "").strip().lower() not in ("true", "1", "yes")
    return FileCache(config, answer_first=once) if use_cache else None


def save_cache(cache: FileCache | None, then: Callable[[], None] | None = None) -> None:
    """Say what was wrong with the cache (on standard error), then write what the run changed in it (and `then`): in a
    detached process, that outlives this one, when this is the `flopkb` program (`program`)."""
    if cache is not None:
        for note in cache.notes:
            click.echo(f"flopkb: note: {note}", file=sys.stderr)
        cache.save(after_exit=click.get_current_context().obj is _PROGRAM, then=then)


_PROGRAM = object()  # main's context object as the `flopkb` program: its process ends with the command


def program() -> None:
    """The `flopkb` program (its console script, and `python -m flopkb`)."""
    main(obj=_PROGRAM)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="flopkb")
def main() -> None:
    """Compile, check and publish a knowledge base of LLM-inference performance records."""


@main.command(short_help="Check every record; report each problem where it is.")
@root_option
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@format_option
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@cache_option
@click.option(
    "--watch", "watch_mode", is_flag=True, help="Check again on every save and print what changed, until Ctrl-C."
)
def check(
    root: str | None,
    paths: tuple[str, ...],
    output_format: str,
    strict: bool,
    use_cache: bool | None,
    watch_mode: bool,
) -> None:
    """Load, validate, link-check and evaluate the whole knowledge base; report diagnostics."""
    from flopkb.pipeline.compile import compile_knowledge_base, load_entries
    from flopkb.pipeline.stages import CHECK_STAGES
    from flopkb.pipeline.verdict import store
    from flopkb.report.diagnostics import INTERNAL_ERROR
    from flopkb.report.reporters import Summary, report, resolve_color, resolve_format

    config = open_config(root)
    filters = relative_filters(config, paths)
    if watch_mode and output_format not in ("auto", "text"):
        raise UsageError("--watch prints text; leave out --format")
    cache = open_cache(config, use_cache, once=not watch_mode)

    def run() -> tuple[list[Diagnostic], Summary, KnowledgeBase]:
        kb = compile_knowledge_base(config, CHECK_STAGES, cache or load_entries)
        shown = [d for d in kb.diagnostics if in_paths(d.path, filters) or d.code == INTERNAL_ERROR]
        return shown, Summary.of(shown, records=len(kb.entries), strict=strict), kb

    if watch_mode:
        from flopkb.authoring.watch import watch

        try:
            watch(
                lambda: run()[:2],
                [folder for folder in (config.records_path, config.root / config.schema) if folder.is_dir()],
                sys.stdout,
            )
        except KeyboardInterrupt:
            click.echo("stopped watching")
        finally:
            save_cache(cache)
        return
    began = time.time_ns()
    shown, summary, kb = run()
    chosen = resolve_format(output_format, os.environ)
    report(
        shown, summary, chosen, sys.stdout, color=chosen == "text" and resolve_color(os.environ, sys.stdout.isatty())
    )
    save_cache(cache, None if cache is None else functools.partial(store, config, cache, kb.diagnostics, began))
    sys.exit(exit_status(shown, strict))


def exit_status(diagnostics: Iterable[Diagnostic], strict: bool) -> int:
    """2 when flopkb failed (an `internal-error`), 1 for errors (and warnings, when strict), else 0."""
    from flopkb.report.diagnostics import INTERNAL_ERROR, Severity

    severities = set()
    for diagnostic in diagnostics:
        if diagnostic.code == INTERNAL_ERROR:
            return EXIT_USAGE
        severities.add(diagnostic.severity)
    return EXIT_PROBLEMS if Severity.ERROR in severities or (strict and severities) else EXIT_OK


@main.command(short_help="Write the link graph (json, graphml or dot).")
@root_option
@click.option(
    "--format", "output_format", type=click.Choice(["json", "graphml", "dot"]), default="json", show_default=True
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to FILE instead of standard output.",
)
def graph(root: str | None, output_format: str, output: str | None) -> None:
    """Write the link graph of records: every wikilink and typed ref as an edge."""
    from flopkb.pipeline.compile import compile_knowledge_base
    from flopkb.pipeline.stages import FORMULA_STAGES, LINK_STAGES

    config = open_config(root)
    # the formula stage too: a node's standing (its badge's word) reads disagreements with measurements
    kb = compile_knowledge_base(config, (*LINK_STAGES, *FORMULA_STAGES))
    assert kb.graph is not None
    text = kb.graph.export(output_format)
    if output is None:
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8", newline="\n")


@main.command(short_help="Rename a record or a folder of them; rewrite every link.")
@root_option
@click.argument("old", required=False)
@click.argument("new", required=False)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--finish", "finish_only", is_flag=True, help="Finish an interrupted move; move nothing else.")
@click.option("--undo", is_flag=True, help="Undo an interrupted move: every file back as it was before it.")
def mv(root: str | None, old: str | None, new: str | None, dry_run: bool, finish_only: bool, undo: bool) -> None:
    """Rename record OLD to id NEW: move its file, rewrite every link to it, keep OLD as an alias. OLD a folder of
    records (`flops/old/`, or a folder no record's id is): move every record in it to the folder NEW."""
    from flopkb.authoring.folders import move_warning
    from flopkb.links.journal import pending
    from flopkb.links.journal import undo as undo_move
    from flopkb.links.mv import MoveError, move

    config = open_config(root)
    if finish_only or undo:
        if old or new or dry_run or (finish_only and undo):
            raise UsageError("--finish and --undo take no ids, and not each other")
        with writing(config, finish_move=finish_only):
            journal = pending(config)
            if journal is None:
                click.echo("no move was interrupted: nothing to do")
            elif undo:
                kept = undo_move(config, journal)
                click.echo(f"undid the interrupted `{journal.command}`: every file is as it was before it")
                for path in kept:
                    click.echo(f"  except {path}: saved since the move began, so left as it is")
        return
    if old is None or new is None:
        raise UsageError("give the record to move and its new id: flopkb mv OLD NEW")
    with writing(config, finish_move=not dry_run):
        try:
            plan = move(config, old, new, dry_run=dry_run)
        except MoveError as error:
            raise UsageError(str(error)) from error
    click.echo("\n".join(plan.summary(dry_run)))
    misplaced = plan.kind and move_warning(plan.kind, plan.old, plan.new, dry_run=dry_run)
    if misplaced:
        click.echo(f"warning: {misplaced}", err=True)


@main.command(short_help="Write the JSON Schemas for editors into schema/.")
@root_option
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; list the schemas that are out of date and exit 1 if any is.",
)
def schema(root: str | None, check_only: bool) -> None:
    """Write the JSON Schema of every record kind into schema/, for editors (see docs/authoring.md)."""
    from flopkb.authoring.schema import refresh, schemas
    from flopkb.pipeline.compile import load_vocabulary
    from flopkb.report.reporters import Summary, report

    config = open_config(root)
    vocabulary, problems = load_vocabulary(config)
    if vocabulary is None:
        report(problems, Summary.of(problems, records=0), "text", sys.stdout)
        sys.exit(EXIT_PROBLEMS)
    with contextlib.nullcontext() if check_only else writing(config, finish_move=False):
        stale = refresh(config.root / config.schema, schemas(vocabulary), write=not check_only)
    for name in stale:
        click.echo(f"{'out of date' if check_only else 'wrote'}: {config.schema}/{name}")
    if not stale:
        click.echo(f"{config.schema}/: every schema is up to date")
    sys.exit(EXIT_PROBLEMS if check_only and stale else EXIT_OK)


@main.command(short_help="Write a new record from its kind's template.")
@root_option
@click.argument("kind")
@click.argument("record_id", metavar="ID")
def new(root: str | None, kind: str, record_id: str) -> None:
    """Write records/ID.yaml: a new KIND record (flop, fact, engine, accelerator or source) to fill in."""
    from flopkb.authoring.folders import folder_warning
    from flopkb.authoring.scaffold import ScaffoldError, new_record
    from flopkb.pipeline.compile import load_vocabulary

    config = open_config(root)
    vocabulary, _ = load_vocabulary(config)
    if vocabulary is None:
        raise UsageError(f"{config.schema}/vocabulary.yaml cannot be used; flopkb check says why")
    with writing(config):
        try:
            made = new_record(config, kind, record_id, vocabulary)
        except ScaffoldError as error:
            raise UsageError(str(error)) from error
    click.echo(f"wrote {made.path.relative_to(config.root).as_posix()}")
    misplaced = folder_warning(kind, made.record_id)
    if misplaced:
        click.echo(f"warning: {misplaced}", err=True)
    click.echo(
        f"now write: {', '.join(made.to_fill)} (the template holds placeholders: check warns 'placeholder', "
        "and the record is a draft, until they are replaced); check warns 'orphan' until another record links to it"
    )
    if not made.schema.is_file():
        click.echo(f"run flopkb schema, so that editors find {made.schema.relative_to(config.root).as_posix()}")


@main.command(short_help="Rewrite records in canonical form, comments kept.")
@root_option
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; list the files that would change and exit 1 if any would.",
)
def fmt(root: str | None, paths: tuple[str, ...], check_only: bool) -> None:
    """Rewrite records in canonical form, every word and comment kept (see docs/authoring.md)."""
    from flopkb.atomic import LeftAlone
    from flopkb.authoring.fmt import format_file, write
    from flopkb.pipeline.compile import record_files
    from flopkb.report.reporters import Summary, report

    config = open_config(root)
    filters = relative_filters(config, paths)
    with writing(config) if not check_only else contextlib.nullcontext():
        files, unlisted = record_files(config)
        outcomes = [format_file(config.root, rel, config.records) for rel in files if in_paths(rel, filters)]
        changed = [outcome for outcome in outcomes if outcome.changed]
        for outcome in changed:
            try:
                if not check_only:
                    write(config.root, outcome)
            except LeftAlone as refusal:
                outcome.refusal = str(refusal).removeprefix(f"{config.root / outcome.path}: ")
                continue
            click.echo(f"{'would reformat' if check_only else 'reformatted'}: {outcome.path}")
    changed = [outcome for outcome in changed if not outcome.refusal]
    for outcome in outcomes:
        if outcome.refusal:
            click.echo(f"left as it is: {outcome.path}: {outcome.refusal}")
    problems = [problem for problem in unlisted if in_paths(problem.path, filters)]
    problems += [problem for outcome in outcomes for problem in outcome.problems]
    if problems:
        report(problems, Summary.of(problems, records=len(outcomes)), "text", sys.stdout)
    verb = "would be reformatted" if check_only else "reformatted"
    click.echo(f"{len(changed)} of {len(outcomes)} record files {verb}")
    unformattable = bool(problems) or any(outcome.refusal for outcome in outcomes)
    sys.exit(EXIT_PROBLEMS if unformattable or (check_only and changed) else EXIT_OK)


@main.command(name="diff", short_help="What a change does to the computed results.")
@root_option
@click.argument("revisions", metavar="[BASE[..HEAD]]", required=False)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json", "github"]),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a pull-request comment or job summary, json for scripts, "
    "github for annotations.",
)
@click.option(
    "--fail-on",
    metavar="CONDITIONS",
    default="",
    help="Exit 1 when one of these happens (comma-separated): claim-regression, new-disagreement, new-error, "
    "evidence-regression.",
)
@click.option(
    "--markdown",
    "markdown_file",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the markdown report to FILE (a job summary, a pull-request comment), from the same run.",
)
def diff(root: str | None, revisions: str | None, output_format: str, fail_on: str, markdown_file: str | None) -> None:
    """What a change does to the computed knowledge: BASE..HEAD compares HEAD with its merge base with BASE; BASE
    alone compares BASE with the work tree; without either, the default base (see docs/cli.md)."""
    from flopkb.review.git import GitError
    from flopkb.review.model import FAIL_ON
    from flopkb.review.run import FORMATS, diff_report

    conditions = tuple(condition.strip() for condition in fail_on.split(",") if condition.strip())
    unknown = [condition for condition in conditions if condition not in FAIL_ON]
    if unknown:
        raise UsageError(f"--fail-on: unknown {', '.join(unknown)}; choose from {', '.join(FAIL_ON)}")
    config = open_config(root)
    try:
        found = diff_report(config, revisions, os.environ)
    except GitError as error:
        raise UsageError(str(error)) from error
    sys.stdout.write(FORMATS[output_format](found))
    if markdown_file is not None:
        Path(markdown_file).write_text(FORMATS["markdown"](found), encoding="utf-8")
    sys.exit(EXIT_PROBLEMS if found.failures(conditions) else EXIT_OK)


@main.command(name="eval", short_help="Print a record's formula values per accelerator.")
@root_option
@click.argument("record", metavar="ID")
@click.option(
    "--hardware",
    metavar="REF",
    default=None,
    help="Evaluate on this accelerator alone (a ref: full id, last segment or alias).",
)
@click.option(
    "--set",
    "settings",
    metavar="NAME=QUANTITY",
    multiple=True,
    help="Override an input (a what-if); NAME=Q1,Q2 is a sweep. Repeatable.",
)
def eval_command(root: str | None, record: str, hardware: str | None, settings: tuple[str, ...]) -> None:
    """Print the evaluations of record ID's formulas as tables, with units; --set and --hardware make a what-if."""
    from flopkb.formulas.eval_table import EvalUsageError, evaluate, render
    from flopkb.pipeline.compile import compile_knowledge_base
    from flopkb.pipeline.stages import CHECK_STAGES
    from flopkb.report.reporters import Summary, report, resolve_color

    config = open_config(root)
    kb = compile_knowledge_base(config, CHECK_STAGES)
    try:
        outcome = evaluate(kb, record, hardware, settings)
    except EvalUsageError as error:
        raise UsageError(str(error)) from error
    terminal = sys.stdout.isatty()
    color = resolve_color(os.environ, terminal)
    render(outcome, sys.stdout, color=color, terminal=terminal)
    if outcome.errors:
        report(outcome.diagnostics, Summary.of(outcome.diagnostics, records=1), "text", sys.stdout, color=color)
    sys.exit(EXIT_PROBLEMS if outcome.errors else EXIT_OK)


NO_SITE_URL = (
    "flopkb build: warning: no site URL ([tool.flopkb.site] url): pages have no canonical URL, and a host that"
    " answers a missing URL deep in the site with 404.html cannot style it; set it to the address the site is"
    " published at"
)


@main.command(short_help="Check, then render the site into build/site/.")
@root_option
@format_option
@click.option("--strict", is_flag=True, help="Refuse to build on warnings too.")
@cache_option
def build(root: str | None, output_format: str, strict: bool, use_cache: bool | None) -> None:
    """Check the knowledge base, then render its site into build/site (refused when there are errors)."""
    from flopkb.pipeline.compile import load_entries
    from flopkb.report.reporters import Summary, report, resolve_color, resolve_format
    from flopkb.site.publishing.publish import BuildError
    from flopkb.site.publishing.publish import build as build_site

    config = open_config(root)
    cache = open_cache(config, use_cache)
    try:
        outcome = build_site(config, load=cache or load_entries, strict=strict, cached_templates=cache is not None)
    except BuildError as error:
        raise UsageError(str(error)) from error
    diagnostics = outcome.kb.diagnostics
    summary = Summary.of(diagnostics, records=len(outcome.kb.entries), strict=strict)
    chosen = resolve_format(output_format, os.environ)
    report(
        diagnostics,
        summary,
        chosen,
        sys.stdout,
        color=chosen == "text" and resolve_color(os.environ, sys.stdout.isatty()),
    )
    save_cache(cache)
    status = sys.stdout if chosen == "text" else sys.stderr
    if outcome.refused:
        problems = "errors" if summary.errors else "warnings (--strict)"
        click.echo(f"flopkb build: the knowledge base has {problems}; no site was written", file=sys.stderr)
        sys.exit(exit_status(diagnostics, strict) or EXIT_PROBLEMS)
    for warning in outcome.warnings:
        click.echo(f"mkdocs: {warning}", file=sys.stderr)
    for link in outcome.left_out:
        click.echo(f"flopkb build: {link}: not published, a symlink out of site/ (or to a folder)", file=sys.stderr)
    if not config.site.url:
        click.echo(NO_SITE_URL, file=sys.stderr)
    shown = os.path.relpath(outcome.site_dir, Path.cwd()) if outcome.site_dir else ""
    times = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in outcome.timings.items())
    click.echo(f"built {outcome.pages} pages into {shown} ({times})", file=status)
    click.echo(f"read it served (search needs http): flopkb serve, or python -m http.server -d {shown}", file=status)
    sys.exit(EXIT_OK)


@main.command(short_help="Build, serve on localhost, rebuild on every save.")
@root_option
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@click.option("--no-cache", is_flag=True, help="Load every file again on each rebuild.")
def serve(root: str | None, port: int, no_cache: bool) -> None:
    """Build the site, serve it on 127.0.0.1 and rebuild on every change to records, schema or site; pages reload
    themselves."""
    from flopkb.site.publishing.serve import ServeError, run

    config = open_config(root)
    try:
        run(config, port=port, use_cache=not no_cache, out=sys.stdout)
    except ServeError as error:
        raise UsageError(str(error)) from error


@main.command(short_help="Run the language server for editors.")
@root_option
@click.option("--tcp", "port", type=click.IntRange(1, 65535), help="Listen on 127.0.0.1:PORT, not stdio (debugging).")
def lsp(root: str | None, port: int | None) -> None:
    """Run the language server for editors: flopkb's diagnostics on unsaved text, over stdio (docs/editors.md)."""
    from flopkb.editor.start import serve_editor

    try:
        config: Config | None = open_config(root)
    except UsageError:
        if root is not None:
            raise
        config = None  # the client names the base: its workspace folder
    serve_editor(config, root_named=root is not None, port=port)

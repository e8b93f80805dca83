"""The `flopkb` command line: thin commands over the compile pipeline (see docs/cli.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from flopkb.config import Config, ConfigError, find_base, load_config

if TYPE_CHECKING:
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
        raise UsageError(str(error)) from error
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


def open_cache(config: Config, use_cache: bool | None) -> FileCache | None:
    """The load cache, unless turned off: by --no-cache, or under CI (`CI` set to true) without --cache.

    A CI run starts from a fresh clone and ends with its machine: a cache written there is never read.
    """
    from flopkb.pipeline.cache import FileCache

    if use_cache is None:
        use_cache = os.environ.get("CI", "").strip().lower() not in ("true", "1", "yes")
    return FileCache(config) if use_cache else None


def save_cache(cache: FileCache | None) -> None:
    """Write what the run changed in the cache, then say what was wrong with it (on standard error)."""
    if cache is not None:
        cache.save()
        for note in cache.notes:
            click.echo(f"flopkb: note: {note}", file=sys.stderr)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="flopkb")
def main() -> None:
    """Compile, check and publish a knowledge base of LLM-inference performance records."""


@main.command()
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
    from flopkb.report.diagnostics import INTERNAL_ERROR
    from flopkb.report.reporters import Summary, report, resolve_color, resolve_format

    config = open_config(root)
    filters = relative_filters(config, paths)
    if watch_mode and output_format not in ("auto", "text"):
        raise UsageError("--watch prints text; leave out --format")
    cache = open_cache(config, use_cache)

    def run() -> tuple[list[Diagnostic], Summary]:
        kb = compile_knowledge_base(config, CHECK_STAGES, cache or load_entries)
        shown = [d for d in kb.diagnostics if in_paths(d.path, filters) or d.code == INTERNAL_ERROR]
        return shown, Summary.of(shown, records=len(kb.entries))

    if watch_mode:
        from flopkb.authoring.watch import watch

        try:
            watch(
                run,
                [folder for folder in (config.records_path, config.root / config.schema) if folder.is_dir()],
                sys.stdout,
            )
        except KeyboardInterrupt:
            click.echo("stopped watching")
        finally:
            save_cache(cache)
        return
    shown, summary = run()
    chosen = resolve_format(output_format, os.environ)
    report(
        shown, summary, chosen, sys.stdout, color=chosen == "text" and resolve_color(os.environ, sys.stdout.isatty())
    )
    save_cache(cache)
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


@main.command()
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
    from flopkb.pipeline.stages import LINK_STAGES

    config = open_config(root)
    kb = compile_knowledge_base(config, LINK_STAGES)
    assert kb.graph is not None
    text = kb.graph.export(output_format)
    if output is None:
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8", newline="\n")


@main.command()
@root_option
@click.argument("old")
@click.argument("new")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
def mv(root: str | None, old: str, new: str, dry_run: bool) -> None:
    """Rename record OLD to id NEW: move its file, rewrite every link to it, keep OLD as an alias."""
    from flopkb.links.mv import MoveError, move

    config = open_config(root)
    try:
        plan = move(config, old, new, dry_run=dry_run)
    except MoveError as error:
        raise UsageError(str(error)) from error
    verb = "would move" if dry_run else "moved"
    click.echo(f"{verb} {plan.old_path} -> {plan.new_path}")
    for path, count in sorted(plan.rewritten.items()):
        click.echo(f"  {path}: {count} link{'s' if count != 1 else ''} rewritten")
    if plan.alias_added:
        click.echo(f"  {plan.new_path}: '{plan.old}' added to aliases")


@main.command()
@root_option
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; list the schemas that are out of date and exit 1 if any is.",
)
def schema(root: str | None, check_only: bool) -> None:
    """Write the JSON Schema of every record kind into schema/, for editors (see docs/authoring.md)."""
    from flopkb.authoring.schema import outdated, schemas
    from flopkb.pipeline.compile import load_vocabulary
    from flopkb.report.reporters import Summary, report

    config = open_config(root)
    vocabulary, problems = load_vocabulary(config)
    if vocabulary is None:
        report(problems, Summary.of(problems, records=0), "text", sys.stdout)
        sys.exit(EXIT_PROBLEMS)
    texts = schemas(vocabulary)
    folder = config.root / config.schema
    stale = outdated(folder, texts)
    for name in stale:
        if not check_only:
            (folder / name).write_text(texts[name], encoding="utf-8", newline="\n")
        click.echo(f"{'out of date' if check_only else 'wrote'}: {config.schema}/{name}")
    if not stale:
        click.echo(f"{config.schema}/: every schema is up to date")
    sys.exit(EXIT_PROBLEMS if check_only and stale else EXIT_OK)


@main.command()
@root_option
@click.argument("kind")
@click.argument("record_id", metavar="ID")
def new(root: str | None, kind: str, record_id: str) -> None:
    """Write records/ID.yaml: a new KIND record (flop, fact, engine, accelerator or source) to fill in."""
    from flopkb.authoring.scaffold import ScaffoldError, new_record
    from flopkb.pipeline.compile import load_vocabulary

    config = open_config(root)
    vocabulary, _ = load_vocabulary(config)
    if vocabulary is None:
        raise UsageError(f"{config.schema}/vocabulary.yaml cannot be used; flopkb check says why")
    try:
        made = new_record(config, kind, record_id, vocabulary)
    except ScaffoldError as error:
        raise UsageError(str(error)) from error
    click.echo(f"wrote {made.path.relative_to(config.root).as_posix()}")
    click.echo(
        f"now write: {', '.join(made.to_fill)} (the template holds placeholders: check warns 'placeholder', "
        "and the record is a draft, until they are replaced); check warns 'orphan' until another record links to it"
    )
    if not made.schema.is_file():
        click.echo(f"run flopkb schema, so that editors find {made.schema.relative_to(config.root).as_posix()}")


@main.command()
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
    from flopkb.authoring.fmt import format_file, write
    from flopkb.pipeline.compile import record_files
    from flopkb.report.reporters import Summary, report

    config = open_config(root)
    filters = relative_filters(config, paths)
    files, unlisted = record_files(config)
    outcomes = [format_file(config.root, rel) for rel in files if in_paths(rel, filters)]
    changed = [outcome for outcome in outcomes if outcome.changed]
    for outcome in changed:
        if not check_only:
            write(config.root, outcome)
        click.echo(f"{'would reformat' if check_only else 'reformatted'}: {outcome.path}")
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


@main.command(name="eval")
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


@main.command()
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
        outcome = build_site(config, load=cache or load_entries, strict=strict)
    except BuildError as error:
        raise UsageError(str(error)) from error
    diagnostics = outcome.kb.diagnostics
    summary = Summary.of(diagnostics, records=len(outcome.kb.entries))
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
    shown = os.path.relpath(outcome.site_dir, Path.cwd()) if outcome.site_dir else ""
    times = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in outcome.timings.items())
    click.echo(f"built {outcome.pages} pages into {shown} ({times})", file=status)
    click.echo(f"read it served (search needs http): flopkb serve, or python -m http.server -d {shown}", file=status)
    sys.exit(EXIT_OK)


@main.command()
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

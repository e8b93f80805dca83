"""`flopkb new KIND ID`: a new record from the kind's template, ready to fill in.

Templates live in `templates/new/<kind>.yaml.j2`. Each writes every required
field, with a comment on what to write and a value that already validates: a
sentence to replace in prose, the first term of a vocabulary in a term field
(its comment lists the others), an empty `specs` for an accelerator. Its first
line points the YAML language server at the kind's JSON Schema, so the editor
completes and checks the record from the first keystroke.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import jinja2
import yaml

from flopkb.atomic import create_atomically
from flopkb.authoring.schema import schema_file
from flopkb.config import Config, OutsideRecords
from flopkb.load.files import lands_inside
from flopkb.load.models import KINDS, MODELS, id_like, id_problem
from flopkb.load.sources import RECORD_SUFFIXES
from flopkb.load.vocabulary import Vocabulary
from flopkb.report.hints import did_you_mean


def _scalar(text: str) -> str:
    """`text` as a YAML scalar: plain when YAML reads it back as that text, double-quoted otherwise."""
    return text if yaml.safe_load(text) == text else yaml.safe_dump(text, default_style='"').strip()


_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates" / "new"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # YAML, not HTML
)
_TEMPLATES.filters["scalar"] = _scalar


class ScaffoldError(Exception):
    """The record cannot be created: the message says why."""


@dataclass(frozen=True, slots=True)
class Scaffolded:
    record_id: str
    path: Path
    to_fill: list[str]
    """The required fields the author must write: their template values are placeholders."""
    schema: Path
    """The JSON Schema its first line names."""


def new_record(config: Config, kind: str, argument: str, vocabulary: Vocabulary) -> Scaffolded:
    """Write `records/<id>.yaml` from the template of `kind`, the id given as an id or as its file's path
    (`Config.record_id`); refuse a bad kind or id, or an existing record."""
    if kind not in KINDS:
        hint = did_you_mean(kind, KINDS)
        raise ScaffoldError(
            f"'{kind}' is not a record kind; one of {', '.join(KINDS)}" + (f" ({hint})" if hint else "")
        )
    try:
        record_id = config.record_id(argument)
    except OutsideRecords as error:
        raise ScaffoldError(str(error)) from None
    problem = id_problem(record_id)
    if problem:
        like = id_like(record_id)
        raise ScaffoldError(
            f"'{record_id}' is not a valid id: {problem}" + (f" (did you mean {like}?)" if like else "")
        )
    existing = new_record_path(config, record_id)
    for path in existing:
        if path.exists():
            raise ScaffoldError(f"{path.relative_to(config.root).as_posix()} already exists")
    path = existing[0]
    linked = linked_out(config, path)
    if linked is not None:
        raise ScaffoldError(linked)
    schema = config.root / config.schema / schema_file(kind)
    text = render_new(config, kind, record_id, path, vocabulary)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        create_atomically(path, text.encode("utf-8"))  # whole or not at all: a full disk leaves nothing behind
    except FileExistsError as error:
        raise ScaffoldError(f"{path.relative_to(config.root).as_posix()} already exists") from error
    required = [
        name for name, field in MODELS[kind].model_fields.items() if field.is_required() and name not in ("id", "kind")
    ]
    return Scaffolded(record_id, path, required, schema)


def new_record_path(config: Config, record_id: str) -> list[Path]:
    """The files a record of `record_id` may be: the first is the one `new` writes; none may exist."""
    return [config.records_path / f"{record_id}{suffix}" for suffix in RECORD_SUFFIXES]


def linked_out(config: Config, path: Path) -> str | None:
    """Why no new record may be written at `path` (under the records folder): a folder on its way is a symlink. One
    that leads out of the records folder would put the file elsewhere (outside the base, for a committed
    `records/notes -> /home/...`); through one that stays in it, `check` (which follows no folder link) would find
    the record under another path, which its id is not. None when no folder is a link. `new`, `mv` and the editor's
    "create the missing record" ask.
    """
    folder = config.records_path
    for part in path.parent.relative_to(config.records_path).parts:
        folder = folder / part
        if not folder.is_symlink():
            continue
        where = folder.relative_to(config.root).as_posix()
        if not lands_inside(folder, config.root):
            return f"{where} is a symlink that leads out of the knowledge base"
        if not lands_inside(folder, config.records_path):
            return f"{where} is a symlink that leads out of {config.records}/"
        real = Path(os.path.realpath(path)).relative_to(os.path.realpath(config.records_path))
        return (
            f"{where} is a symlink, and check finds no record through one: use the id {real.with_suffix('').as_posix()}"
        )
    return None


def render_new(config: Config, kind: str, record_id: str, path: Path, vocabulary: Vocabulary) -> str:
    """The text `new` writes at `path` for a record of `kind`: its first line names the kind's schema."""
    schema = config.root / config.schema / schema_file(kind)
    return render(kind, record_id, Path(os.path.relpath(schema, path.parent)).as_posix(), vocabulary)


def render(kind: str, record_id: str, schema: str, vocabulary: Vocabulary) -> str:
    """The text of a new record of `kind` with id `record_id`, whose first line names `schema`."""
    template = _TEMPLATES.get_template(f"{kind}.yaml.j2")
    return template.render(id=record_id, title=_title(record_id), schema=schema, terms=vocabulary.terms)


def _title(record_id: str) -> str:
    """A first title from the id's last segment: `sd-batch-dilution` → `Sd batch dilution`."""
    words = record_id.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ")
    return words[:1].upper() + words[1:]

"""`flopkb mv OLD NEW`: rename a record and every link to it, editing text in place.

The move is planned in full before anything is written:

1. the record's file moves from `records/OLD.yaml` to `records/NEW.yaml`
   (same extension), its `id` is rewritten, and OLD is added to its
   `aliases`, so links from outside the base keep resolving;
2. every wikilink and typed ref in the base that resolved to OLD is
   rewritten to land on NEW: only the target's characters change, so the
   label, the `#anchor` and every other byte of each file stay as they were.
   A target written as a unique suffix (`[[h100-sxm]]`) stays a suffix of the
   same length when that suffix still resolves uniquely to NEW; otherwise
   it becomes the full new id;
3. a link to another record that the new id would make ambiguous (NEW
   shares its last segment with it) is rewritten to that record's full id.

Edits are made at the positions the loader and `flopkb.links.extract` found, never
by re-serialising YAML: comments, quoting, key order and line endings are
kept. The move is a transaction (`flopkb.links.journal`): every file's bytes before and after are written
down before the first write, each file is replaced only if it still holds what was read, and a move that
cannot be completed (a save meanwhile, a full disk) is undone; a killed one is finished by the next command.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from flopkb.atomic import WriteError
from flopkb.authoring.scaffold import linked_out
from flopkb.config import Config, OutsideRecords
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.extract import Link
from flopkb.links.journal import FileChange, Journal, JournalError, begin, finish, undo
from flopkb.links.resolve import check_links
from flopkb.links.resolver import ID, SUFFIX, Resolver
from flopkb.load.files import Unreadable, read_bytes
from flopkb.load.models import id_like, id_problem
from flopkb.load.source import Source
from flopkb.pipeline.compile import compile_knowledge_base

_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
"""Where YAML ends a line (for edits that follow the YAML structure; positions come from `Source.lines`)."""
_SPACE = " \t\r\n"


class MoveError(Exception):
    """The move cannot be made (bad or taken id, unparsable file, text that cannot be edited in place)."""


@dataclass(slots=True)
class MovePlan:
    old: str
    new: str
    old_path: str
    new_path: str
    kind: str | None
    """The moved record's kind (None when its file does not validate)."""
    texts: dict[str, str] = field(default_factory=dict)
    """New text of every changed file, by its root-relative path (the moved file under `new_path`)."""
    originals: dict[str, str] = field(default_factory=dict)
    """The text each new text was made from, under the same key."""
    edits: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    """The edits that make each new text from its original, under the same key: (start, end, replacement), offsets
    into the original, in order."""
    rewritten: dict[str, int] = field(default_factory=dict)
    """How many links were rewritten, by root-relative path of the file that holds them (the moved file as
    `new_path`)."""
    alias_added: bool = False

    def summary(self, dry_run: bool) -> Iterator[str]:
        """What the move does (or, `dry_run`, would do), a line each."""
        yield f"{'would move' if dry_run else 'moved'} {self.old_path} -> {self.new_path}"
        for path, count in sorted(self.rewritten.items()):
            yield f"  {path}: {count} link{'s' if count != 1 else ''} rewritten"
        if self.alias_added:
            yield f"  {self.new_path}: '{self.old}' added to aliases"


def plan_move(kb: KnowledgeBase, old: str, new: str) -> MovePlan:
    """Every edit of the move, computed from a knowledge base compiled with at least `check_links`."""
    resolver = Resolver.of(kb)
    if old not in kb.entries and resolver.aliases.get(old) == new:
        raise MoveError(f"'{old}' is moved already: it is an alias of {new}")
    if old not in kb.entries and (owner := resolver.aliases.get(old)) is not None:
        raise MoveError(f"'{old}' is an alias of {owner}; to rename that record: flopkb mv {owner} {new}")
    if old not in kb.entries:
        close = resolver.closest(old)
        raise MoveError(f"no record has the id '{old}'" + (f" (did you mean {' or '.join(close)}?)" if close else ""))
    problem = id_problem(new)
    if problem:
        like = id_like(new)
        raise MoveError(f"'{new}' is not a valid id: {problem}" + (f" (did you mean {like}?)" if like else ""))
    if new == old:
        raise MoveError(f"'{old}' already has that id")
    if new in kb.entries:
        taken = kb.entries[new].source
        if taken is not None and old in (taken.data.get("aliases") or ()):
            raise MoveError(
                f"'{new}' is already the id of {kb.entries[new].path}, which lists '{old}' as an alias: "
                f"a move made by hand or by an older flopkb stopped half way; if {kb.entries[old].path} is the "
                "stale copy, remove it"
            )
        raise MoveError(f"'{new}' is already the id of {kb.entries[new].path}")
    owner = resolver.aliases.get(new)
    if owner is not None and owner != old:
        raise MoveError(f"'{new}' is an alias of {owner}")
    entry = kb.entries[old]
    if entry.source is None:
        raise MoveError(f"{entry.path} does not parse; fix it before moving it")
    suffix = Path(entry.path).suffix
    new_path = f"{kb.config.records.rstrip('/')}/{new}{suffix}"
    if (kb.config.root / new_path).exists():
        raise MoveError(f"{new_path} exists already")
    linked = linked_out(kb.config, kb.config.root / new_path)
    if linked is not None:
        raise MoveError(linked)

    after = _resolver_after(resolver, old, new)
    plan = MovePlan(old, new, entry.path, new_path, entry.summary.kind)
    edits: dict[str, list[tuple[int, int, str]]] = {}
    sources: dict[str, Source] = {}
    for group in kb.links.values():
        for link in group:
            replacement = _new_target(link, old, new, after)
            if replacement is None:
                continue
            path = link.source.path
            sources[path] = link.source
            edits.setdefault(path, []).append(_target_edit(link, replacement))
            plan.rewritten[new_path if path == entry.path else path] = (
                plan.rewritten.get(new_path if path == entry.path else path, 0) + 1
            )

    moved = entry.source
    sources[entry.path] = moved
    own = edits.setdefault(entry.path, [])
    own.append(_id_edit(moved, new))
    aliases = moved.data.get("aliases")
    if isinstance(aliases, list) and new in aliases:
        # Moving back to a former id: that alias becomes the id, and the id we leave becomes the alias.
        span = moved.span(("aliases", aliases.index(new)))
        if span is None or span.style in ("|", ">"):
            raise MoveError(f"{entry.path}: cannot edit the alias '{new}' in place; remove it by hand first")
        quoted = span.style in ("'", '"')
        own.append(
            (span.start + quoted, span.end - quoted, old)
            if quoted or _plain_safe(old)
            else (span.start, span.end, _double_quoted(old))
        )
        plan.alias_added = True
    elif not (isinstance(aliases, list) and old in aliases):
        own.append(_alias_edit(moved, old))
        plan.alias_added = True
    for path, changes in edits.items():
        key = new_path if path == entry.path else path
        plan.edits[key] = ordered(changes, path)
        plan.texts[key] = _apply(sources[path].text, plan.edits[key])
        plan.originals[key] = sources[path].text
    return plan


def target_span(link: Link) -> tuple[int, int]:
    """Where `link`'s target is written in its file's text, as a move rewrites it; `MoveError` where it cannot be."""
    start, end, _ = _target_edit(link, link.target)
    return start, end


def id_span(source: Source, record_id: str) -> tuple[int, int]:
    """Where the record's id `record_id` is written in its file's text, as a move rewrites it; `MoveError` where it
    cannot be."""
    start, end, _ = _id_edit(source, record_id)
    return start, end


def write_move(config: Config, plan: MovePlan) -> None:
    """Make the move as a transaction: journal first, then every file (BOM kept), the old file removed last.

    A file changed since it was read, or a write that fails, undoes what was written; `MoveError` says so.
    """
    journal = _journal(config, plan)
    begin(config, journal)
    try:
        finish(config, journal)
    except (JournalError, WriteError) as problem:
        try:
            undo(config, journal)  # the file edited meanwhile keeps its save
        except (JournalError, WriteError) as second:
            raise MoveError(
                f"{problem}; undoing it failed too ({second}): `flopkb mv --finish` finishes the move, "
                "`flopkb mv --undo` undoes it"
            ) from problem
        raise MoveError(f"{problem}; the move was undone, every file is as it was") from problem


def read_as_planned(config: Config, path: str, planned: str, again: str = "run flopkb mv again") -> bytes:
    """The bytes of the file at `path` (root-relative) now; `MoveError` when their text is not `planned`, the text a
    move was planned on (the file changed since: a save, a `git pull`)."""
    try:
        now = read_bytes(str(config.root / path))
    except Unreadable as error:
        raise MoveError(f"{path} changed while the move was planned ({error}); {again}") from error
    if now.decode("utf-8", errors="replace").removeprefix("\ufeff") != planned:
        raise MoveError(f"{path} changed while the move was planned; {again}")
    return now


def _journal(config: Config, plan: MovePlan) -> Journal:
    """The journal of `plan`, with each file's bytes as they are now, which must be what the plan was made from."""
    writes = []
    removed = None
    for path, text in sorted(plan.texts.items()):
        original = plan.old_path if path == plan.new_path else path
        before = read_as_planned(config, original, plan.originals[path])
        after = (("\ufeff" if before.startswith(b"\xef\xbb\xbf") else "") + text).encode("utf-8")
        if path == plan.new_path:
            writes.append(FileChange(path, None, after))
            removed = FileChange(original, before, None)
        else:
            writes.append(FileChange(path, before, after))
    return Journal(plan.old, plan.new, (*writes, *([removed] if removed else [])))


def move(config: Config, old: str, new: str, *, dry_run: bool = False) -> MovePlan:
    """Plan and (unless `dry_run`) make the move of record `old` to id `new`."""
    try:
        old, new = config.record_id(old), config.record_id(new)
    except OutsideRecords as error:
        raise MoveError(str(error)) from None
    plan = plan_move(compile_knowledge_base(config, (check_links,)), old, new)
    if not dry_run:
        write_move(config, plan)
    return plan


# ---------------------------------------------------------------------------
# Where links land after the move


def _resolver_after(resolver: Resolver, old: str, new: str) -> Resolver:
    ids = (resolver.ids - {old}) | {new}
    aliases = {alias: (new if owner == old else owner) for alias, owner in resolver.aliases.items()}
    aliases.setdefault(old, new)
    kinds = dict(resolver.kinds)
    if old in kinds:
        kinds[new] = kinds.pop(old)
    return Resolver(ids, aliases, kinds)


def _new_target(link: Link, old: str, new: str, after: Resolver) -> str | None:
    """The target `link` must be rewritten to, or None when it lands right as it is."""
    before = link.resolved
    if before is None:
        return None
    landing = after.resolve(link.target)
    if before == old:
        if landing.id == new and landing.step in (ID, SUFFIX):
            return None
        depth = link.target.count("/") + 1
        if link.target != old and old.endswith("/" + link.target):
            parts = new.split("/")
            if len(parts) > depth:
                short = "/".join(parts[-depth:])
                found = after.resolve(short)
                if found.id == new and found.step == SUFFIX:
                    return short
        return new
    if landing.id == before:
        return None
    return before


# ---------------------------------------------------------------------------
# Text edits at exact positions


def _where(link: Link) -> str:
    line, column = link.position
    return f"{link.source.path}:{line}:{column}"


def _target_edit(link: Link, replacement: str) -> tuple[int, int, str]:
    """Replace the characters of `link.target` in the file text, and nothing else."""
    source = link.source
    text = source.text
    span = source.span(link.field)
    if span is None:
        raise MoveError(f"{_where(link)}: cannot find the text of {link.text} in the file")
    if link.is_prose:
        line, column = link.position
        start = source.lines.offset(line, column)
        if text[start : start + 2] != "[[":
            raise MoveError(f"{_where(link)}: cannot find the text of {link.text} in the file")
        start += 2
        while start < span.end and text[start] in _SPACE:
            start += 1
        if not text.startswith(link.target, start):
            raise MoveError(f"{_where(link)}: {link.text} is written with escapes; rewrite it by hand")
        return start, start + len(link.target), replacement
    if span.style in ("|", ">"):
        raise MoveError(f"{_where(link)}: a reference in a block scalar; rewrite it by hand")
    start = span.start + (1 if span.style in ("'", '"') else 0)
    if not text.startswith(link.value, start):
        raise MoveError(f"{_where(link)}: '{link.value}' is written with escapes; rewrite it by hand")
    if not span.style and not _plain_safe(replacement + link.value[len(link.target) :]):
        return span.start, span.end, _double_quoted(replacement + link.value[len(link.target) :])
    return start, start + len(link.target), replacement


def _id_edit(source: Source, new: str) -> tuple[int, int, str]:
    span = source.span(("id",))
    if span is None or span.style in ("|", ">"):
        raise MoveError(f"{source.path}: the record's id is not a one-line text value; fix it before moving")
    if not span.style:  # plain
        return span.start, span.end, new if _plain_safe(new) else _double_quoted(new)
    return span.start + 1, span.end - 1, new


def _alias_edit(source: Source, old: str) -> tuple[int, int, str]:
    """Add `old` to the record's aliases: into the existing list in its own style, or as a new `aliases: [old]` line."""
    text = source.text
    newline = "\r\n" if "\r\n" in text else "\n"
    item = old if _plain_safe(old) else _double_quoted(old)
    aliases = source.data.get("aliases")
    if isinstance(aliases, list):
        where = source.lines.offset(*source.position(("aliases",)))
        if text[where : where + 1] == "[":
            if not aliases:
                return where + 1, where + 1, item
            last = source.span(("aliases", len(aliases) - 1))
            if last is None:
                raise MoveError(f"{source.path}: cannot add an alias to this aliases list; add '{old}' by hand")
            return last.end, last.end, f", {item}"
        if not aliases:
            raise MoveError(f"{source.path}: cannot add an alias to this aliases value; add '{old}' by hand")
        last = source.span(("aliases", len(aliases) - 1))
        if last is None:
            raise MoveError(f"{source.path}: cannot add an alias to this aliases list; add '{old}' by hand")
        line_start = text.rfind("\n", 0, last.start) + 1
        prefix = text[line_start : last.start]  # its indentation kept, tabs that start it too (`flopkb.load.tabs`)
        if prefix.strip(" \t-") or "-" not in prefix:
            raise MoveError(f"{source.path}: cannot add an alias to this aliases list; add '{old}' by hand")
        end = _line_end(text, last.end)
        return end, end, f"{newline}{prefix}{item}"
    if aliases is not None:
        raise MoveError(f"{source.path}: aliases is not a list; fix it before moving")
    for key in ("title", "kind", "id"):
        span = source.span((key,))
        if span is not None and key in source.data:
            end = span.end
            if end > 0 and text[end - 1] in "\r\n":  # a block scalar ends at the start of the next line
                return end, end, f"aliases: [{item}]{newline}"
            line_break = _BREAK.search(text, end)
            if line_break is None:
                return len(text), len(text), f"{newline}aliases: [{item}]{newline}"
            return line_break.end(), line_break.end(), f"aliases: [{item}]{newline}"
    raise MoveError(f"{source.path}: cannot find where to add aliases; add 'aliases: [{old}]' by hand")


def _line_end(text: str, index: int) -> int:
    """The index of the line break ending the line that holds `index` (or the end of the text)."""
    match = _BREAK.search(text, index)
    return match.start() if match else len(text)


def _plain_safe(value: str) -> bool:
    """Whether `value` reads back as the same string when written as a plain YAML scalar (in a flow list too)."""
    if not value or value != value.strip() or "\n" in value:
        return False
    try:
        return yaml.safe_load(value) == value and yaml.safe_load(f"[{value}]") == [value]
    except yaml.YAMLError:
        return False


def _double_quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ordered(edits: list[tuple[int, int, str]], path: str) -> list[tuple[int, int, str]]:
    """The edits of the file at `path` in order (insertions at one place in the order given); `MoveError` when two
    overlap."""
    in_order = sorted(edits, key=lambda edit: (edit[0], edit[1]))
    for before, after in itertools.pairwise(in_order):
        if after[0] < before[1]:
            raise MoveError(f"{path}: two edits overlap; move the record by hand")
    return in_order


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with `edits` made (in order, not overlapping: `ordered`)."""
    parts = []
    position = 0
    for start, end, replacement in edits:
        parts.append(text[position:start])
        parts.append(replacement)
        position = end
    parts.append(text[position:])
    return "".join(parts)

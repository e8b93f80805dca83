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
    """The record's id before and after the move; of a folder's move, the folder's (below the records folder)."""
    old_path: str
    new_path: str
    """The record's file, or the folder, before and after the move (root-relative)."""
    kind: str | None
    """The moved record's kind (None when its file does not validate, and for a folder)."""
    moved: dict[str, str] = field(default_factory=dict)
    """The old path of every moved file, by its new path."""
    texts: dict[str, str] = field(default_factory=dict)
    """New text of every changed file, by its root-relative path (a moved file under its new path)."""
    originals: dict[str, str] = field(default_factory=dict)
    """The text each new text was made from, under the same key."""
    edits: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    """The edits that make each new text from its original, under the same key: (start, end, replacement), offsets
    into the original, in order."""
    rewritten: dict[str, int] = field(default_factory=dict)
    """How many links were rewritten, by root-relative path of the file that holds them (a moved file under its new
    path)."""
    aliased: dict[str, str] = field(default_factory=dict)
    """The old id added to the aliases of a moved record, by the new path of its file."""

    def summary(self, dry_run: bool) -> Iterator[str]:
        """What the move does (or, `dry_run`, would do), a line each."""
        for new_path, old_path in sorted(self.moved.items(), key=lambda item: item[1]):
            yield f"{'would move' if dry_run else 'moved'} {old_path} -> {new_path}"
        for path, count in sorted(self.rewritten.items()):
            yield f"  {path}: {count} link{'s' if count != 1 else ''} rewritten"
        for path, old in sorted(self.aliased.items()):
            yield f"  {path}: '{old}' added to aliases"


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
    _refuse_new_id(new)
    if new == old:
        raise MoveError(f"'{old}' already has that id")
    entry = kb.entries[old]
    plan = MovePlan(old, new, entry.path, _new_path(kb, old, new), entry.summary.kind)
    _refuse_move(kb, resolver, old, new)
    return _planned(kb, resolver, plan, {old: new})


def plan_folder_move(kb: KnowledgeBase, old: str, new: str) -> MovePlan:
    """Every edit of the move of every record whose file is in the folder `old` (below the records folder) to the
    folder `new`, its id's beginning `old/` become `new/`; `MoveError` where `flopkb mv` would refuse one of them."""
    old, new = old.strip("/"), new.strip("/")
    records = kb.config.records.rstrip("/")
    inside = [entry for entry in kb.entries.values() if entry.path.startswith(f"{records}/{old}/")]
    if not inside:
        raise MoveError(f"{records}/{old}/ holds no record")
    _refuse_new_id(new)
    if new == old or new.startswith(f"{old}/"):
        raise MoveError(f"cannot move the folder {old}/ into itself")
    resolver = Resolver.of(kb)
    moves = {}
    for entry in inside:
        if not entry.id.startswith(f"{old}/") or not entry.path.startswith(f"{records}/{entry.id}."):
            raise MoveError(f"{entry.path} holds the id '{entry.id}', not its path's: fix its id, then move the folder")
        moves[entry.id] = f"{new}{entry.id[len(old) :]}"
        try:
            _refuse_move(kb, resolver, entry.id, moves[entry.id])
        except MoveError as error:
            raise MoveError(f"{entry.id} cannot move to {moves[entry.id]}: {error}") from None
    plan = MovePlan(old, new, f"{records}/{old}", f"{records}/{new}", None)
    return _planned(kb, resolver, plan, moves)


def _refuse_new_id(new: str) -> None:
    problem = id_problem(new)
    if problem:
        like = id_like(new)
        raise MoveError(f"'{new}' is not a valid id: {problem}" + (f" (did you mean {like}?)" if like else ""))


def _new_path(kb: KnowledgeBase, old: str, new: str) -> str:
    """The file of the record `old` once its id is `new` (its extension kept)."""
    return f"{kb.config.records.rstrip('/')}/{new}{Path(kb.entries[old].path).suffix}"


def _refuse_move(kb: KnowledgeBase, resolver: Resolver, old: str, new: str) -> None:
    """`MoveError` when the record `old` cannot take the id `new` (a valid id, not its own)."""
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
    new_path = _new_path(kb, old, new)
    if (kb.config.root / new_path).exists():
        raise MoveError(f"{new_path} exists already")
    linked = linked_out(kb.config, kb.config.root / new_path)
    if linked is not None:
        raise MoveError(linked)


def _planned(kb: KnowledgeBase, resolver: Resolver, plan: MovePlan, moves: dict[str, str]) -> MovePlan:
    """`plan` with the edits of `moves` (old id: new id, each allowed by `_refuse_move`) made all at once."""
    after = _resolver_after(resolver, moves)
    renamed = {kb.entries[old].path: _new_path(kb, old, new) for old, new in moves.items()}
    plan.moved = {new_path: old_path for old_path, new_path in renamed.items()}
    edits: dict[str, list[tuple[int, int, str]]] = {}
    sources: dict[str, Source] = {}
    for group in kb.links.values():
        for link in group:
            replacement = _new_target(link, moves, after)
            if replacement is None:
                continue
            path = link.source.path
            sources[path] = link.source
            edits.setdefault(path, []).append(_target_edit(link, replacement))
            key = renamed.get(path, path)
            plan.rewritten[key] = plan.rewritten.get(key, 0) + 1
    for old, new in moves.items():
        moved = kb.entries[old].source
        assert moved is not None  # `_refuse_move`
        sources[moved.path] = moved
        own = edits.setdefault(moved.path, [])
        own.append(_id_edit(moved, new))
        if _alias_edits(moved, old, new, own):
            plan.aliased[renamed[moved.path]] = old
    for path, changes in edits.items():
        key = renamed.get(path, path)
        plan.edits[key] = ordered(changes, path)
        plan.texts[key] = _apply(sources[path].text, plan.edits[key])
        plan.originals[key] = sources[path].text
    return plan


def _alias_edits(moved: Source, old: str, new: str, own: list[tuple[int, int, str]]) -> bool:
    """Add to `own` the edit that keeps `old` as an alias of the record moved to `new`; whether one is made."""
    aliases = moved.data.get("aliases")
    if isinstance(aliases, list) and new in aliases:
        # Moving back to a former id: that alias becomes the id, and the id we leave becomes the alias.
        span = moved.span(("aliases", aliases.index(new)))
        if span is None or span.style in ("|", ">"):
            raise MoveError(f"{moved.path}: cannot edit the alias '{new}' in place; remove it by hand first")
        quoted = span.style in ("'", '"')
        own.append(
            (span.start + quoted, span.end - quoted, old)
            if quoted or _plain_safe(old)
            else (span.start, span.end, _double_quoted(old))
        )
        return True
    if isinstance(aliases, list) and old in aliases:
        return False
    own.append(_alias_edit(moved, old))
    return True


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
    removed = []
    for path, text in sorted(plan.texts.items()):
        original = plan.moved.get(path, path)
        before = read_as_planned(config, original, plan.originals[path])
        after = (("\ufeff" if before.startswith(b"\xef\xbb\xbf") else "") + text).encode("utf-8")
        if path in plan.moved:
            writes.append(FileChange(path, None, after))
            removed.append(FileChange(original, before, None))
        else:
            writes.append(FileChange(path, before, after))
    return Journal(plan.old, plan.new, (*writes, *removed))


def move(config: Config, old: str, new: str, *, dry_run: bool = False) -> MovePlan:
    """Plan and (unless `dry_run`) make the move of record `old` to id `new`, or, where `old` is no record's id (or
    ends with `/`) and a folder of records, of every record in it to the folder `new`."""
    try:
        old_id, new_id = config.record_id(old), config.record_id(new)
    except OutsideRecords as error:
        raise MoveError(str(error)) from None
    kb = compile_knowledge_base(config, (check_links,))
    folder = (old.endswith("/") or old_id not in kb.entries) and (config.records_path / old_id).is_dir()
    plan = plan_folder_move(kb, old_id, new_id) if folder else plan_move(kb, old_id, new_id)
    if not dry_run:
        write_move(config, plan)
    return plan


# ---------------------------------------------------------------------------
# Where links land after the move


def _resolver_after(resolver: Resolver, moves: dict[str, str]) -> Resolver:
    ids = (resolver.ids - moves.keys()) | set(moves.values())
    aliases = {alias: moves.get(owner, owner) for alias, owner in resolver.aliases.items()}
    for old, new in moves.items():
        aliases.setdefault(old, new)
    kinds = {moves.get(record_id, record_id): kind for record_id, kind in resolver.kinds.items()}
    return Resolver(ids, aliases, kinds)


def _new_target(link: Link, moves: dict[str, str], after: Resolver) -> str | None:
    """The target `link` must be rewritten to, or None when it lands right as it is."""
    before = link.resolved
    if before is None:
        return None
    landing = after.resolve(link.target)
    if before in moves:
        old, new = before, moves[before]
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

"""A field of the record indented into the block of text above it (`indented-field`).

YAML reads every line indented as deep as a `description: |` block's text as
that text: `  formulas:` and the items under it, indented by a slip, become
prose, and the record simply lacks the field. The text of a record's
top-level markdown field is read line by line for a line that is one of the
record kind's own field names, at the block's indentation, followed by YAML
structure (a list item or a `key:` line): prose does not read so.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from flopkb.load.models import MODELS
from flopkb.load.placeholders import markdown_fields
from flopkb.report.diagnostics import Diagnostic, make

_BLOCK = re.compile(r"^(?P<field>[a-z_]+):[ \t]*[|>][-+0-9]*[ \t]*(?:#.*)?$", re.MULTILINE)
"""A top-level field whose value is a block of text (`description: |`)."""
_KEY = re.compile(r"(?P<key>[a-z_]+):[ \t]*(?:#.*)?$")
"""A line that is a key with nothing after it (a comment aside): what starts a list or a mapping."""
_ITEM = re.compile(r"-(?: |$)")
_ENTRY = re.compile(r"(?P<key>[A-Za-z_][\w-]*):(?:[ \t]|$)")


def indented_fields(path: str, text: str, kind: str) -> list[Diagnostic]:
    """An `indented-field` warning for each field of `kind` indented into a block of text of the record."""
    model = MODELS.get(kind)
    if model is None or ("|" not in text and ">" not in text):
        return []
    fields = model.model_fields
    prose = markdown_fields(model) & fields.keys()
    lines = text.split("\n")
    found = []
    for block in _BLOCK.finditer(text):
        if block["field"] in prose:
            first = text.count("\n", 0, block.start()) + 1  # the 0-based index of the block's first line
            for line, indent, key in _keys_in_block(lines, first, fields.keys()):
                message = (
                    f"`{key}:` is indented into the text of {block['field']}, so it and what it holds are read as "
                    f"that text: the record has no `{key}`"
                )
                hint = (
                    f"unindent `{key}:` to the start of its line (line {line + 1}), so that it is a field of the record"
                )
                found.append(make("indented-field", path, line + 1, indent + 1, message, hint))
    return found


def _keys_in_block(lines: list[str], first: int, fields: Collection[str]) -> list[tuple[int, int, str]]:
    """(line index, indentation, key) of each line of the block starting at `first` that is a field of `fields` at
    the block's indentation, followed by YAML structure."""
    indent: int | None = None
    found = []
    for index in range(first, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        width = len(line) - len(line.lstrip(" "))
        indent = width if indent is None else indent
        if width < indent or width == 0:
            break
        key = _KEY.match(line, width) if width == indent else None
        if key is not None and key["key"] in fields and _structure_follows(lines, index + 1, indent, fields):
            found.append((index, indent, key["key"]))
    return found


def _structure_follows(lines: list[str], start: int, indent: int, fields: Collection[str]) -> bool:
    """Whether the first line from `start` on that is not blank continues a field at `indent`: a list item, a
    mapping's entry indented below it, or another field of the record."""
    following = next((line for line in lines[start:] if line.strip()), "")
    width = len(following) - len(following.lstrip(" "))
    entry = _ENTRY.match(following, width)
    if width < indent or (entry is None and _ITEM.match(following, width) is None):
        return False
    return width > indent or entry is None or entry["key"] in fields

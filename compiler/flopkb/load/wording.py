"""What a schema problem's message says of the value found, and the hint that a value's shape alone gives."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from flopkb.load.builder import Path
from flopkb.load.source import LINK_AS_LIST_HINT
from flopkb.report.cut import cut


def value_hint(item: dict[str, Any], path: Path, owner: type[BaseModel] | None, free_text: bool) -> str | None:
    """The hint for pydantic's error `item` about the value at `path` (of the model `owner`, if any; an item of a list
    of `free_text`), from its shape: its own, a list for text, a fraction for a percentage, a list item's shape."""
    own = (item.get("ctx") or {}).get("hint")
    return (
        own
        or _flow_list_hint(item)
        or _list_hint(item)
        or _percent_hint(item)
        or _item_hint(item, path, owner, free_text)
    )


def _list_hint(item: dict[str, Any]) -> str | None:
    """A text where a list goes (`features: "Separate draft"`): write it as a list of one."""
    value = item.get("input")
    if item["type"] != "list_type" or not isinstance(value, str):
        return None
    return f"make it a list: [{cut(json.dumps(value, ensure_ascii=False))}], or one `- item` a line below the field"


def _item_hint(item: dict[str, Any], path: Path, owner: type[BaseModel] | None, free_text: bool) -> str | None:
    """For a list item of the wrong shape: a mapping's fields where a mapping goes; where free text goes (`free_text`:
    no ref, id or quantity), the text that `: ` made a mapping of."""
    value = item.get("input")
    if not path or not isinstance(path[-1], int):
        return None
    if item["type"] == "model_type" and owner is not None:
        fields = list(owner.model_fields)
        shown = ", ".join(f"`{name}:`" for name in fields[:_SHOWN_FIELDS]) + (
            ", ..." if len(fields) > _SHOWN_FIELDS else ""
        )
        return f"write the item as a mapping of its fields, one a line ({shown}), or remove it"
    if item["type"] == "string_type" and free_text and isinstance(value, dict) and len(value) == 1:
        (key, inner), *_ = value.items()
        if isinstance(inner, (str, int, float)) and not isinstance(inner, bool):
            quoted = json.dumps(f"{key}: {inner}", ensure_ascii=False)
            return f"quote the item, which `: ` makes a mapping: - {cut(quoted)}"
    return None


_SHOWN_FIELDS = 4
_PERCENT = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*%\s*")


def _percent_hint(item: dict[str, Any]) -> str | None:
    """A percentage where a number goes (`rel_tol: 5%`): the fraction it stands for."""
    value = item.get("input")
    match = _PERCENT.fullmatch(value) if item["type"] == "float_parsing" and isinstance(value, str) else None
    if match is None:
        return None
    return f"write it as a fraction: {format(Decimal(match.group(1)).scaleb(-2).normalize(), 'f')}"


def _flow_list_hint(item: dict[str, Any]) -> str | None:
    """`notes: [[x]] ...` is a YAML list of lists, not text with a wikilink: say so."""
    value = item.get("input")
    if (
        item["type"] == "string_type"
        and isinstance(value, list)
        and value
        and all(isinstance(part, list) for part in value)
    ):
        return LINK_AS_LIST_HINT
    return None


def what_is_wrong(item: dict[str, Any]) -> str:
    if item["type"] in (
        "string_type",
        "int_type",
        "float_type",
        "list_type",
        "dict_type",
        "model_type",
        "bool_type",
        "int_parsing",
        "float_parsing",
    ):
        return f"expected {_EXPECTED.get(item['type'], 'another type')}, got {describe(item['input'])}"
    return str(item["msg"])


_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
}


def describe(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the text '{cut(value)}'"
    return "a list" if isinstance(value, list) else "a mapping"

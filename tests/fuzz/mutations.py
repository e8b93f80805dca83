"""Hypothesis strategies of mutations of a record file, and generators of hostile whole files.

A `Mutation` is data (its family, a position and an argument), so a failing input is printed, shrunk and
replayed as it is; `apply` maps it onto any file: positions are taken modulo the file's length, lines
modulo its line count. Families:

- line edits: delete, duplicate, swap, insert a YAML snippet, truncate at a line;
- bytes: flip a bit, set a byte, truncate at a byte (which may cut a UTF-8 sequence);
- indentation: add or remove spaces in front of a line, or turn them into a tab;
- characters: insert a hostile character (NUL, U+0080, U+FFFE, U+2028, U+2029, U+0085, a lone CR, a BOM, ...);
- tags: an explicit tag in front of a value or a key (`!!int a`, `!!float abc`, `!!bool 2024`, `!!str` on a
  collection, ...);
- anchors: an anchor on one value, an alias or a merge key (`<<: *a`) in place of another;
- values: a value replaced by one of another type (a mapping, a list, a huge integer, a date, null, ...),
  at the top level or nested, keys included.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

POSITION = st.integers(0, 1 << 20)
HOSTILE_CHARACTERS = (
    "\x00",
    "\x01",
    "\x7f",
    "\x80",
    "\x85",
    "\u00a0",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "\r",
    "\r\n",
    "\t",
    "\u202e",
    "\u0301",
    "\U0001f600",
    "\U0010ffff",
    "\x1b[31m",
    "\\",
    '"',
    "'",
)
HUGE_INTEGER = "9" * 4301
VALUES = (
    "{}",
    "[]",
    "{a: 1}",
    "[1, 2]",
    "{kind: flop}",
    "[flop]",
    "~",
    "null",
    "''",
    "true",
    "yes",
    "2024",
    "2024-01-01",
    "2024-01-01T00:00:00Z",
    "1.5",
    "-.inf",
    ".nan",
    "0x1F",
    "0o17",
    "1e400",
    "1_000",
    HUGE_INTEGER,
    "-" + HUGE_INTEGER,
    HUGE_INTEGER + ".5",
    "0." + HUGE_INTEGER,
    "1e" + HUGE_INTEGER,
    "|\n  block",
    ">-\n  folded",
    "\n  - a\n  - b",
    "\n  a: 1\n  b: [2]",
    "[[x]]",
    "'[[x]]'",
    '"\\x00"',
    '"\\u2028"',
    '"\\ud800"',
    "x" * 300,
    "&a x",
    "*a",
    "!!binary aGk=",
    "? complex",
)
TAGS = (
    "!!int",
    "!!float",
    "!!bool",
    "!!str",
    "!!null",
    "!!map",
    "!!seq",
    "!!set",
    "!!omap",
    "!!pairs",
    "!!binary",
    "!!timestamp",
    "!!merge",
    "!!value",
    "!custom",
    "!",
    "!<tag:yaml.org,2002:int>",
    "!!python/name:os.system",
    "!!python/object/apply:os.getcwd []",
)
TAGGED_VALUES = ("a", "abc", "2024", "[1, 2]", "{a: 1}", "", "1.5", "yes", HUGE_INTEGER, "2024-13-45")
SNIPPETS = (
    "zz_unknown: 1",
    "kind: flop",
    "id: flops/x",
    "kind:",
    "- item",
    "? key",
    ": value",
    "a: &a [1]",
    "b: *a",
    "<<: *a",
    "<<: [*a, *a]",
    "formulas:",
    "  - id: f\n    expr: 1/0\n    unit: '1'",
    "---",
    "...",
    "%YAML 1.1",
    "%TAG ! tag:x,2000:",
    "# " + "[" * 65,
    "notes: " + "[" * 65,
    "notes: " + "{" * 65,
    "'unterminated",
    '"unterminated',
    "key: value # [[link]]",
    "\t",
    "",
    "notes: |\n\ta tab in a block",
)


@dataclass(frozen=True)
class Mutation:
    """One edit of a file: `family` and `action` choose it, `position` and `argument` place and shape it."""

    family: str
    action: str
    position: int
    argument: str = ""

    def apply(self, data: bytes) -> bytes:
        return EDITS[self.action](self, data)


def _at(data: bytes, position: int) -> int:
    return position % (len(data) + 1)


def _line(lines: list[bytes], position: int) -> int:
    return position % len(lines)


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _delete_line(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[_line(lines, mutation.position)]
    return b"\n".join(lines)


def _duplicate_line(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    index = _line(lines, mutation.position)
    return b"\n".join([*lines[: index + 1], *lines[index:]])


def _swap_lines(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    first, second = _line(lines, mutation.position), _line(lines, int(mutation.argument))
    lines[first], lines[second] = lines[second], lines[first]
    return b"\n".join(lines)


def _insert_line(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    lines.insert(_line(lines, mutation.position), mutation.argument.encode("utf-8"))
    return b"\n".join(lines)


def _truncate_line(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    return b"\n".join(lines[: _line(lines, mutation.position)])


def _flip_bit(mutation: Mutation, data: bytes) -> bytes:
    if not data:
        return data
    index = mutation.position % len(data)
    return data[:index] + bytes([data[index] ^ (1 << int(mutation.argument))]) + data[index + 1 :]


def _set_byte(mutation: Mutation, data: bytes) -> bytes:
    index = _at(data, mutation.position)
    return data[:index] + bytes([int(mutation.argument)]) + data[index + 1 :]


def _truncate(mutation: Mutation, data: bytes) -> bytes:
    return data[: _at(data, mutation.position)]


def _insert_text(mutation: Mutation, data: bytes) -> bytes:
    index = _at(data, mutation.position)
    return data[:index] + mutation.argument.encode("utf-8", "surrogatepass") + data[index:]


def _indent(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    index = _line(lines, mutation.position)
    lines[index] = mutation.argument.encode("utf-8") + lines[index]
    return b"\n".join(lines)


def _dedent(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    index = _line(lines, mutation.position)
    lines[index] = (
        lines[index][int(mutation.argument) :] if lines[index][: int(mutation.argument)].isspace() else lines[index]
    )
    return b"\n".join(lines)


def _tabify(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    index = _line(lines, mutation.position)
    stripped = lines[index].lstrip(b" ")
    lines[index] = b"\t" * ((len(lines[index]) - len(stripped) + 1) // 2) + stripped
    return b"\n".join(lines)


def _value_lines(lines: list[bytes]) -> list[int]:
    """The lines holding `key: value` or `- value`, where a value can be replaced."""
    return [
        i for i, line in enumerate(lines) if b": " in line or line.lstrip().startswith(b"- ") or line.endswith(b":")
    ]


def _replace_value(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    candidates = _value_lines(lines) or [0]
    index = candidates[mutation.position % len(candidates)]
    lines[index] = _with_value(lines[index], mutation.argument.encode("utf-8"))
    return b"\n".join(lines)


def _with_value(line: bytes, value: bytes) -> bytes:
    if b": " in line:
        return line[: line.index(b": ") + 2] + value
    if line.endswith(b":"):
        return line + b" " + value
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)] + b"- " + value


def _tag_key(mutation: Mutation, data: bytes) -> bytes:
    lines = _lines(data)
    candidates = [i for i, line in enumerate(lines) if b":" in line and not line.lstrip().startswith(b"#")] or [0]
    index = candidates[mutation.position % len(candidates)]
    line = lines[index]
    stripped = line.lstrip(b" -")
    lines[index] = line[: len(line) - len(stripped)] + mutation.argument.encode("utf-8") + b" " + stripped
    return b"\n".join(lines)


def _anchor_and_alias(mutation: Mutation, data: bytes) -> bytes:
    """An anchor `&a` on one value, and `argument` (`*a`, `<<: *a`, ...) standing for another value."""
    lines = _lines(data)
    candidates = [i for i, line in enumerate(lines) if b": " in line] or [0]
    first = candidates[mutation.position % len(candidates)]
    second = candidates[(mutation.position // 7) % len(candidates)]
    lines[first] = _with_value(lines[first], b"&a " + lines[first].partition(b": ")[2])
    replacement = mutation.argument.encode("utf-8")
    if replacement.startswith(b"<<"):
        indent = lines[second][: len(lines[second]) - len(lines[second].lstrip(b" "))]
        lines.insert(second + 1, indent + replacement)
    else:
        lines[second] = _with_value(lines[second], replacement)
    return b"\n".join(lines)


EDITS = {
    "delete-line": _delete_line,
    "duplicate-line": _duplicate_line,
    "swap-lines": _swap_lines,
    "insert-line": _insert_line,
    "truncate-line": _truncate_line,
    "flip-bit": _flip_bit,
    "set-byte": _set_byte,
    "truncate": _truncate,
    "insert-text": _insert_text,
    "indent": _indent,
    "dedent": _dedent,
    "tabify": _tabify,
    "replace-value": _replace_value,
    "tag-key": _tag_key,
    "anchor": _anchor_and_alias,
}


NO_ARGUMENT = st.just("")


def _mutation(family: str, action: str, argument: st.SearchStrategy[str] = NO_ARGUMENT) -> st.SearchStrategy[Mutation]:
    return st.builds(Mutation, st.just(family), st.just(action), POSITION, argument)


LINE_EDITS = st.one_of(
    _mutation("line", "delete-line"),
    _mutation("line", "duplicate-line"),
    _mutation("line", "swap-lines", POSITION.map(str)),
    _mutation("line", "insert-line", st.sampled_from(SNIPPETS)),
    _mutation("line", "truncate-line"),
)
BYTE_EDITS = st.one_of(
    _mutation("bytes", "flip-bit", st.integers(0, 7).map(str)),
    _mutation("bytes", "set-byte", st.integers(0, 255).map(str)),
    _mutation("bytes", "truncate"),
)
INDENTATION = st.one_of(
    _mutation("indentation", "indent", st.sampled_from([" ", "  ", "   ", "    ", "\t", " \t", "\t "])),
    _mutation("indentation", "dedent", st.integers(1, 4).map(str)),
    _mutation("indentation", "tabify"),
)
CHARACTERS = _mutation("characters", "insert-text", st.sampled_from(HOSTILE_CHARACTERS))
TAGGED = st.one_of(
    _mutation(
        "tags",
        "replace-value",
        st.builds(lambda tag, value: f"{tag} {value}", st.sampled_from(TAGS), st.sampled_from(TAGGED_VALUES)),
    ),
    _mutation("tags", "tag-key", st.sampled_from(TAGS)),
)
ANCHORS = _mutation("anchors", "anchor", st.sampled_from(["*a", "<<: *a", "<<: [*a]", "[*a, *a]", "{<<: *a}", "*b"]))
VALUE_TYPES = _mutation("values", "replace-value", st.sampled_from(VALUES))
FAMILIES = {
    "line": LINE_EDITS,
    "bytes": BYTE_EDITS,
    "indentation": INDENTATION,
    "characters": CHARACTERS,
    "tags": TAGGED,
    "anchors": ANCHORS,
    "values": VALUE_TYPES,
}
ANY_MUTATION = st.one_of(*FAMILIES.values())


def mutated(data: bytes, mutations: list[Mutation]) -> bytes:
    for mutation in mutations:
        data = mutation.apply(data)
    return data


def top_level_type_change(field: str, value: str, text: str) -> str:
    """`text` (a record) with the top-level `field`'s value replaced by `value` (a flow collection or scalar)."""
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"{field}:"))
    end = next((j for j in range(index + 1, len(lines)) if lines[j][:1] not in (" ", "-", "")), len(lines))
    return "\n".join([*lines[:index], f"{field}: {value}", *lines[end:]])


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    lines = ["id: flops/x", "kind: flop", "a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nnotes: *a{levels - 1}\n"


def deep_flow(depth: int, opener: str = "[", closer: str = "]") -> str:
    return f"id: flops/x\nkind: flop\nnotes: {opener * depth}{closer * depth}\n"


def deep_block(depth: int, sequence: bool = False) -> str:
    if sequence:
        return (
            "id: flops/x\nkind: flop\nnotes:\n" + "".join(" " * i + "-\n" for i in range(depth)) + " " * depth + "- x\n"
        )
    return (
        "id: flops/x\nkind: flop\nnotes:\n"
        + "".join(" " * i + f"k{i}:\n" for i in range(1, depth))
        + " " * depth
        + "x\n"
    )


def huge_files() -> dict[str, bytes]:
    """Files over 1 MiB: one long line, many short lines, one big block scalar, many keys."""
    mib = 1 << 20
    return {
        "long-line": b"id: flops/x\nkind: flop\nnotes: " + b"x" * (mib + 10) + b"\n",
        "many-lines": b"id: flops/x\nkind: flop\nnotes: |\n" + b"  line\n" * (mib // 6),
        "many-keys": b"id: flops/x\nkind: flop\n" + b"".join(b"k%d: v\n" % i for i in range(mib // 8)),
        "many-items": b"id: flops/x\nkind: flop\ntags:\n" + b"- t\n" * (mib // 3),
    }

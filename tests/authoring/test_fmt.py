"""`flopkb fmt`: canonical, idempotent, and never changing what a record means or says."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from flopkb.authoring import fmt as fmt_module
from flopkb.authoring.comments import comment_texts
from flopkb.authoring.fmt import format_bytes, format_text
from flopkb.cli import main
from flopkb.config import load_config
from flopkb.load.models import KINDS
from flopkb.load.source import parse
from flopkb.load.validate import validate_record
from flopkb.load.vocabulary import vocabulary_from_data
from flopkb.pipeline.compile import record_files
from kbfixture import VOCABULARY, write_kb
from repo import REPO

FIXTURE_VOCABULARY = vocabulary_from_data(parse(VOCABULARY, "vocabulary.yaml")[0].data)  # type: ignore[union-attr]


def canonical(text: str) -> str:
    result = format_text(text, "records/flops/x.yaml")
    assert isinstance(result, str), result
    return result


def meaning(text: str) -> tuple[Any, Any, list[str]]:
    """What formatting must keep: the parsed data, the validated model, the comments."""
    source, problems = parse(text, "records/flops/x.yaml")
    assert source is not None and not problems, problems
    record, _, _ = validate_record(source, FIXTURE_VOCABULARY, "flops/x")
    import yaml

    return source.data, record, comment_texts(text, yaml.compose(text, Loader=yaml.CSafeLoader))


def fmt(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["fmt", "--root", str(root), *args])


# ---------------------------------------------------------------------------
# The project's own records


def project_records() -> list[str]:
    return record_files(load_config(REPO))[0]


def test_the_projects_records_are_already_canonical() -> None:
    assert project_records()
    for rel in project_records():
        text = (REPO / rel).read_text(encoding="utf-8")
        assert canonical(text) == text, f"flopkb fmt would change {rel}"


def test_fmt_on_the_project_leaves_git_diff_empty(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    result = fmt(clone)
    assert result.exit_code == 0, result.output
    assert (
        subprocess.run(
            ["git", "status", "--porcelain", "records"], cwd=clone, capture_output=True, text=True, check=True
        ).stdout
        == ""
    )


ID_LISTS = ("tags", "aliases", "values_for", "affected_by_hardware", "sources", "hardware")


def scrambled(text: str, seed: int) -> str:
    """The same record with keys reversed or rotated, four-space indentation and lists of ids in block style."""
    handler = YAML(typ="rt")
    handler.preserve_quotes = True
    handler.width = 1 << 16
    handler.indent(mapping=4, sequence=4, offset=0)
    data = handler.load(text)

    def shuffle(node: Any, named_by_author: bool = False) -> None:
        if isinstance(node, dict):
            keys = list(node)
            if not named_by_author:  # the keys of specs, inputs, where and conditions keep the author's order
                keys = keys[::-1] if seed % 2 else keys[seed % len(keys) :] + keys[: seed % len(keys)]
            for key in keys:
                node.move_to_end(key)
            for key, value in node.items():
                if key in ID_LISTS and isinstance(value, list):
                    value.fa.set_block_style()
                shuffle(value, key in ("specs", "inputs", "where", "conditions"))
        elif isinstance(node, list):
            for value in node:
                shuffle(value)

    shuffle(data)
    stream = io.StringIO()
    handler.dump(data, stream)
    return stream.getvalue()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scrambled_project_records_come_back_exactly(seed: int) -> None:
    for rel in project_records():
        text = (REPO / rel).read_text(encoding="utf-8")
        messy = scrambled(text, seed)
        assert messy != text
        assert canonical(messy) == text, rel


# ---------------------------------------------------------------------------
# Comments

COMMENTED = """\
# yaml-language-server: $schema=../../schema/flop.schema.json
# Header: about the whole file.

kind: flop   # the kind
id: flops/x
description: |    # on the block's header
  Line one.
  Line two.

# Above notes, after a blank line.
notes: Short.  # end of notes
# Above scales_with.
scales_with:
  - effect: Grows.   # end of effect
    # Above factor, inside the row.
    factor: batch_size
  # Above the second row.
  - factor: draft_k
    effect: Shrinks.
category: arithmetic-intensity
tags:
  - one  # why one
  - two
affected_by_hardware:
    - hw/a
    - hw/b
# Last words.
"""

COMMENTED_CANONICAL = """\
# yaml-language-server: $schema=../../schema/flop.schema.json
# Header: about the whole file.

id: flops/x
kind: flop   # the kind
tags:
  - one  # why one
  - two
category: arithmetic-intensity
description: |    # on the block's header
  Line one.
  Line two.
# Above scales_with.
scales_with:
    # Above factor, inside the row.
  - factor: batch_size
    effect: Grows.   # end of effect
  # Above the second row.
  - factor: draft_k
    effect: Shrinks.
affected_by_hardware: [hw/a, hw/b]

# Above notes, after a blank line.
notes: Short.  # end of notes
# Last words.
"""


def test_comments_move_with_their_keys() -> None:
    assert canonical(COMMENTED) == COMMENTED_CANONICAL
    assert meaning(COMMENTED_CANONICAL) == meaning(COMMENTED)
    assert canonical(COMMENTED_CANONICAL) == COMMENTED_CANONICAL


def test_a_list_with_comments_stays_in_block_style() -> None:
    text = (
        "id: flops/x\n"
        "kind: flop\n"
        "category: kv-cache\n"
        "description: D.\n"
        "affected_by_hardware:\n"
        "  # the first\n"
        "  - hw/a\n"
        "  - hw/b  # the second\n"
    )
    assert canonical(text) == text


# ---------------------------------------------------------------------------
# Styles


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("tags:\n  - a\n  - b\n", "tags: [a, b]\n"),
        ("tags: ['a', b]\n", "tags: ['a', b]\n"),
        ("sources:\n  - https://example.org/a\n", "sources:\n  - https://example.org/a\n"),
        ("sources: [https://example.org/a]\n", "sources:\n  - https://example.org/a\n"),
        (
            "affected_by_hardware: [" + ", ".join(f"hw/accelerator-{i:02d}" for i in range(6)) + "]\n",
            "affected_by_hardware:\n" + "".join(f"  - hw/accelerator-{i:02d}\n" for i in range(6)),
        ),
        ('notes: "two\\nlines"\n', "notes: |-\n  two\n  lines\n"),
        ("notes: 'wrapped\n  over lines'\n", "notes: >-\n  wrapped\n  over lines\n"),
        ("notes: plain text\n  over two lines\n", "notes: >-\n  plain text\n  over two lines\n"),
        ("notes: >\n  folded\n  kept\n", "notes: >\n  folded\n  kept\n"),
        ('notes: "quoted: kept"\n', 'notes: "quoted: kept"\n'),
        ("workarounds:\n- a\n- b\n", "workarounds:\n  - a\n  - b\n"),
    ],
)
def test_styles(given: str, expected: str) -> None:
    head = "id: flops/x\nkind: flop\ncategory: kv-cache\ndescription: D.\n"
    result = canonical(head + given)
    assert expected in result
    assert meaning(result)[:2] == meaning(head + given)[:2]


def test_a_record_written_as_a_flow_mapping_becomes_a_block() -> None:
    text = "{kind: flop, id: flops/x,  # one line\n category: kv-cache, description: D.}\n"
    assert canonical(text) == "# one line\nid: flops/x\nkind: flop\ncategory: kv-cache\ndescription: D.\n"


def test_comments_inside_a_flow_list_stay_near_it() -> None:
    text = "id: flops/x\nkind: flop\ncategory: kv-cache\ndescription: D.\ntags: [a,  # first\n  b]\n"
    assert canonical(text) == "id: flops/x\nkind: flop\ntags: [a, b]  # first\ncategory: kv-cache\ndescription: D.\n"


def test_unknown_keys_keep_their_place_after_known_ones() -> None:
    text = "zeta: 1\nkind: flop\nalpha: 2\nid: flops/x\ncategory: kv-cache\ndescription: D.\n"
    assert canonical(text) == "id: flops/x\nkind: flop\ncategory: kv-cache\ndescription: D.\nzeta: 1\nalpha: 2\n"


def test_a_record_of_unknown_kind_keeps_its_order() -> None:
    text = "kind: gadget\nid: flops/x\n"
    assert canonical(text) == text


def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {"records/flops/x.yaml": b"\xef\xbb\xbfkind: flop\r\nid: flops/x\r\ncategory: kv-cache\r\ndescription: D.\r\n"},
    )
    assert fmt(root).exit_code == 0
    assert (
        root / "records/flops/x.yaml"
    ).read_bytes() == b"\xef\xbb\xbfid: flops/x\r\nkind: flop\r\ncategory: kv-cache\r\ndescription: D.\r\n"


# ---------------------------------------------------------------------------
# Generated records: hypothesis

WORD = st.sampled_from(["decode", "batch", "draft", "verify", "cache", "weight", "token", "stream", "kernel", "tensor"])
ID = st.builds(lambda a, b: f"{a}/{b}", st.sampled_from(["hw", "flops", "src"]), WORD)


@st.composite
def prose(draw: st.DrawFn) -> str:
    """A string value as an author might write it: plain, quoted, a literal block, or plain wrapped over lines."""
    words = draw(st.lists(WORD, min_size=1, max_size=12))
    text = " ".join(words)
    style = draw(st.sampled_from(["plain", "single", "double", "literal", "wrapped"]))
    if style == "single":
        return f"'{text}'"
    if style == "double":
        return f'"{text}"'
    if style == "literal":
        lines = [" ".join(words[i : i + 4]) for i in range(0, len(words), 4)]
        return "|\n" + "".join(f"{{indent}}{line}\n" for line in lines).rstrip("\n")
    if style == "wrapped" and len(words) > 3:
        return " ".join(words[:3]) + "\n{indent}" + " ".join(words[3:])
    return text


@st.composite
def records(draw: st.DrawFn) -> str:
    """A flop record in any key order, indentation and list style, with comments here and there."""
    indent = " " * draw(st.sampled_from([2, 4]))
    flush = draw(st.booleans())  # sequences at their key's indentation, or indented under it

    def id_list(ids: list[str], level: int) -> str:
        if draw(st.booleans()):
            return "[" + ", ".join(ids) + "]"
        pad = indent * (level + (0 if flush else 1))
        return "".join(f"\n{pad}- {item}" for item in ids) if ids else "[]"

    def value(text: str, level: int) -> str:
        return text.replace("{indent}", indent * (level + 1))

    def row(fields: list[tuple[str, str]], level: int) -> str:
        order = draw(st.permutations(fields))
        pad = indent * (level + (0 if flush else 1))
        return f"\n{pad}- " + f"\n{pad}  ".join(f"{key}: {text}" for key, text in order)

    entries = [
        ("id", "flops/x"),
        ("kind", "flop"),
        ("category", draw(st.sampled_from(["arithmetic-intensity", "memory-bandwidth"]))),
        ("description", value(draw(prose()), 0)),
    ]
    if draw(st.booleans()):
        entries.append(("title", value(draw(prose().filter(lambda text: "\n" not in text)), 0)))
    if draw(st.booleans()):
        entries.append(("tags", id_list(draw(st.lists(WORD, max_size=4)), 0)))
    if draw(st.booleans()):
        entries.append(("affected_by_hardware", id_list(draw(st.lists(ID, max_size=7)), 0)))
    if draw(st.booleans()):
        entries.append(("notes", value(draw(prose()), 0)))
    if draw(st.booleans()):
        rows = draw(st.lists(st.tuples(WORD, prose().filter(lambda text: "\n" not in text)), min_size=1, max_size=3))
        entries.append(
            ("scales_with", "".join(row([("factor", factor), ("effect", effect)], 0) for factor, effect in rows))
        )
    lines = []
    for number, (key, text) in enumerate(draw(st.permutations(entries))):
        if draw(st.integers(0, 3)) == 0:
            lines.append(f"# note {number} above {key}")
        eol = f"  # note {number} on {key}" if "\n" not in text and draw(st.integers(0, 3)) == 0 else ""
        lines.append(f"{key}: {text}{eol}")
    if draw(st.booleans()):
        lines.append("# the end")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_generated_records_keep_their_meaning_and_format_idempotently(text: str) -> None:
    formatted = canonical(text)
    assert meaning(formatted) == meaning(text)
    assert canonical(formatted) == formatted


# ---------------------------------------------------------------------------
# The command


GOOD = "id: flops/a\nkind: flop\ncategory: kv-cache\ndescription: D.\n"
MESSY = "kind: flop\nid: flops/b\ncategory: kv-cache\ndescription: D.\n"


@pytest.fixture
def kb_root(tmp_path: Path) -> Path:
    return write_kb(tmp_path, {"records/flops/a.yaml": GOOD, "records/flops/b.yaml": MESSY})


def test_check_lists_what_would_change_and_writes_nothing(kb_root: Path) -> None:
    result = fmt(kb_root, "--check")
    assert result.exit_code == 1
    assert "would reformat: records/flops/b.yaml" in result.output and "flops/a.yaml" not in result.output
    assert (kb_root / "records/flops/b.yaml").read_text(encoding="utf-8") == MESSY


def test_fmt_rewrites_atomically_then_check_passes(kb_root: Path) -> None:
    path = kb_root / "records/flops/b.yaml"
    path.chmod(0o640)
    result = fmt(kb_root)
    assert result.exit_code == 0 and "reformatted: records/flops/b.yaml" in result.output
    assert path.read_text(encoding="utf-8") == GOOD.replace("flops/a", "flops/b")
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.yaml", "b.yaml"]
    assert fmt(kb_root, "--check").exit_code == 0


def test_paths_limit_what_is_formatted(kb_root: Path) -> None:
    result = fmt(kb_root, "--check", str(kb_root / "records/flops/a.yaml"))
    assert result.exit_code == 0 and "0 of 1 record files" in result.output


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("id: flops/c\ndescription: [unclosed\n", "yaml-syntax"),
        ("id: flops/c\nid: flops/d\n", "duplicate-key"),
        (b"id: caf\xe9\n", "encoding"),
        ("- a\n- list\n", "not-a-record"),
    ],
)
def test_files_that_do_not_parse_are_reported_and_left_alone(kb_root: Path, content: str | bytes, code: str) -> None:
    path = kb_root / "records/flops/c.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = path.read_bytes()
    result = fmt(kb_root)
    assert result.exit_code == 1
    assert "records/flops/c.yaml:" in result.output and code in result.output
    assert path.read_bytes() == before
    assert "reformatted: records/flops/b.yaml" in result.output


def test_a_file_whose_meaning_would_change_is_left_alone(kb_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unsafe(*args: object) -> None:
        raise fmt_module._Unsafe("the formatted data would differ from the original")

    monkeypatch.setattr(fmt_module, "_verify", unsafe)
    result = fmt(kb_root)
    assert result.exit_code == 1
    assert "left as it is: records/flops/b.yaml: the formatted data would differ" in result.output
    assert (kb_root / "records/flops/b.yaml").read_text(encoding="utf-8") == MESSY


def test_bad_arguments(kb_root: Path, tmp_path: Path) -> None:
    missing = fmt(kb_root, "no/such/file.yaml")
    assert missing.exit_code == 2 and "does not exist" in missing.output
    outside = fmt(kb_root, os.devnull)
    assert outside.exit_code == 2 and "is not inside the knowledge base" in outside.output
    nowhere = CliRunner().invoke(main, ["fmt", "--root", str(tmp_path / "empty")])
    assert nowhere.exit_code == 2


@pytest.mark.parametrize("kind", KINDS)
def test_new_records_are_already_canonical(tmp_path: Path, kind: str) -> None:
    root = write_kb(tmp_path, {})
    assert CliRunner().invoke(main, ["new", "--root", str(root), kind, f"{kind}s/x"]).exit_code == 0
    assert fmt(root, "--check").exit_code == 0


@pytest.mark.parametrize(
    "text",
    [
        "id: sources/s\nkind: []\ntitle: T\n",  # a kind that is no text: `check` tells it
        "id: flops/a\nkind: flop\ncategory: kv-cache\ndescription: D.\naffected_by_hardware: [hw/a, hw/b\tc]\n",
        "id: flops/a\nkind: flop\ncategory: kv-cache\ndescription: D.\naffected_by_hardware: [hw/a, 'hw/b c']\n",
    ],
)
def test_what_fuzzing_found_is_formatted_once_and_for_all(text: str) -> None:
    """Found by tests/fuzz/test_fuzz_fmt.py: `kind: []` stopped `fmt` with a TypeError; an item of a list of ids that
    needs quotes went to block style, then, quoted, back to flow style the next time."""
    once = canonical(text)
    assert canonical(once) == once


def test_a_text_ruamel_would_write_as_yaml_reads_otherwise_is_left_as_it_is_and_said_why() -> None:
    """Found by tests/fuzz/test_fuzz_fmt.py: a quoted text holding U+2029 then a line break is written by ruamel.yaml
    in a form YAML reads otherwise: `fmt` stopped with a ScannerError and a traceback."""
    text = 'id: flops/a\nkind: flop\ncategory: kv-cache\ndescription: "\u2029\r\nD."\n'
    outcome = format_bytes(text.encode(), "records/flops/a.yaml")
    assert (outcome.text, outcome.problems, outcome.refusal) == (
        None,
        [],
        "the formatted text would not read back as YAML",
    )

"""Every problem of a record in one run: a schema problem in one part does not hide the others (docs/cli.md)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.load.models import MODELS
from flopkb.load.source import parse
from kbfixture import compile_kb
from repo import REPO

RECORDS = sorted(path.relative_to(REPO).as_posix() for path in (REPO / "records").rglob("*.yaml"))
DILUTION = "records/flops/sd-batch-dilution-problem.yaml"
FIELDS = {name for model in MODELS.values() for name in model.model_fields}


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kb")
    for folder in ("records", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def _diagnostics(root: Path) -> set[tuple[str, str, int, int, str]]:
    return {(d.code, d.path, d.line, d.column, d.message) for d in compile_kb(root).diagnostics}


def _edited(root: Path, rel: str, text: str) -> set[tuple[str, str, int, int, str]]:
    original = (root / rel).read_bytes()
    (root / rel).write_text(text, encoding="utf-8")
    try:
        return _diagnostics(root)
    finally:
        (root / rel).write_bytes(original)


def test_a_mistyped_field_and_a_wrong_claim_are_both_reported(repo_copy: Path) -> None:
    text = (REPO / DILUTION).read_text(encoding="utf-8")
    wrong = text.replace("        value: 36\n", "        value: 37\n").replace("workarounds:", "workaround:")
    found = {(code, line) for code, path, line, _, _ in _edited(repo_copy, DILUTION, wrong) if path == DILUTION}
    assert ("unknown-field", text[: text.index("workarounds:")].count("\n") + 1) in found
    assert any(code == "claim-mismatch" for code, _ in found), found


def test_a_wrong_value_of_an_optional_field_leaves_the_rest_checked(repo_copy: Path) -> None:
    text = (REPO / DILUTION).read_text(encoding="utf-8")
    wrong = text.replace("        value: 36\n", "        value: 37\n").replace(
        "tags: [speculative-decoding", "tags: [{not: text}, speculative-decoding"
    )
    found = {code for code, path, *_ in _edited(repo_copy, DILUTION, wrong) if path == DILUTION}
    assert {"invalid-value", "claim-mismatch"} <= found


def _with_file(root: Path, rel: str, text: str) -> KnowledgeBase:
    """The base at `root` compiled with one more file."""
    (root / rel).write_text(text, encoding="utf-8")
    try:
        return compile_kb(root)
    finally:
        (root / rel).unlink()


def test_a_record_missing_a_required_mapping_is_no_model(repo_copy: Path) -> None:
    rel = "records/accelerators/x.yaml"
    kb = _with_file(repo_copy, rel, "id: accelerators/x\nkind: accelerator\nvendor: V\nbogus: 1\n")
    assert kb.entries["accelerators/x"].record is None
    assert sorted(d.code for d in kb.diagnostics if d.path == rel) == ["missing-field", "unknown-field"]


def test_a_record_missing_a_required_text_field_is_checked_with_a_stand_in(repo_copy: Path) -> None:
    rel = "records/facts/x.yaml"
    kb = _with_file(repo_copy, rel, "id: facts/x\nkind: fact\nnotes: '[[nowhere]]'\nbogus: 1\n")
    record = kb.entries["facts/x"].record
    assert record is not None and record.statement == ""
    found = sorted((d.code, d.line, d.message) for d in kb.diagnostics if d.path == rel)
    assert found == [
        ("dangling-link", 3, "[[nowhere]] resolves to no record"),
        ("missing-field", 1, "the field 'statement' is required in the record"),
        ("orphan", 1, "no other record links to or references facts/x"),
        ("unknown-field", 4, "'bogus' is not a field here"),
    ]


_NAME = st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True).filter(lambda name: name not in FIELDS)
_VALUE = st.sampled_from(["1", "text", "[a, b]", "{a: 1}", "'[[nowhere]]'", "null", "!!int 3"])


_CLAIM = re.compile(r"(\n\s+(?:- )?value: )(-?[0-9][0-9.]*)\n")


def _damaged(text: str, damage: str, which: int) -> str:
    """The record with one more problem of its own: a claim that no longer holds, or a link to nowhere."""
    if damage == "claim":
        claims = list(_CLAIM.finditer(text))
        if claims:
            claim = claims[which % len(claims)]
            return f"{text[: claim.start(2)]}{float(claim.group(2)) * 2 + 1}{text[claim.end(2) :]}"
    if damage == "link" and "[[" in text:
        return text.replace("[[", "[[nowhere-", 1)
    return text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rel=st.sampled_from(RECORDS),
    name=_NAME,
    value=_VALUE,
    damage=st.sampled_from(["none", "claim", "link"]),
    which=st.integers(0, 30),
)
@example(rel=DILUTION, name="workaround", value="text", damage="claim", which=0)
def test_an_unknown_field_never_hides_another_diagnostic(
    repo_copy: Path, rel: str, name: str, value: str, damage: str, which: int
) -> None:
    text = _damaged((REPO / rel).read_text(encoding="utf-8"), damage, which)
    before = _edited(repo_copy, rel, text)
    after = _edited(repo_copy, rel, text.rstrip("\n") + f"\n{name}: {value}\n")
    assert before <= after
    added = {(code, path) for code, path, *_ in after - before}
    assert added == {("unknown-field", rel)}


ACCELERATORS = [rel for rel in RECORDS if rel.startswith("records/accelerators/")]
_SPEC = re.compile(r'\n  [a-z0-9_]+:\n    value: "(?P<value>[^"]*)"\n    basis: (?P<basis>[a-z-]+)\n')


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rel=st.sampled_from(ACCELERATORS), which=st.integers(0, 20), other=st.integers(1, 20))
def test_a_spec_whose_basis_is_no_term_hides_nothing_else(repo_copy: Path, rel: str, which: int, other: int) -> None:
    """A spec whose basis is no term is reported there, and left out: the accelerator's other specs are still
    checked (one given a unit that is no unit stays reported), and a record that computes with the accelerator is
    told nothing new but that its claims on the left-out spec are not checked (its formulas are not evaluated on
    it, as for a spec that fails its own check).
    """
    text = (REPO / rel).read_text(encoding="utf-8")
    specs = list(_SPEC.finditer(text))
    broken, unit = specs[which % len(specs)], specs[(which + other) % len(specs)]
    if broken.start() == unit.start():
        return
    edits = sorted([(broken.end("basis"), "s"), (unit.end("value"), "q")], reverse=True)
    with_unit = text[: unit.end("value")] + "q" + text[unit.end("value") :]
    both = text
    for at, added in edits:
        both = both[:at] + added + both[at:]
    before, after = _edited(repo_copy, rel, with_unit), _edited(repo_copy, rel, both)
    added_codes = {(code, path, line) for code, path, line, *_ in after - before if code != "claim-unchecked"}
    assert added_codes == {("unknown-term", rel, text[: broken.start("basis")].count("\n") + 1)}
    spec = broken.group(0).split(":", 1)[0].strip()
    unchecked = [message for code, _, _, _, message in after - before if code == "claim-unchecked"]
    assert all(f"has errors in its spec `{spec}`, reported in {rel}" in message for message in unchecked)
    unit_line = text[: unit.start("value")].count("\n") + 1
    assert any(code == "invalid-value" and path == rel and line == unit_line for code, path, line, *_ in after)


def test_a_formula_whose_only_accelerator_is_no_record_model_is_not_told_none_is_in_scope(repo_copy: Path) -> None:
    rel = "records/accelerators/nvidia-h100-sxm.yaml"
    text = (REPO / rel).read_text(encoding="utf-8")
    found = _edited(repo_copy, rel, text.replace("vendor: NVIDIA\n", ""))
    assert {(code, path) for code, path, *_ in found if code in ("missing-field", "formula-missing-spec")} == {
        ("missing-field", rel)
    }


def _required_text_fields(kind: str) -> list[str]:
    """The required text fields of a record of `kind`, its kind aside: none of them is read by a formula."""
    fields = MODELS[kind].model_fields.items()
    return [name for name, info in fields if name != "kind" and info.is_required() and info.annotation is str]


def _field_lines(text: str, field: str) -> tuple[int, int]:
    """The first and the past-the-end index of the lines of the top-level `field` (its block's lines too)."""
    lines = text.split("\n")
    start = next(index for index, line in enumerate(lines) if line.startswith(f"{field}:"))
    end = start + 1
    while end < len(lines) and (lines[end].startswith(" ") or not lines[end]):
        end += 1
    return start, end


_BROKEN_VALUE = {"id": "Not An Id", "category": "no-such-category"}


def _broken_field(text: str, field: str, how: str) -> str:
    """`text` with its `field` commented out (missing), misspelt as an unknown key, or given a wrong value; no line
    moves, so that every other diagnostic keeps its place."""
    lines = text.split("\n")
    start, end = _field_lines(text, field)
    if how == "missing":
        lines[start:end] = [f"# {line}" for line in lines[start:end]]
    elif how == "misspelt":
        lines[start] = f"{field}x{lines[start][len(field) :]}"
    else:
        lines[start:end] = [f"{field}: {_BROKEN_VALUE.get(field, '{not: text}')}"] + ["#"] * (end - start - 1)
    return "\n".join(lines)


_FIELD_CODES = {"missing": {"missing-field"}, "misspelt": {"missing-field", "unknown-field"}}
_WRONG_CODES = {"id": {"invalid-id"}, "category": {"unknown-term"}}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rel=st.sampled_from(RECORDS),
    which_field=st.integers(0, 5),
    how=st.sampled_from(["missing", "misspelt", "wrong"]),
    damage=st.sampled_from(["none", "claim", "link"]),
    which=st.integers(0, 30),
)
@example(rel=DILUTION, which_field=1, how="missing", damage="claim", which=0)
@example(rel="records/accelerators/nvidia-h100-sxm.yaml", which_field=1, how="wrong", damage="none", which=0)
def test_a_broken_required_text_field_hides_no_other_diagnostic(
    repo_copy: Path, rel: str, which_field: int, how: str, damage: str, which: int
) -> None:
    """A required text field of a record (`category`, `description`, `statement`, `vendor`, a source's `title`,
    `id`) missing, misspelt or wrong is reported, and every other diagnostic of the base stands: the record's
    formulas, claims, links and evidence are still checked, and the claims of other records on it too."""
    text = _damaged((REPO / rel).read_text(encoding="utf-8"), damage, which)
    fields = _required_text_fields(str(yaml.safe_load(text)["kind"]))
    field = fields[which_field % len(fields)]
    start, end = _field_lines(text, field)
    assume("[[nowhere-" not in "\n".join(text.split("\n")[start:end]))  # the link broken is in the field left out
    before = _edited(repo_copy, rel, text)
    after = _edited(repo_copy, rel, _broken_field(text, field, how))
    assert before <= after
    added = {(code, path) for code, path, *_ in after - before}
    codes = _FIELD_CODES.get(how) or _WRONG_CODES.get(field, {"invalid-value"})
    assert added == {(code, rel) for code in codes}


def test_a_misspelt_kind_is_checked_as_the_kind_it_is_close_to_when_the_record_has_its_fields(
    repo_copy: Path,
) -> None:
    text = _damaged(_damaged((REPO / DILUTION).read_text(encoding="utf-8"), "claim", 0), "link", 0)
    found = _edited(repo_copy, DILUTION, text.replace("kind: flop\n", "kind: flops\n"))
    assert ("unknown-term", DILUTION, 2, 7, "'flops' is not a record kind") in found
    assert {"claim-mismatch", "dangling-link"} <= {code for code, path, *_ in found if path == DILUTION}


def test_a_kind_the_record_has_not_the_fields_of_says_the_rest_is_not_checked(repo_copy: Path) -> None:
    text = _damaged((REPO / DILUTION).read_text(encoding="utf-8"), "claim", 0)
    found = _edited(repo_copy, DILUTION, text.replace("kind: flop\n", "kind: fcat\n"))
    assert {(code, message) for code, path, *_, message in found if path == DILUTION} == {
        ("unknown-term", "'fcat' is not a record kind; the record's other fields are not checked until it has a kind")
    }


def test_a_missing_kind_is_told_as_the_one_kind_whose_fields_the_record_has(repo_copy: Path) -> None:
    rel = "records/facts/x.yaml"
    kb = _with_file(repo_copy, rel, "id: facts/x\nstatement: '[[nowhere]]'\n")
    found = sorted((d.code, d.line) for d in kb.diagnostics if d.path == rel and d.code != "orphan")
    assert found == [("dangling-link", 2), ("missing-field", 1)]
    assert next(d.hint for d in kb.diagnostics if d.code == "missing-field") == "add `kind: fact`"


def test_a_list_item_that_lost_a_required_part_leaves_the_record_checked(repo_copy: Path) -> None:
    """A row whose basis is no term goes with its list (no index shifts), the record stays a model: its claims are
    checked, on the accelerators its rows named (the scope as written), and nothing says none is in scope."""
    text = _damaged((REPO / DILUTION).read_text(encoding="utf-8"), "claim", 0)
    found = _edited(repo_copy, DILUTION, text.replace("    basis: unverified\n", "    basis: unverifed\n", 1))
    codes = sorted(code for code, path, *_ in found if path == DILUTION)
    assert codes == ["claim-mismatch", "unknown-term"]


def _data_paths(data: object, at: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield at
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _data_paths(value, (*at, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _data_paths(value, (*at, index))


def _block_items(text: str) -> list[tuple[tuple[str | int, ...], int, int]]:
    """Every item of a block list (`- ` starts its line) in `text`: its data path, its first line and the line past
    its last (the line of the next part of the record that is not in it)."""
    source, _ = parse(text, "x.yaml")
    assert source is not None
    lines = text.split("\n")
    starts = {path: source.position(path, key=True)[0] for path in _data_paths(source.data)}  # a key's, or its value's
    items = []
    for path, line in starts.items():
        column = source.position(path)[1]
        if path and isinstance(path[-1], int) and lines[line - 1][: column - 1].strip() == "-":
            after = [at for other, at in starts.items() if at > line and other[: len(path)] != path]
            items.append((path, line, min(after, default=len(lines))))
    return items


def _broken_item(text: str, first: int, end: int, how: str) -> str:
    """`text` with the item on lines [first, end) broken as a whole, no line moved: made text where a mapping goes
    (or a mapping where text goes), its first key misspelt, or that key's value made a mapping."""
    lines = text.split("\n")
    head = lines[first - 1]
    dash = head.index("-") + 2
    key = re.match(r"([a-z_]+):", head[dash:])
    if how == "shape" or key is None:
        lines[first - 1 : end - 1] = [head[:dash] + ("broken item" if key else "{broken: item}")] + ["#"] * (
            end - first - 1
        )
    elif how == "misspelt":
        lines[first - 1] = f"{head[:dash]}{key.group(1)}x{head[dash + len(key.group(1)) :]}"
    else:
        lines[first - 1] = f"{head[: dash + key.end()]} {{not: text}}"
        if not head[dash + key.end() :].strip():  # the key's value is a block below it: it goes too
            lines[first : end - 1] = ["#"] * (end - first - 1)
    return "\n".join(lines)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rel=st.sampled_from(RECORDS),
    which=st.integers(0, 200),
    how=st.sampled_from(["shape", "misspelt", "value"]),
    damage=st.sampled_from(["claim", "link"]),
    which_damage=st.integers(0, 30),
)
@example(rel=DILUTION, which=0, how="shape", damage="claim", which_damage=1)
@example(rel=DILUTION, which=10, how="shape", damage="claim", which_damage=1)  # a claim beside a wrong one
def test_a_broken_list_item_hides_no_diagnostic_of_the_record_s_other_parts(
    repo_copy: Path, rel: str, which: int, how: str, damage: str, which_damage: int
) -> None:
    """One item of a list of a record of the base broken as a whole (its shape, a key, a value) hides none of the
    record's other diagnostics: every one the record had outside the item is still told, at the same place, in the
    same words. Only a formula that another formula of the record borrows (`ref: ...#id`) is spared: the borrower
    loses what it borrows, as when the formula is gone."""
    text = _damaged((REPO / rel).read_text(encoding="utf-8"), damage, which_damage)
    items = _block_items(text)
    assume(items)
    path, first, end = items[which % len(items)]
    if path[0] == "formulas" and len(path) == 2:
        assume(f"#{yaml.safe_load(text)['formulas'][path[1]]['id']}\n" not in text)
    before = {d for d in _edited(repo_copy, rel, text) if d[1] == rel and not first <= d[2] < end}
    after = _edited(repo_copy, rel, _broken_item(text, first, end, how))
    assert before <= after

"""`flopkb new`: every kind's template passes check but for what only the author can give, and bad requests are
refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.authoring.folders import conventional_id, created_as, folder_kind, folder_warning
from flopkb.cli import main
from flopkb.load.models import KINDS
from flopkb.load.source import parse
from kbfixture import compile_kb, write_kb

ORPHAN_ONLY = {"orphan"}


def new(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["new", "--root", str(root), *args])


@pytest.fixture
def kb_root(tmp_path: Path) -> Path:
    root = write_kb(tmp_path, {})
    assert CliRunner().invoke(main, ["schema", "--root", str(root)]).exit_code == 0
    return root


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_record_passes_check_but_for_being_an_orphan_and_a_draft(kb_root: Path, kind: str) -> None:
    result = new(kb_root, kind, f"{kind}s/my-first")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote records/{kind}s/my-first.yaml\n")
    assert "now write:" in result.output and "orphan" in result.output
    kb = compile_kb(kb_root)
    drafts = [] if kind == "source" else [("placeholder", f"records/{kind}s/my-first.yaml")]  # a source has no prose
    drafts *= 2 if kind == "accelerator" else 1  # its vendor's sentence, its empty specs
    assert sorted((d.code, d.path) for d in kb.diagnostics) == [("orphan", f"records/{kind}s/my-first.yaml"), *drafts]
    assert kb.entries[f"{kind}s/my-first"].record is not None


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_line_names_the_kinds_schema_and_the_record_satisfies_it(kb_root: Path, kind: str) -> None:
    new(kb_root, kind, f"deep/er/{kind}")
    path = kb_root / f"records/deep/er/{kind}.yaml"
    first_line, text = path.read_text(encoding="utf-8").split("\n", 1)[0], path.read_text(encoding="utf-8")
    assert first_line == f"# yaml-language-server: $schema=../../../schema/{kind}.schema.json"
    schema_path = (path.parent / first_line.split("$schema=", 1)[1]).resolve()
    assert schema_path == (kb_root / f"schema/{kind}.schema.json").resolve()
    jsonschema = pytest.importorskip("jsonschema")
    source, _ = parse(text, path.name)
    assert source is not None
    assert list(jsonschema.Draft202012Validator(json.loads(schema_path.read_text())).iter_errors(source.data)) == []


def test_the_output_names_what_the_author_must_write(kb_root: Path) -> None:
    assert "now write: vendor, specs " in new(kb_root, "accelerator", "hw/x").output
    assert "now write: category, description " in new(kb_root, "flop", "flops/x").output


def test_an_id_that_yaml_would_read_as_a_number_stays_text(kb_root: Path) -> None:
    assert new(kb_root, "fact", "1.5").exit_code == 0
    kb = compile_kb(kb_root)
    assert {d.code for d in kb.diagnostics} == {*ORPHAN_ONLY, "placeholder"}
    assert kb.entries["1.5"].record is not None


def test_a_missing_schema_gets_a_hint(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {})
    result = new(root, "flop", "flops/x")
    assert result.exit_code == 0
    assert "run flopkb schema, so that editors find schema/flop.schema.json" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("flp", "flops/x"),
            "'flp' is not a record kind; one of flop, fact, engine, accelerator, source (did you mean flop?)",
        ),
        (("flop", "Flops/X"), "'Flops/X' is not a valid id: the segment 'Flops' must match"),
        (("flop", "flops/Decode Step"), "(did you mean flops/decode-step?)"),
        (("flop", "flops/../x"), "'flops/../x' is not a valid id"),
        (("flop", "/flops/x"), "no leading or trailing '/'"),
    ],
)
def test_bad_requests_are_refused(kb_root: Path, args: tuple[str, str], message: str) -> None:
    result = new(kb_root, *args)
    assert result.exit_code == 2
    assert message in result.output
    assert list((kb_root / "records").rglob("*")) == []


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_an_existing_record_is_never_overwritten(kb_root: Path, suffix: str) -> None:
    existing = kb_root / f"records/flops/x{suffix}"
    existing.parent.mkdir(parents=True)
    existing.write_text("precious", encoding="utf-8")
    result = new(kb_root, "flop", "flops/x")
    assert result.exit_code == 2
    assert f"records/flops/x{suffix} already exists" in result.output
    assert existing.read_text(encoding="utf-8") == "precious"


def test_new_needs_a_knowledge_base(tmp_path: Path) -> None:
    result = new(tmp_path, "flop", "flops/x")
    assert result.exit_code == 2 and "no records/ folder" in result.output


def test_new_needs_a_usable_vocabulary(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {}, vocabulary="categories: []\n")
    result = new(root, "flop", "flops/x")
    assert result.exit_code == 2 and "vocabulary.yaml cannot be used" in result.output


def test_new_needs_its_arguments(kb_root: Path) -> None:
    result = new(kb_root, "flop")
    assert result.exit_code == 2 and "Missing argument 'ID'" in result.output


@pytest.mark.parametrize("given", ["records/flops/x", "records/flops/x.yaml", "flops/x.yaml", "flops/x.yml"])
def test_a_record_files_path_names_its_id_as_in_mv(kb_root: Path, given: str) -> None:
    result = new(kb_root, "flop", given)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("wrote records/flops/x.yaml\n") and result.stderr == ""
    assert compile_kb(kb_root).entries["flops/x"].record is not None


def test_a_path_from_the_current_folder_names_its_id_and_one_outside_the_records_is_refused(
    kb_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(kb_root / "records")
    assert new(kb_root, "flop", "./flops/x").output.startswith("wrote records/flops/x.yaml\n")
    assert new(kb_root, "flop", str(kb_root / "records/flops/y")).output.startswith("wrote records/flops/y.yaml\n")
    refused = new(kb_root, "flop", "../z.yaml")
    assert refused.exit_code == 2 and "../z.yaml is not in records/, where every record is" in refused.output
    (kb_root / "records/loop").symlink_to("loop")
    looped = new(kb_root, "flop", "./loop/x")
    assert looped.exit_code == 2 and "./loop/x cannot be followed to a file: a symlink loops" in looped.output


def test_a_folder_named_as_the_records_folder_inside_it_is_part_of_the_id(kb_root: Path) -> None:
    (kb_root / "records/records").mkdir(parents=True)
    assert new(kb_root, "flop", "records/x").output.startswith("wrote records/records/x.yaml\n")


@pytest.mark.parametrize(
    ("kind", "record_id", "where", "moved"),
    [
        ("flop", "h1-no-folder", "at the top of records/", "flops/h1-no-folder"),
        ("accelerator", "gpus/b200", "in gpus/", "accelerators/b200"),
        ("fact", "flops/deep/x", "in flops/", "facts/deep/x"),
    ],
)
def test_an_id_outside_its_kinds_folder_is_written_with_a_warning_that_says_how_to_move_it(
    kb_root: Path, kind: str, record_id: str, where: str, moved: str
) -> None:
    result = CliRunner().invoke(main, ["new", "--root", str(kb_root), kind, record_id])
    assert result.exit_code == 0, result.output
    assert (kb_root / "records" / f"{record_id}.yaml").is_file()
    assert f"warning: {kind} records live in {kind}s/ and {record_id} is {where}" in result.stderr
    command = result.stderr.rsplit(": ", 1)[1].split()
    assert command == ["flopkb", "mv", record_id, moved]
    assert CliRunner().invoke(main, [*command[1:3], "--root", str(kb_root), command[3]]).exit_code == 0
    assert (kb_root / "records" / f"{moved}.yaml").is_file()


@pytest.mark.parametrize("kind", KINDS)
def test_an_id_in_its_kinds_folder_gets_no_warning(kb_root: Path, kind: str) -> None:
    assert "warning" not in new(kb_root, kind, f"{kind}s/deep/ok").stderr


def _formulas_example_uncommented(text: str) -> str:
    """The template's commented `formulas:` example, uncommented in place (the other optional fields stay comments)."""
    lines = text.split("\n")
    start = lines.index("# formulas:")
    end = next(index for index in range(start + 1, len(lines)) if not lines[index].startswith("#  "))
    return "\n".join([*lines[:start], *(line[2:] for line in lines[start:end]), *lines[end:]])


@pytest.mark.parametrize("kind", ["fact", "flop"])
def test_the_commented_formulas_example_holds_a_claim_that_checks(kb_root: Path, kind: str) -> None:
    assert new(kb_root, kind, f"{kind}s/with-formula").exit_code == 0
    path = kb_root / f"records/{kind}s/with-formula.yaml"
    path.write_text(_formulas_example_uncommented(path.read_text(encoding="utf-8")), encoding="utf-8")
    kb = compile_kb(kb_root)
    [result] = kb.formulas[f"{kind}s/with-formula"]
    assert result.valid_when is not None
    assert [(claim.status, claim.computed) for claim in result.claims] == [("ok", 0.5)]
    assert {d.code for d in kb.diagnostics} == {"orphan", "placeholder"}


@pytest.mark.parametrize(
    ("target", "where"),
    [("outside", "the knowledge base"), ("kb/docs", "records/"), ("outside/gone", "the knowledge base")],
)
def test_a_folder_that_is_a_symlink_out_of_the_records_is_refused(tmp_path: Path, target: str, where: str) -> None:
    root = write_kb(tmp_path / "kb", {})
    (tmp_path / "outside").mkdir()
    (tmp_path / "kb/docs").mkdir()
    (root / "records/notes").symlink_to(tmp_path / target, target_is_directory=True)  # committed by a pull request
    result = new(root, "fact", "notes/deeper/x")
    assert result.exit_code == 2
    assert result.output == f"Error: records/notes is a symlink that leads out of {where}\n"
    assert list(tmp_path.rglob("x.yaml")) == []
    assert not (tmp_path / "outside/deeper").exists()


def test_a_folder_that_is_a_symlink_within_the_records_is_refused_with_the_id_to_use(kb_root: Path) -> None:
    (kb_root / "records/facts").mkdir()
    (kb_root / "records/notes").symlink_to("facts", target_is_directory=True)
    result = new(kb_root, "fact", "notes/x")
    assert result.exit_code == 2
    assert (
        result.output
        == "Error: records/notes is a symlink, and check finds no record through one: use the id facts/x\n"
    )
    assert new(kb_root, "fact", "facts/x").exit_code == 0  # the hint, applied literally
    assert [path.name for path in (kb_root / "records/facts").iterdir()] == ["x.yaml"]


SEGMENT = st.from_regex(r"[a-z0-9][a-z0-9-]{0,6}", fullmatch=True)
TARGETS = st.lists(st.one_of(SEGMENT, st.sampled_from([f"{kind}s" for kind in KINDS])), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(TARGETS.map("/".join), st.lists(st.sampled_from(KINDS), max_size=2, unique=True).map(tuple))
def test_a_dangling_link_is_created_where_new_puts_it_away_from_no_warning_and_resolving_to_it(
    target: str, kinds: tuple[str, ...]
) -> None:
    """What the editor creates for a link that resolves to nothing (`created_as`) is what `flopkb new` writes without
    a warning, of a kind the field takes (none: a prose link, any); the link lands on it as written (its id, or a
    suffix of it), or is rewritten to its id; where the kind cannot be told (a folder of no kind the place takes, which
    takes several), nothing, and the hint names the id in each kind's folder."""
    created = created_as(target, kinds, "affected_by_hardware")
    if isinstance(created, str):
        assert len(kinds) != 1 and folder_kind(target) not in (kinds or KINDS)
        assert created.endswith(f"({' or '.join(conventional_id(kind, target) for kind in kinds or KINDS)})")
        return
    assert created and {record.kind for record in created} <= set(kinds or KINDS)
    for record in created:
        assert folder_warning(record.kind, record.record_id) is None
        lands = record.record_id == target or record.record_id.endswith(f"/{target}")
        assert record.rewrite is not lands

"""The JSON Schemas for editors: complete, strict, up to date, and true to the compiler on real records."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flopkb.authoring.schema import RECORD_SCHEMA, schema_file, schemas
from flopkb.cli import main
from flopkb.config import load_config
from flopkb.formulas.units import QuantityError, parse_quantity, quantity_pattern
from flopkb.load.files import decode
from flopkb.load.models import KINDS, MODELS
from flopkb.load.source import parse
from flopkb.load.vocabulary import Vocabulary
from flopkb.pipeline.compile import load_vocabulary, record_files
from kbfixture import VOCABULARY, write_kb
from repo import REPO


def project_vocabulary() -> Vocabulary:
    vocabulary, problems = load_vocabulary(load_config(REPO))
    assert vocabulary is not None, problems
    return vocabulary


@pytest.fixture(scope="module")
def generated() -> dict[str, dict[str, Any]]:
    return {name: json.loads(text) for name, text in schemas(project_vocabulary()).items()}


def objects(node: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object inside a schema, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from objects(value)


def test_the_committed_schemas_are_up_to_date() -> None:
    for name, text in schemas(project_vocabulary()).items():
        path = REPO / "schema" / name
        assert path.is_file() and path.read_text(encoding="utf-8") == text, (
            f"schema/{name} is out of date: run flopkb schema"
        )


def test_one_schema_per_kind_and_one_for_any_record(generated: dict[str, dict[str, Any]]) -> None:
    assert set(generated) == {*(schema_file(kind) for kind in KINDS), RECORD_SCHEMA}
    branches = generated[RECORD_SCHEMA]["allOf"]
    assert {
        branch["if"]["properties"]["kind"]["const"]: branch["then"]["$ref"].rsplit("/", 1)[-1] for branch in branches
    } == {kind: model.__name__ for kind, model in MODELS.items()}


def test_every_field_has_a_description_and_no_other_field_is_allowed(generated: dict[str, dict[str, Any]]) -> None:
    for name, document in generated.items():
        for node in objects(document):
            if node is document and name == RECORD_SCHEMA:
                continue  # it names only `kind`; the kind's schema it picks allows no other field
            if "properties" in node and node.get("type") == "object":
                assert node["additionalProperties"] is False, name
                for field, subschema in node["properties"].items():
                    assert subschema.get("description"), f"{name}: {field} has no description"
    for kind, model in MODELS.items():
        assert set(generated[schema_file(kind)]["properties"]) == set(model.model_fields)


def test_controlled_terms_are_enums(generated: dict[str, dict[str, Any]]) -> None:
    vocabulary = project_vocabulary()
    flop = generated[schema_file("flop")]
    assert flop["properties"]["category"]["enum"] == vocabulary.terms("categories")
    row = flop["$defs"]["HardwareParameter"]["properties"]
    assert row["parameter"]["enum"] == vocabulary.terms("parameters")
    assert row["basis"]["enum"] == vocabulary.terms("basis")
    specs = generated[schema_file("accelerator")]["properties"]["specs"]
    assert list(specs["properties"]) == vocabulary.terms("parameters")
    assert specs["additionalProperties"] is False
    assert vocabulary.parameters["memory_bandwidth"].unit in specs["properties"]["memory_bandwidth"]["description"]


def test_output_is_deterministic() -> None:
    first, second = schemas(project_vocabulary()), schemas(project_vocabulary())
    assert first == second
    for text in first.values():
        assert (
            text.endswith("}\n")
            and text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )


def compiler_data(path: Path) -> dict[str, Any]:
    """A record's data exactly as the compiler reads it."""
    text = decode(path.read_bytes(), path.name)
    assert isinstance(text, str)
    source, problems = parse(text, path.name)
    assert source is not None, problems
    return source.data


def test_the_schemas_accept_every_record_of_the_project(generated: dict[str, dict[str, Any]]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    files = record_files(load_config(REPO))[0]
    assert files, "the project has records"
    for rel in files:
        data = compiler_data(REPO / rel)
        for name in (RECORD_SCHEMA, schema_file(data["kind"])):
            errors = [error.message for error in jsonschema.Draft202012Validator(generated[name]).iter_errors(data)]
            assert errors == [], f"{rel} against {name}"


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"categroy": "kv-cache"}, "categroy"),
        ({"category": "kv-cache-ish"}, "category"),
        ({"id": "Flops/A"}, "id"),
        ({"scales_with": [{"factor": "BatchSize", "effect": "x"}]}, "factor"),
        (
            {
                "hardware_parameters": [
                    {"parameter": "memory_bandwidth", "effect": "x", "basis": "verified", "values_for": []}
                ]
            },
            "basis",
        ),
    ],
)
def test_the_schemas_reject_what_check_rejects(
    generated: dict[str, dict[str, Any]], change: dict[str, Any], where: str
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    record = {"id": "flops/a", "kind": "flop", "category": "memory-bandwidth", "description": "Mechanism.", **change}
    for name in (RECORD_SCHEMA, schema_file("flop")):
        assert list(jsonschema.Draft202012Validator(generated[name]).iter_errors(record)), f"{name} accepts {change}"


def test_an_unknown_spec_parameter_is_rejected(generated: dict[str, dict[str, Any]]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    record = {
        "id": "hw/a",
        "kind": "accelerator",
        "vendor": "V",
        "specs": {"memory_bandwith": {"value": "1 TB/s", "basis": "derived"}},
    }
    assert list(jsonschema.Draft202012Validator(generated[schema_file("accelerator")]).iter_errors(record))


def test_schema_command_writes_then_checks(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {})
    runner = CliRunner()
    stale = runner.invoke(main, ["schema", "--root", str(root), "--check"])
    assert stale.exit_code == 1 and "out of date: schema/flop.schema.json" in stale.output
    assert not (root / "schema/flop.schema.json").exists()
    written = runner.invoke(main, ["schema", "--root", str(root)])
    assert written.exit_code == 0 and "wrote: schema/record.schema.json" in written.output
    fresh = runner.invoke(main, ["schema", "--root", str(root), "--check"])
    assert fresh.exit_code == 0 and "up to date" in fresh.output


def test_schema_command_replaces_a_symlink_never_writes_through_it(tmp_path: Path) -> None:
    # Security review s12, finding 5: a committed symlink in schema/ made `flopkb schema` overwrite its target.
    root = write_kb(tmp_path / "kb", {})
    runner = CliRunner()
    assert runner.invoke(main, ["schema", "--root", str(root)]).exit_code == 0
    fresh = (root / "schema/fact.schema.json").read_bytes()
    victim = tmp_path / "victim"
    victim.write_bytes(fresh)  # what the link leads to holds the very schema: still not the schema file
    victim.chmod(0o444)
    (root / "schema/fact.schema.json").unlink()
    (root / "schema/fact.schema.json").symlink_to(victim)
    stale = runner.invoke(main, ["schema", "--root", str(root), "--check"])
    assert stale.exit_code == 1 and stale.output == "out of date: schema/fact.schema.json\n"
    victim.chmod(0o644)
    victim.write_text("precious", encoding="utf-8")
    victim.chmod(0o444)  # read-only: the link is replaced all the same
    written = runner.invoke(main, ["schema", "--root", str(root)])
    assert written.exit_code == 0 and written.output == "wrote: schema/fact.schema.json\n", written.output
    assert victim.read_text(encoding="utf-8") == "precious"
    link = root / "schema/fact.schema.json"
    assert not link.is_symlink() and link.read_bytes() == fresh
    assert link.stat().st_mode & 0o777 == 0o666 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_schema_command_reports_a_broken_vocabulary(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {}, vocabulary=VOCABULARY.replace("basis:", "bases:"))
    result = CliRunner().invoke(main, ["schema", "--root", str(root)])
    assert result.exit_code == 1
    assert "schema/vocabulary.yaml:" in result.output and "invalid-value" in result.output


def test_schema_command_needs_a_knowledge_base(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "--root", str(tmp_path)])
    assert result.exit_code == 2 and "no records/ folder" in result.output


def errors_at(schema: dict[str, Any], record: dict[str, Any]) -> list[tuple[list[str | int], str]]:
    """Where a generic validator (jsonschema) places each error of `record`, with its message."""
    jsonschema = pytest.importorskip("jsonschema")
    return [
        (list(error.absolute_path), error.message)
        for error in jsonschema.Draft202012Validator(schema).iter_errors(record)
    ]


ACCELERATOR = {
    "id": "hw/a",
    "kind": "accelerator",
    "vendor": "V",
    "specs": {"memory_bandwidth": {"value": "3.35 TB/s", "basis": "derived"}},
}


@pytest.mark.parametrize("name", [RECORD_SCHEMA, schema_file("accelerator")])
def test_a_typo_in_specs_is_reported_at_its_field_by_the_any_record_schema_too(
    generated: dict[str, dict[str, Any]], name: str
) -> None:
    spec = {"valeu": "3.35 TB/s", "basis": "derived"}
    record = {**ACCELERATOR, "specs": {"memory_bandwidth": spec}}
    assert errors_at(generated[name], record) == [
        (["specs", "memory_bandwidth"], "Additional properties are not allowed ('valeu' was unexpected)"),
        (["specs", "memory_bandwidth"], "'value' is a required property"),
    ]


def test_a_record_of_no_kind_is_told_the_kinds(generated: dict[str, dict[str, Any]]) -> None:
    (error,) = errors_at(generated[RECORD_SCHEMA], {**ACCELERATOR, "kind": "acclerator"})
    assert error[0] == ["kind"] and "'accelerator'" in error[1]


@pytest.mark.parametrize("name", [RECORD_SCHEMA, schema_file("accelerator")])
def test_a_misspelt_unit_is_caught_by_the_schema_at_its_value(generated: dict[str, dict[str, Any]], name: str) -> None:
    record = {**ACCELERATOR, "specs": {"memory_bandwidth": {"value": "10 GBytes", "basis": "derived"}}}
    assert [path for path, _ in errors_at(generated[name], record)] == [["specs", "memory_bandwidth", "value"]]
    assert errors_at(generated[name], ACCELERATOR) == []


_UNIT_WORDS = [
    *("B", "byte", "bytes", "Byte", "GB", "GiB", "Gbytes", "GBytes", "kilobyte", "bit", "Tb", "tb", "Bps"),
    *("s", "sec", "secs", "ms", "µs", "us", "ps", "min", "mins", "h", "hours", "Hz", "Hzs"),
    *("FLOP", "flop", "TFLOP", "FLOPS", "flops", "J", "W", "token", "tokens", "Mtoken", "%", "k%", "1", "x", "2"),
]
_JOINERS = ["", " ", "/", " / ", "*", " * ", "**2", "^-1", "//"]


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["1", "3.35", "-2", ".5", "1e3", "2E-3"]),
    st.lists(
        st.tuples(st.sampled_from(_JOINERS), st.sampled_from(_UNIT_WORDS), st.booleans()),
        max_size=3,
        unique_by=lambda part: part[1],
    ),
)
@example(number="1", parts=[("", "1", False), ("//", "B", False)])  # pint's `//` once slipped through
def test_the_quantity_pattern_accepts_exactly_what_flopkb_reads(
    number: str, parts: list[tuple[str, str, bool]]
) -> None:
    """Parentheses come balanced: their balance is the one thing the pattern leaves to `check`, and never right
    after a power (`B**2(1)`, which pint reads in its own way). Each word comes once: pint cancels an unknown name
    against itself (`1 Byte/Byte` reads as 1), which the pattern refuses."""
    text = (
        number
        + " "
        + "".join(
            joiner + (f"({word})" if wrapped and not joiner[-1:].isdigit() else word) for joiner, word, wrapped in parts
        )
    )
    try:
        parse_quantity(text)
    except QuantityError:
        reads = False
    else:
        reads = True
    assert bool(re.fullmatch(quantity_pattern(), text)) == reads, text

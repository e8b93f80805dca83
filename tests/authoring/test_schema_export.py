"""The JSON Schemas for editors: complete, strict, up to date, and true to the compiler on real records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flopkb.authoring.schema import RECORD_SCHEMA, schema_file, schemas
from flopkb.cli import main
from flopkb.config import load_config
from flopkb.load.models import KINDS, MODELS
from flopkb.load.source import decode, parse
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
    assert {ref["$ref"].rsplit("/", 1)[-1] for ref in generated[RECORD_SCHEMA]["oneOf"]} == {
        model.__name__ for model in MODELS.values()
    }
    assert generated[RECORD_SCHEMA]["discriminator"]["propertyName"] == "kind"


def test_every_field_has_a_description_and_no_other_field_is_allowed(generated: dict[str, dict[str, Any]]) -> None:
    for name, document in generated.items():
        for node in objects(document):
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


def test_schema_command_reports_a_broken_vocabulary(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {}, vocabulary=VOCABULARY.replace("basis:", "bases:"))
    result = CliRunner().invoke(main, ["schema", "--root", str(root)])
    assert result.exit_code == 1
    assert "schema/vocabulary.yaml:" in result.output and "invalid-value" in result.output


def test_schema_command_needs_a_knowledge_base(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "--root", str(tmp_path)])
    assert result.exit_code == 2 and "no records/ folder" in result.output

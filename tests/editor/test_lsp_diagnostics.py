"""`flopkb lsp` diagnostics equal `flopkb check`: on open, on unsaved edits, across files, and it stays up."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import attrs
import pytest
from lsprotocol import types

from flopkb.editor.related import related_places
from hostile_kb import write_hostile_kb
from kbfixture import accelerator, compile_kb, write_kb
from lsp_session import UTF8, UTF16, Pushes, checked, lsp_session, open_file, pushed, record_files, settled
from repo import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import generate

pytestmark = pytest.mark.asyncio


def project_base(root: Path) -> Path:
    shutil.copytree(REPO / "records", root / "records")
    shutil.copytree(REPO / "schema", root / "schema")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


BASES = {
    "project": project_base,
    "hostile": write_hostile_kb,
    "generated": lambda root: generate(root, 120),
}


@pytest.mark.parametrize("encoding", [UTF16, UTF8])
@pytest.mark.parametrize("base", sorted(BASES))
async def test_diagnostics_pushed_on_open_equal_check(tmp_path: Path, base: str, encoding: str) -> None:
    root = BASES[base](tmp_path / "kb")
    expected = checked(root, encoding)
    async with lsp_session(root, encoding=encoding) as lsp:
        uris = [open_file(lsp, root, rel) for rel in record_files(root)]
        await settled(lsp, uris[-1])
        assert pushed(lsp, root) == expected


GAIN = """\
id: facts/gain
kind: fact
statement: See [[h100]] and [[sources/paper]].
formulas:
  - id: gain
    expr: k / batch
    inputs: {k: 4, batch: 32}
    expect:
      - {measured: sources/paper#b32}
"""
PAPER = """\
id: sources/paper
kind: source
title: P
aliases: [hw/h100]
measurements:
  - {id: a, quantity: gain, value: 0.125, basis: simulated, where: Figure 21}
  - {id: b32, quantity: gain, value: 0.2, basis: simulated, where: Figure 22}
"""


async def test_a_problem_with_a_second_place_points_at_it(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {
            "records/hw/h100.yaml": accelerator("hw/h100", memory_bandwidth="3.35 TB/s"),
            "records/old/h100.yaml": accelerator("old/h100", memory_bandwidth="2 TB/s"),
            "records/facts/gain.yaml": GAIN,
            "records/sources/paper.yaml": PAPER,
        },
    )
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/gain.yaml")
        await settled(lsp, uri)
        related = {
            (str(item.code), rel_of(root, info.location.uri), info.location.range.start.line, info.message)
            for items in lsp.diagnostics.values()
            for item in items
            for info in item.related_information or []
        }
    assert related == {
        ("ambiguous-link", "records/hw/h100.yaml", 0, "'h100' matches hw/h100"),
        ("ambiguous-link", "records/old/h100.yaml", 0, "'h100' matches old/h100"),
        ("duplicate-id", "records/hw/h100.yaml", 0, "hw/h100 claims 'hw/h100' too"),
        ("measurement-disagrees", "records/sources/paper.yaml", 6, "the measurement sources/paper#b32"),
    }


def rel_of(root: Path, uri: str) -> str:
    return Path(uri.removeprefix("file://")).relative_to(root).as_posix()


async def test_a_pulling_client_pulls_every_file_s_diagnostics_and_none_are_pushed(tmp_path: Path) -> None:
    root = write_hostile_kb(tmp_path / "kb")
    async with lsp_session(root, client="neovim@v0.11.0") as lsp:
        open_file(lsp, root, record_files(root)[0])
        report = await lsp.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert lsp.diagnostics == {}
        for item in report.items:
            assert isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
            lsp.diagnostics[item.uri] = list(item.items)
        assert pushed(lsp, root) == checked(root, UTF16) != []


RIDGE = """\
id: facts/ridge
kind: fact
statement: The ridge point of [[hw/alpha]].
formulas:
  - id: ridge
    expr: hw.peak_bf16_dense / hw.memory_bandwidth
    unit: FLOP/byte
    hardware: [hw/alpha]
  - id: stream
    expr: hw.memory_bandwidth * t
    unit: byte
    inputs: {t: 1 s}
    hardware: [hw/alpha]
"""


async def test_an_unverified_figure_points_at_the_claims_that_compute_with_it(tmp_path: Path) -> None:
    alpha = accelerator("hw/alpha", basis="unverified", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s")
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": alpha, "records/facts/ridge.yaml": RIDGE})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/hw/alpha.yaml")
        unverified = {
            item.range.start.line: item for item in await settled(lsp, uri) if item.code == "unverified-basis"
        }
    related = {
        line: [
            (rel_of(root, info.location.uri), info.location.range.start.line, info.message)
            for info in item.related_information or []
        ]
        for line, item in unverified.items()
    }
    assert related == {
        4: [("records/facts/ridge.yaml", 4, "facts/ridge#ridge computes with hw/alpha specs.peak_bf16_dense")],
        5: [
            ("records/facts/ridge.yaml", 4, "facts/ridge#ridge computes with hw/alpha specs.memory_bandwidth"),
            ("records/facts/ridge.yaml", 8, "facts/ridge#stream computes with hw/alpha specs.memory_bandwidth"),
        ],
    }


async def test_the_first_check_pushes_its_diagnostics_before_their_related_places_then_with_them(
    tmp_path: Path,
) -> None:
    alpha = accelerator("hw/alpha", basis="unverified", peak_bf16_dense="1000 TFLOP/s", memory_bandwidth="4 TB/s")
    root = write_kb(tmp_path, {"records/hw/alpha.yaml": alpha, "records/facts/ridge.yaml": RIDGE})
    async with lsp_session(root) as lsp:
        await lsp.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert isinstance(lsp.diagnostics, Pushes)
        pushes = [items for uri, items in lsp.diagnostics.log if uri.endswith("hw/alpha.yaml")]
    assert [[item.related_information is not None for item in items] for items in pushes] == [
        [False, False],
        [True, True],
    ]
    assert pushes[0] == [attrs.evolve(item, related_information=None) for item in pushes[1]]


async def test_a_server_started_in_one_base_checks_the_base_the_client_opens(tmp_path: Path) -> None:
    started_in = generate(tmp_path / "here", 10)
    root = generate(tmp_path / "opened", 30)
    async with lsp_session(root, started_in=started_in) as lsp:
        await lsp.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert pushed(lsp, root) == checked(root, UTF16) != []


async def test_buffers_indented_by_tabs_have_every_problem_at_its_place_in_the_buffer(tmp_path: Path) -> None:
    """Unsaved buffers whose indented lines start with a tab (the files on disk with spaces): besides each buffer's
    tab error, the problems the spaced files have, each on a tabbed line one character left, related places too."""
    gain = GAIN.replace("statement: See [[h100]]", "statement: |\n  See [[nowhere]]")
    files = {"records/facts/gain.yaml": gain, "records/sources/paper.yaml": PAPER}
    root = write_kb(tmp_path, files)
    spaced = compile_kb(root)
    tabbed = {rel: text.replace("\n  ", "\n\t") for rel, text in files.items()}
    tabs = {(rel, n) for rel, text in tabbed.items() for n, line in enumerate(text.split("\n")) if "\t" in line}

    def moved(rel: str, line: int, character: int) -> tuple[str, int, int]:
        return rel, line, character - ((rel, line) in tabs)

    async with lsp_session(root) as lsp:
        uris = {rel: open_file(lsp, root, rel, text) for rel, text in tabbed.items()}
        await settled(lsp, uris["records/facts/gain.yaml"])
        found = {
            (rel_of(root, uri), item.range.start.line, item.range.start.character, str(item.code)): sorted(
                (rel_of(root, info.location.uri), info.location.range.start.line, info.location.range.start.character)
                for info in item.related_information or []
            )
            for uri, items in lsp.diagnostics.items()
            for item in items
            if item.code != "yaml-syntax"
        }
        errors = sorted(
            (rel_of(root, uri), item.range.start.line, item.range.start.character)
            for uri, items in lsp.diagnostics.items()
            for item in items
            if item.code == "yaml-syntax"
        )
    assert errors == [("records/facts/gain.yaml", 3, 0), ("records/sources/paper.yaml", 5, 0)]
    expected = {
        (*moved(d.path, d.line - 1, d.column - 1), d.code): sorted(
            moved(rel, line - 1, column - 1) for rel, line, column, _ in related_places(spaced, d)
        )
        for d in spaced.diagnostics
    }
    assert {code for *_, code in expected} >= {"dangling-link", "measurement-disagrees"}
    assert found == expected

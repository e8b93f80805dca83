"""Navigation: definition from links, anchors and hw. names; references are the backlinks; document symbols."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from test_lsp_hover import ALPHA, BETA, FACT, GAIN

from kbfixture import write_kb
from lsp_session import lsp_session, open_file, settled

pytestmark = pytest.mark.asyncio


def position(text: str, needle: str, skip: int = 1) -> types.Position:
    before = text[: text.index(needle) + skip]
    return types.Position(line=before.count("\n"), character=len(before.rsplit("\n", 1)[-1]))


def places(locations: list[types.Location] | None, root: Path) -> list[tuple[str, int]]:
    return sorted(
        (Path(item.uri.removeprefix("file://")).relative_to(root).as_posix(), item.range.start.line)
        for item in locations or []
    )


async def test_definition_references_and_symbols(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT}
    root = write_kb(tmp_path, {**files, "records/facts/g.yaml": GAIN})
    async with lsp_session(root) as lsp:
        uri = open_file(lsp, root, "records/facts/f.yaml")
        await settled(lsp, uri)
        document = types.TextDocumentIdentifier(uri=uri)

        async def definition(needle: str, skip: int = 1) -> list[tuple[str, int]]:
            found = await lsp.text_document_definition_async(
                types.DefinitionParams(text_document=document, position=position(FACT, needle, skip))
            )
            assert found is None or isinstance(found, list)
            return places(found, root)  # type: ignore[arg-type]

        assert await definition("[[hw/alpha]]", 3) == [("records/hw/alpha.yaml", 0)]
        assert await definition("[[facts/g#gain]]", 3) == [("records/facts/g.yaml", 4)]  # the formula's id line
        assert await definition("hw/beta]") == [("records/hw/beta.yaml", 0)]  # a typed ref
        assert await definition("hw.memory_bandwidth", 4) == [("records/hw/alpha.yaml", 5), ("records/hw/beta.yaml", 5)]
        assert await definition("kind: fact") == []

        referenced = await lsp.text_document_references_async(
            types.ReferenceParams(
                text_document=document,
                position=position(FACT, "[[hw/alpha]]", 3),
                context=types.ReferenceContext(include_declaration=False),
            )
        )
        assert places(referenced, root) == [
            ("records/facts/f.yaml", 3),
            ("records/facts/f.yaml", 12),
            ("records/facts/f.yaml", 15),
        ]

        symbols = await lsp.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=document))
        assert [(symbol.name, symbol.location.range.start.line) for symbol in symbols or []] == [  # type: ignore[union-attr]
            ("facts/f", 0),
            ("facts/f#ridge", 5),
        ]


async def test_workspace_symbols_find_records_aliases_and_formulas(tmp_path: Path) -> None:
    files = {"records/hw/alpha.yaml": ALPHA.replace("kind: accelerator\n", "kind: accelerator\naliases: [gpu-a]\n")}
    root = write_kb(tmp_path, {**files, "records/hw/beta.yaml": BETA, "records/facts/f.yaml": FACT})
    async with lsp_session(root) as lsp:
        await settled(lsp, open_file(lsp, root, "records/facts/f.yaml"))
        found = await lsp.workspace_symbol_async(types.WorkspaceSymbolParams(query="ridge"))
        assert [(symbol.name, symbol.container_name) for symbol in found or []] == [  # type: ignore[union-attr]
            ("facts/f", "Ridge points"),
            ("facts/f#ridge", "formulas"),
        ]
        found = await lsp.workspace_symbol_async(types.WorkspaceSymbolParams(query="GPU"))
        assert [(symbol.name, places([symbol.location], root)) for symbol in found or []] == [  # type: ignore[union-attr, list-item]
            ("gpu-a", [("records/hw/alpha.yaml", 0)])
        ]

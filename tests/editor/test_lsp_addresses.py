"""The URIs the server sends are the client's: the open documents' own, else under the workspace folder as the client
named it (a symlinked folder stays the link); and finding them is a lookup, not a path resolved per open document."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.workspace import Workspace
from test_lsp_hover import ALPHA

from flopkb.config import load_config
from flopkb.editor.addresses import Addresses
from flopkb.editor.checked import Checked
from flopkb.editor.server import make_server
from kbfixture import accelerator, write_kb
from lsp_session import lsp_session, open_file, settled

FILES, OPEN = 3000, 60
AMBIGUOUS = "id: facts/g\nkind: fact\nstatement: See [[h100]].\n"
DANGLING = "id: facts/f\nkind: fact\nstatement: See [[hw/alpha]] and [[nowhere]].\n"


def linked_base(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """A base, and a symlink to its folder: the folder the client opens."""
    root = write_kb(tmp_path / "real", files)
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    return root, link


def test_publishing_many_files_with_many_documents_open_resolves_no_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3,000 files' diagnostics published with 60 documents open: each URI a lookup (it was 3,000 x 60 resolutions of a
    path on the message loop, seconds when nothing is answered)."""
    root, link = linked_base(tmp_path, {})
    server = make_server()
    server.protocol.client_capabilities = types.ClientCapabilities()
    server.protocol._workspace = Workspace(link.as_uri())
    server.config, server.imported = load_config(root), True
    server.addresses = Addresses(root, link)
    rels = [f"records/facts/g{i}.yaml" for i in range(FILES)]
    opened = {rel: (root / rel).as_uri() for rel in rels[:OPEN]}  # not as the workspace folder has them: as opened
    did_open = server.protocol.fm.features[types.TEXT_DOCUMENT_DID_OPEN]
    for uri in opened.values():
        document = types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text="")
        server.workspace.put_text_document(document)
        did_open(types.DidOpenTextDocumentParams(text_document=document))
    sent: list[types.PublishDiagnosticsParams] = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", sent.append)
    resolved = []
    resolve = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda path, strict=False: resolved.append(path) or resolve(path, strict))
    problem = types.Diagnostic(range=types.Range(types.Position(0, 0), types.Position(0, 1)), message="x")
    server.publish(Checked(server.config, 1, {}, None, {rel: [problem] for rel in rels}))
    assert resolved == []
    assert len(sent) == FILES
    assert {params.uri for params in sent} == {opened.get(rel, (link / rel).as_uri()) for rel in rels}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 2), st.booleans()), max_size=12))
def test_a_file_s_uri_is_that_of_a_document_open_on_it_else_under_the_client_s_folder(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[bool, int, bool]]
) -> None:
    """Documents opened and closed, each file through the link or the resolved folder: a file's URI is one it is open
    under while one is, else the link's; each open document's URI names its file."""
    root, link = linked_base(tmp_path_factory.mktemp("base"), {})
    addresses = Addresses(root, link)
    open_now: set[str] = set()
    for opens, file, through_link in steps:
        uri = ((link if through_link else root) / f"records/f{file}.yaml").as_uri()
        if opens and uri not in open_now:
            addresses.opened(uri)
            open_now.add(uri)
        elif not opens and uri in open_now:
            addresses.closed(uri)
            open_now.discard(uri)
    for file in range(3):
        rel = f"records/f{file}.yaml"
        under = {uri for uri in open_now if uri.endswith(f"/{rel}")}
        assert addresses.uri(rel) in (under or {(link / rel).as_uri()})
        assert all(addresses.relative(uri) == rel for uri in under)


@pytest.mark.asyncio
async def test_a_workspace_reached_through_a_symlink_gets_everything_at_the_uris_it_opened(tmp_path: Path) -> None:
    """The client opens the link: the open record gets its diagnostics at its own URI, once (none under the resolved
    folder, then a second set after an edit), and second places, definitions, references and rename edits point into the
    link."""
    files = {"records/hw/alpha.yaml": ALPHA, "records/facts/f.yaml": DANGLING}
    ambiguous = {"records/hw/h100.yaml": accelerator("hw/h100"), "records/old/h100.yaml": accelerator("old/h100")}
    _, link = linked_base(tmp_path, {**files, **ambiguous, "records/facts/g.yaml": AMBIGUOUS})
    async with lsp_session(link) as lsp:
        uri = open_file(lsp, link, "records/facts/f.yaml")
        await settled(lsp, uri)
        assert [str(item.code) for item in lsp.diagnostics[uri]] == ["orphan", "dangling-link"]
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangeWholeDocument(DANGLING.replace(" and [[nowhere]]", ""))
                ],
            )
        )
        await settled(lsp, uri)
        assert [str(item.code) for item in lsp.diagnostics[uri]] == ["orphan"]
        assert [sent for sent in lsp.diagnostics if sent.endswith("/records/facts/f.yaml")] == [uri]
        assert all(sent.startswith(f"{link.as_uri()}/") for sent, _ in lsp.diagnostics.log)
        second = {
            (str(item.code), info.location.uri)
            for items in lsp.diagnostics.values()
            for item in items
            for info in item.related_information or []
        }
        assert ("ambiguous-link", (link / "records/old/h100.yaml").as_uri()) in second
        assert all(place.startswith(f"{link.as_uri()}/") for _, place in second)
        document = types.TextDocumentIdentifier(uri=uri)
        at_link = types.Position(line=2, character=DANGLING.split("\n")[2].index("hw/alpha"))
        found = await lsp.text_document_definition_async(
            types.DefinitionParams(text_document=document, position=at_link)
        )
        assert isinstance(found, list)
        assert [item.uri for item in found] == [(link / "records/hw/alpha.yaml").as_uri()]
        alpha = open_file(lsp, link, "records/hw/alpha.yaml")
        await settled(lsp, alpha)
        referenced = await lsp.text_document_references_async(
            types.ReferenceParams(
                text_document=types.TextDocumentIdentifier(uri=alpha),
                position=types.Position(line=0, character=5),
                context=types.ReferenceContext(include_declaration=False),
            )
        )
        assert [item.uri for item in referenced or []] == [uri]
        lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        renamed = await lsp.text_document_rename_async(
            types.RenameParams(
                text_document=types.TextDocumentIdentifier(uri=alpha),
                position=types.Position(line=0, character=5),
                new_name="hw/gamma",
            )
        )
        assert renamed is not None
        assert sorted(
            (
                type(change).__name__,
                change.text_document.uri if isinstance(change, types.TextDocumentEdit) else change.new_uri,
            )
            for change in renamed.document_changes or []
        ) == [
            ("RenameFile", (link / "records/hw/gamma.yaml").as_uri()),
            ("TextDocumentEdit", uri),  # closed: under the link too
            ("TextDocumentEdit", alpha),
        ]


@pytest.mark.asyncio
async def test_a_record_opened_under_another_spelling_of_its_path_takes_its_diagnostics_along(tmp_path: Path) -> None:
    """The workspace is the link; a record is opened through the folder it leads to (a path from a terminal): its
    diagnostics move to the URI it is open under, and back when it is closed, one set at a time."""
    root, link = linked_base(tmp_path, {"records/hw/alpha.yaml": ALPHA, "records/facts/f.yaml": DANGLING})
    closed = (link / "records/facts/f.yaml").as_uri()
    async with lsp_session(link) as lsp:
        await settled(lsp, closed)
        assert [str(item.code) for item in lsp.diagnostics[closed]] == ["orphan", "dangling-link"]
        uri = open_file(lsp, root, "records/facts/f.yaml")
        await settled(lsp, uri)
        assert [str(item.code) for item in lsp.diagnostics[uri]] == ["orphan", "dangling-link"]
        assert list(lsp.diagnostics[closed]) == []
        lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        await settled(lsp, closed)
        assert [str(item.code) for item in lsp.diagnostics[closed]] == ["orphan", "dangling-link"]
        assert list(lsp.diagnostics[uri]) == []


async def pulled(lsp: LanguageClient, held: dict[str, list[str]]) -> None:
    """A workspace pull, as a client keeps it: each report replaces what it held at that URI (codes, in order)."""
    report = await lsp.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    held.update({item.uri: [str(diagnostic.code) for diagnostic in item.items] for item in report.items})


async def refreshed(lsp: LanguageClient) -> None:
    """Once the server has asked the client to pull diagnostics again (`workspace/diagnostic/refresh`)."""
    count = lsp.diagnostic_refresh_count
    for _ in range(100):
        await asyncio.sleep(0.05)
        if lsp.diagnostic_refresh_count > count:
            return
    raise AssertionError("the client was not asked to pull again")


@pytest.mark.asyncio
@pytest.mark.parametrize("spelling", ["real/records/facts/f.yaml", "link/records/../records/facts/f.yaml"])
async def test_a_pulling_client_gets_a_record_s_diagnostics_at_the_uri_it_opened_and_nowhere_else(
    tmp_path: Path, spelling: str
) -> None:
    """A client that pulls diagnostics, its workspace the link, opens a record under another spelling of its path (the
    folder the link leads to, a `..`): it is asked to pull again (once), its pulls answer at the URI it opened, and
    the diagnostics it held under the link are taken back; closed, they go back there."""
    linked_base(tmp_path, {"records/hw/alpha.yaml": ALPHA, "records/facts/f.yaml": DANGLING})
    link, closed = tmp_path / "link", (tmp_path / "link/records/facts/f.yaml").as_uri()
    codes, held = ["orphan", "dangling-link"], {}
    async with lsp_session(link, client="neovim@v0.11.0", diagnostics_refresh=True) as lsp:
        await pulled(lsp, held)
        assert held[closed] == codes
        uri = open_file(lsp, tmp_path, spelling)
        await refreshed(lsp)
        asked = lsp.diagnostic_refresh_count
        await lsp.workspace_execute_command_async(types.ExecuteCommandParams(command="flopkb.rescan"))
        document = await lsp.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert isinstance(document, types.RelatedFullDocumentDiagnosticReport)
        assert [str(item.code) for item in document.items] == codes
        assert lsp.diagnostic_refresh_count == asked  # asked once: a check since, that changed nothing, asks no more
        await pulled(lsp, held)
        assert (held[uri], held[closed]) == (codes, [])
        lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        await refreshed(lsp)
        await pulled(lsp, held)
        assert (held[uri], held[closed]) == ([], codes)

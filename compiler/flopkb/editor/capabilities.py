"""What the client said at `initialize` it takes, as the server asks it."""

from __future__ import annotations

from lsprotocol import types


def pulls(client: types.ClientCapabilities) -> bool:
    """Whether the client pulls diagnostics (then they are not pushed too: it would show them twice)."""
    document = client.text_document
    return document is not None and document.diagnostic is not None


def refreshes_diagnostics(client: types.ClientCapabilities) -> bool:
    workspace = client.workspace
    return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)


def refreshes_hints(client: types.ClientCapabilities) -> bool:
    workspace = client.workspace
    return bool(workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support)


def versions_edits(client: types.ClientCapabilities) -> bool:
    """Whether the client applies an edit of a document's version (`documentChanges`), refusing a stale one: it says
    so, or it takes resource operations, which only `documentChanges` can hold (Neovim says only that)."""
    edits = _workspace_edit(client)
    return bool(edits is not None and (edits.document_changes or edits.resource_operations))


def creates_files(client: types.ClientCapabilities) -> bool:
    """Whether the client applies a workspace edit that creates a file (else "create the record" is not offered: the
    client would fail on it)."""
    edits = _workspace_edit(client)
    return edits is not None and types.ResourceOperationKind.Create in (edits.resource_operations or ())


def watches_files(client: types.ClientCapabilities) -> bool:
    """Whether the client watches files for the server (then every change on disk is told)."""
    watched = client.workspace.did_change_watched_files if client.workspace is not None else None
    return bool(watched and watched.dynamic_registration)


def _workspace_edit(client: types.ClientCapabilities) -> types.WorkspaceEditClientCapabilities | None:
    return client.workspace.workspace_edit if client.workspace is not None else None

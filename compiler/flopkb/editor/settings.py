"""The base's settings as the server takes them, at start and when pyproject.toml changes, and the paths it asks the
editor to watch for it.

Settings that cannot be used (a `[tool.flopkb]` table flopkb refuses, or a
records folder that is not there) are told in a message naming pyproject.toml;
changed while the server runs, the settings before the change are kept. The
editor is asked to watch the record files, pyproject.toml, and the records and
schema folders themselves: an editor reports a folder deleted or renamed as
one event for the folder (VS Code does), which no file pattern matches; the
server takes such an event for everything under the folder
(`flopkb.editor.disk.Remembered.forget`). Changed settings that name other
folders (the records folder renamed in pyproject.toml) are watched from then
on: the registration before is withdrawn and one for them made (`Watching`);
the check of the new settings reads every file again.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from lsprotocol import types
from pygls import uris

from flopkb.config import Config, ConfigError, load_config

_FILES = ("**/*.yaml", "**/*.yml", "**/pyproject.toml")


def workspace_root(params: types.InitializeParams) -> Path | None:
    """The folder the client opened: where the base is, unless `flopkb lsp --root` names it."""
    if params.workspace_folders:
        path = uris.to_fs_path(params.workspace_folders[0].uri)
        return Path(path) if path else None
    if params.root_uri:
        path = uris.to_fs_path(params.root_uri)
        return Path(path) if path else None
    return Path(params.root_path) if params.root_path else None


def read_settings(root: Path, *, changed: bool) -> Config | str:
    """The settings of the base at `root`, or the message that tells the author why they cannot be used; `changed`:
    read again after pyproject.toml changed (then the settings before are kept)."""
    try:
        config = load_config(root)
    except ConfigError as error:
        return f"flopkb: {error}" + ("; the settings before this change are kept" if changed else "")
    if config.records_path.is_dir():
        return config
    if not changed:
        return f"flopkb: no {config.records}/ folder in {config.root}; start flopkb lsp in a knowledge base"
    return (
        f"flopkb: pyproject.toml [tool.flopkb] records = {config.records!r}: no such folder in {config.root}; the"
        " settings before this change are kept: fix the setting, or create the folder and save pyproject.toml again"
    )


def watchers(config: Config) -> list[types.FileSystemWatcher]:
    """What the editor is asked to watch: the files a check reads, and the records and schema folders, their own
    deletion and creation (a rename) as well as those of the folders under them."""
    names = {folder.strip("/") for folder in (config.records, config.schema)}
    patterns = ["**/*"] if names & {"", "."} else sorted(f"**/{name}{tail}" for name in names for tail in ("", "/**"))
    folders = [
        types.FileSystemWatcher(glob_pattern=pattern, kind=types.WatchKind.Create | types.WatchKind.Delete)
        for pattern in patterns
    ]
    return [types.FileSystemWatcher(glob_pattern=pattern) for pattern in _FILES] + folders


class Watching:
    """The registration of watched files the client holds, changed with the settings."""

    def __init__(self) -> None:
        self.held: tuple[str, list[types.FileSystemWatcher]] | None = None
        """The registration's id, and what it watches."""
        self._ids = itertools.count(1)

    def to(self, config: Config) -> tuple[types.UnregistrationParams | None, types.RegistrationParams | None]:
        """What to ask the client so that it watches what `config` needs: the registration it holds withdrawn, and a
        new one made; neither when it watches that already."""
        wanted = watchers(config)
        if self.held is not None and self.held[1] == wanted:
            return None, None
        withdrawn = None
        if self.held is not None:
            held = types.Unregistration(id=self.held[0], method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
            withdrawn = types.UnregistrationParams(unregisterations=[held])
        self.held = f"flopkb-watched-files-{next(self._ids)}", wanted
        options = types.DidChangeWatchedFilesRegistrationOptions(watchers=wanted)
        made = types.Registration(
            id=self.held[0], method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
        )
        return withdrawn, types.RegistrationParams(registrations=[made])

"""Where the base's files are, in the client's words: the URIs the server sends, and the files its URIs name.

The base is checked in its resolved folder (`Config.root`), but the client
names files as it opened them: through a symlinked workspace folder (macOS
`/tmp`, a linked project folder), a file's URI under the resolved folder is
another document to it, with diagnostics of its own. So every URI sent is
the open document's own, or else built on the client's spelling of the root.
The open documents are mapped both ways as they open and close: a check
tells thousands of files at once, each looked up here on the message loop.
"""

from __future__ import annotations

import functools
from pathlib import Path

from pygls import uris


class Addresses:
    """The client's URIs of the files of the base at `root` (resolved), whose folder the client calls `spelled`."""

    def __init__(self, root: Path, spelled: Path) -> None:
        self.root = root
        self.spelled = spelled
        self._open: dict[str, str] = {}
        """The open documents' URIs, by root-relative path."""
        self._rel: dict[str, str | None] = {}
        """The root-relative paths of the open documents, by URI (None: not in the base)."""

    def relative(self, uri: str) -> str | None:
        """The root-relative path of a document, or None when it is not in the base."""
        if uri in self._rel:
            return self._rel[uri]
        return _relative(self.root, uri)

    def uri(self, rel: str) -> str:
        """The URI of a root-relative path: the client's own for an open document."""
        return self._open.get(rel) or root_uri(self.spelled, rel)

    def opened(self, uri: str) -> None:
        rel = self._rel[uri] = _relative(self.root, uri)
        if rel is not None:
            self._open[rel] = uri

    def closed(self, uri: str) -> None:
        rel = self._rel.pop(uri, None)
        if rel is not None and self._open.get(rel) == uri:
            del self._open[rel]
            for other, same in self._rel.items():  # the file open under another URI too
                if same == rel:
                    self._open[rel] = other


def spelled_root(root: Path, folder: Path | None) -> Path:
    """The client's spelling of the base's folder `root` (resolved): its workspace `folder` or a folder in it, when
    that is where `root` is; else `root`."""
    if folder is None:
        return root
    try:
        inside = root.relative_to(folder.resolve())
    except (OSError, RuntimeError, ValueError):  # not within it, or a symlink loop (RuntimeError before Python 3.13)
        return root
    return folder / inside


def _relative(root: Path, uri: str) -> str | None:
    path = uris.to_fs_path(uri)
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except (OSError, RuntimeError, ValueError):
        return None


@functools.lru_cache(maxsize=1 << 16)
def root_uri(root: Path, rel: str) -> str:
    """The URI of the path `rel` in the folder `root`. Kept: a check converts hundreds of related places
    a keystroke, and quoting a path is slow."""
    path = str(root / rel)
    return uris.from_fs_path(path) or Path(path).as_uri()

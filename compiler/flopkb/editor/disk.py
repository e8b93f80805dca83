"""The files on disk as the server last saw them: no walk of the records folder and no stat of every file a keystroke.

An editor that watches files tells the server which files changed on disk
(`workspace/didChangeWatchedFiles`, a save), so the listing of the records
folder and each file's stat are taken once and kept until it says so
(`forget`), or until a rescan is asked for (`forget` of everything: the
`flopkb.rescan` command). The load cache compares the kept stat with the one
it stored, as it would the disk's (`flopkb.pipeline.cache`). Without file
watching, the server reads the disk itself every check (`WorkTree`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

from flopkb.load.sources import FileSource


class Remembered:
    """A `FileSource` over `files` whose walks and stats are kept until forgotten."""

    def __init__(self, files: FileSource) -> None:
        self.files = files
        self._walks: dict[str, tuple[list[str], list[tuple[str, str]]]] = {}
        self._stats: dict[str, os.stat_result] = {}
        self._forgotten = 0
        """Counts `forget`s: a stat taken while one ran is not kept (it may be from before the change)."""
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[Remembered], tuple[FileSource]]:
        """A parse worker's copy (`flopkb.pipeline.compile.read_sources`) remembers nothing yet: only this process is
        told of changes."""
        return Remembered, (self.files,)

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        with self._lock:
            found, forgotten = self._walks.get(folder), self._forgotten
        if found is None:
            found = self.files.walk(folder)
            with self._lock:
                if forgotten == self._forgotten:
                    self._walks[folder] = found
        return list(found[0]), list(found[1])

    def read(self, rel: str) -> bytes:
        return self.files.read(rel)

    def read_stat(self, rel: str) -> tuple[bytes, os.stat_result | None]:
        return self.files.read_stat(rel)  # the disk's stat as the bytes were read, not the one kept

    def exists(self, rel: str) -> bool:
        return self.files.exists(rel)

    def stat(self, rel: str) -> os.stat_result | None:
        with self._lock:
            found, forgotten = self._stats.get(rel), self._forgotten
        if found is None:
            found = self.files.stat(rel)  # OSError when the file is not there: not kept
            with self._lock:
                if found is not None and forgotten == self._forgotten:
                    self._stats[rel] = found
        return found

    def digest(self, rel: str) -> bytes | None:
        return self.files.digest(rel)

    def forget(self, changed: Iterable[str] | None = None) -> None:
        """The files at `changed` (root-relative; None: every file) may have changed, been created or removed; a path
        may be a folder's (deleted, or renamed to or from): then every file under it."""
        with self._lock:
            self._forgotten += 1
            self._walks.clear()
            if changed is None:
                self._stats.clear()
                return
            changed = list(changed)
            for rel in changed:
                self._stats.pop(rel, None)
            folders = tuple(f"{rel.rstrip('/')}/" for rel in changed)
            for rel in [rel for rel in self._stats if rel.startswith(folders)]:
                del self._stats[rel]

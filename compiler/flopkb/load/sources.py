"""Where a base's file contents come from: the work tree, open editor buffers over it, or a git tree.

The pipeline reads every file of a base (its records and its vocabulary)
through one `FileSource`: paths relative to the base's root, '/'-separated,
with their bytes. Three sources implement it, each in a few lines over the
same rules (regular files only, never more than the size limit):

- `WorkTree`: the files on disk (`flopkb check`, `build`, `serve`);
- `Overlay`: another source with some files' bytes replaced or added, as an
  editor's unsaved buffers lie over the disk (`flopkb lsp`);
- `GitTree`: the files of a commit, read through one long-lived
  `git cat-file --batch` process, without a checkout (`flopkb diff`).

Everything downstream, the load cache included (it is keyed by the content's
digest), is the same whichever source the files came from.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Protocol

from flopkb.load.files import MAX_FILE_BYTES, Unreadable, read_bytes

RECORD_SUFFIXES = (".yaml", ".yml")


class FileSource(Protocol):
    """The files of one base, by path relative to its root."""

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        """Every record file under `folder` (sorted paths), and the folders that could not be read, with why."""
        ...

    def read(self, rel: str) -> bytes:
        """The file's bytes; `Unreadable`, with why in an author's words, when it cannot be a record file."""
        ...

    def exists(self, rel: str) -> bool: ...

    def stat(self, rel: str) -> os.stat_result | None:
        """The file's stat on disk, when its bytes are the disk's; None when only reading the bytes tells (a buffer,
        a blob). `OSError` when the file is not on disk."""
        ...


class WorkTree:
    """The files on disk under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        found: list[str] = []
        unreadable: list[tuple[str, str]] = []
        start = self.root / folder

        def failed(error: OSError) -> None:
            unreadable.append((Path(error.filename).relative_to(self.root).as_posix(), error.strerror or str(error)))

        for path, _, names in os.walk(start, onerror=failed):
            prefix = Path(path).relative_to(self.root).as_posix()
            found.extend(f"{prefix}/{name}" for name in names if name.endswith(RECORD_SUFFIXES))
        return sorted(found), unreadable

    def read(self, rel: str) -> bytes:
        return read_bytes(f"{self.root}/{rel}")  # not pathlib: half the cost of reading 10,000 small files

    def exists(self, rel: str) -> bool:
        return os.path.exists(f"{self.root}/{rel}")

    def stat(self, rel: str) -> os.stat_result | None:
        return os.stat(f"{self.root}/{rel}")


class Overlay:
    """`base` with the bytes of some files replaced or added (an editor's open buffers)."""

    def __init__(self, base: FileSource, buffers: Mapping[str, bytes]) -> None:
        self.base = base
        self.buffers = dict(buffers)

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        found, unreadable = self.base.walk(folder)
        prefix = f"{folder.rstrip('/')}/"
        added = [rel for rel in self.buffers if rel.startswith(prefix) and rel.endswith(RECORD_SUFFIXES)]
        return sorted({*found, *added}), unreadable

    def read(self, rel: str) -> bytes:
        buffer = self.buffers.get(rel)
        if buffer is None:
            return self.base.read(rel)
        if len(buffer) > MAX_FILE_BYTES:
            raise Unreadable(
                f"the file has more than {MAX_FILE_BYTES:,} bytes; records are limited to {MAX_FILE_BYTES:,}"
            )
        return buffer

    def exists(self, rel: str) -> bool:
        return rel in self.buffers or self.base.exists(rel)

    def stat(self, rel: str) -> os.stat_result | None:
        return None if rel in self.buffers else self.base.stat(rel)


class GitError(Exception):
    """git could not give what was asked (not a repository, an unknown revision): the command cannot run."""


class GitTree:
    """The files of one commit's tree, under `prefix` (the base's root inside the repository), read from git objects.

    The tree is listed once; blobs are read on demand through one
    `git cat-file --batch` process, started when first needed (and again in a
    worker process that received this source pickled).
    """

    def __init__(self, repository: Path, commit: str, prefix: str = "") -> None:
        self.repository = repository
        self.commit = commit
        self.prefix = prefix.strip("/")
        self._blobs = _list_tree(repository, commit, self.prefix)
        self._reader: _BlobReader | None = None

    def __getstate__(self) -> dict[str, object]:
        return {"repository": self.repository, "commit": self.commit, "prefix": self.prefix, "_blobs": self._blobs}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._reader = None

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        prefix = f"{folder.rstrip('/')}/"
        return sorted(rel for rel in self._blobs if rel.startswith(prefix) and rel.endswith(RECORD_SUFFIXES)), []

    def read(self, rel: str) -> bytes:
        blob = self._blobs.get(rel)
        if blob is None:
            raise Unreadable(f"the file is not in the tree of {self.commit}")
        mode, oid = blob
        if mode == "120000":
            raise Unreadable("a symbolic link is not a record file; records are regular files")
        if mode not in ("100644", "100755"):
            raise Unreadable("a submodule is not a record file; records are regular files")
        if self._reader is None:
            self._reader = _BlobReader(self.repository)
        return self._reader.read(oid)

    def exists(self, rel: str) -> bool:
        return rel in self._blobs

    def stat(self, rel: str) -> os.stat_result | None:
        return None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _too_large() -> Unreadable:
    return Unreadable(f"the file has more than {MAX_FILE_BYTES:,} bytes; records are limited to {MAX_FILE_BYTES:,}")


def git(repository: Path, *arguments: str) -> str:
    """What `git arguments` prints in `repository`; `GitError` with git's own words when it fails."""
    try:
        done = subprocess.run(
            ["git", *arguments], cwd=repository, capture_output=True, check=False, stdin=subprocess.DEVNULL
        )
    except OSError as error:
        raise GitError(f"git cannot be run: {error.strerror}") from error
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(said[-1] if said else f"git {' '.join(arguments)} failed")
    return done.stdout.decode("utf-8", "surrogateescape")


def _list_tree(repository: Path, commit: str, prefix: str) -> dict[str, tuple[str, str]]:
    """Every blob of `commit` under `prefix`: its path relative to the prefix, with its mode and object id."""
    listed = git(repository, "ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix or ".")
    blobs: dict[str, tuple[str, str]] = {}
    cut = len(prefix) + 1 if prefix else 0
    for line in listed.split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, _, oid = meta.split(" ")
        blobs[path[cut:]] = (mode, oid)
    return blobs


class _BlobReader:
    """One `git cat-file --batch` process: object ids in, contents out, never more than the size limit kept."""

    def __init__(self, repository: Path) -> None:
        self._process = subprocess.Popen(
            ["git", "cat-file", "--batch"], cwd=repository, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def read(self, oid: str) -> bytes:
        stdin, stdout = self._pipes()
        stdin.write(f"{oid}\n".encode())
        stdin.flush()
        header = stdout.readline().decode().split()
        if len(header) != 3:
            raise Unreadable(f"git has no object {oid}")
        size = int(header[2])
        if size > MAX_FILE_BYTES:
            _discard(stdout, size + 1)
            raise Unreadable(
                f"the file has more than {MAX_FILE_BYTES:,} bytes; records are limited to {MAX_FILE_BYTES:,}"
            )
        content = stdout.read(size)
        stdout.read(1)  # the newline after each object
        return content

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self._process.stdin is not None and self._process.stdout is not None
        return self._process.stdin, self._process.stdout

    def close(self) -> None:
        stdin, stdout = self._pipes()
        stdin.close()
        stdout.close()
        self._process.wait()


def _discard(stream: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = stream.read(min(size, 1 << 16))
        if not chunk:
            return
        size -= len(chunk)

"""A commit's records laid out in a temporary folder, from git objects: no checkout, the work tree untouched.

The files of the knowledge base (its records folder, its vocabulary and its
`pyproject.toml`) are listed with one `git ls-tree` and read with one
`git cat-file --batch`; a blob already read for the other side is not read
again. The pipeline then loads the folder through the shared load cache
(`flopkb.pipeline.cache.FileCache`), keyed by content: a file whose bytes
are those of a file already loaded is not parsed again.

Only regular files are written. A symlink or a submodule in the commit is
left out (following a link out of a commit would read whatever the machine
holds there); a blob over the record size limit is written as a sparse file
of that size plus one byte, so that loading reports it as the work tree's
check would, without reading it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from flopkb.load.files import MAX_FILE_BYTES
from flopkb.review.git import Git, GitError

_REGULAR = ("100644", "100755")


class TreeReader:
    """Writes commits' knowledge-base files into folders, reading each blob once."""

    def __init__(self, git: Git, prefix: str, paths: list[str]) -> None:
        self.git = git
        self.prefix = prefix
        """The knowledge base's folder relative to the repository's top ('' at the top), '/'-terminated."""
        self.paths = paths
        """What to read, relative to the knowledge base: its records folder, vocabulary and pyproject.toml."""
        self._blobs: dict[str, bytes | int] = {}
        """Each blob's bytes, or its size when it is over the record size limit (not read)."""

    def write(self, sha: str, folder: Path) -> None:
        """Write the knowledge-base files of commit `sha` into `folder`."""
        listed = self.git.run("ls-tree", "-r", "-z", "--full-tree", sha, "--", *(self.prefix + p for p in self.paths))
        files: dict[str, str] = {}
        for item in listed.split("\0"):
            if not item:
                continue
            meta, _, path = item.partition("\t")
            mode, kind, blob = meta.split(" ")
            if kind == "blob" and mode in _REGULAR and path.startswith(self.prefix):
                files[path[len(self.prefix) :]] = blob
        self._read_blobs([blob for blob in dict.fromkeys(files.values()) if blob not in self._blobs])
        for rel, blob in files.items():
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            content = self._blobs[blob]
            with open(target, "wb") as stream:
                if isinstance(content, bytes):
                    stream.write(content)
                else:
                    stream.truncate(MAX_FILE_BYTES + 1)

    def _read_blobs(self, blobs: list[str]) -> None:
        if not blobs:
            return
        sizes = self._sizes(blobs)
        small = [blob for blob in blobs if sizes[blob] <= MAX_FILE_BYTES]
        for blob in blobs:
            if sizes[blob] > MAX_FILE_BYTES:
                self._blobs[blob] = sizes[blob]
        out = self._cat(["--batch"], small)
        offset = 0
        for blob in small:
            end = out.index(b"\n", offset)
            header = out[offset:end].split(b" ")
            size = int(header[2])
            self._blobs[blob] = out[end + 1 : end + 1 + size]
            offset = end + 1 + size + 1

    def _sizes(self, blobs: list[str]) -> dict[str, int]:
        out = self._cat(["--batch-check"], blobs)
        sizes = {}
        for blob, line in zip(blobs, out.decode().splitlines(), strict=True):
            sizes[blob] = int(line.split(" ")[2])
        return sizes

    def _cat(self, options: list[str], blobs: list[str]) -> bytes:
        done = subprocess.run(
            ["git", "-C", str(self.git.root), "cat-file", *options],
            input="".join(f"{blob}\n" for blob in blobs).encode(),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise GitError(f"git cat-file failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout


def prefix_of(git: Git, root: Path) -> str:
    """The knowledge base's folder relative to the repository's top, '/'-terminated ('' at the top)."""
    relative = os.path.relpath(root.resolve(), git.top.resolve())
    return "" if relative == "." else Path(relative).as_posix() + "/"

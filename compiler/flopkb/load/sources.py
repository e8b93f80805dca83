"""Where a base's file contents come from: the work tree, open editor buffers over it, or a git tree.

The pipeline reads every file of a base (its records and its vocabulary)
through one `FileSource`: paths relative to the base's root, '/'-separated,
with their bytes. Four sources implement it, each in a few lines over the
same rules (regular files only, never more than the size limit):

- `WorkTree`: the files on disk (`flopkb check`, `build`, `serve`);
- `Overlay`: another source with some files' bytes replaced or added, as an
  editor's unsaved buffers lie over the disk (`flopkb lsp`);
- `GitTree`: the files of a commit, read from git objects in one pipelined
  `git cat-file --batch` pass, without a checkout (`flopkb diff`); a file's
  stat is its blob's object id;
- `Prefetched`: another source with some files' bytes already read, each
  handed out once (the load cache reads a file to hash it, then loads it
  from those bytes).

Everything downstream, the load cache included (it is keyed by the content's
digest), is the same whichever source the files came from.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, NamedTuple, Protocol

from flopkb.load.files import MAX_FILE_BYTES, Unreadable, read_bytes, read_in_base, read_stat_in_base

RECORD_SUFFIXES = (".yaml", ".yml")


class FileSource(Protocol):
    """The files of one base, by path relative to its root."""

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        """Every record file under `folder` (sorted paths), and the folders that could not be read, with why."""
        ...

    def read(self, rel: str) -> bytes:
        """The file's bytes; `Unreadable`, with why in an author's words, when it cannot be a record file."""
        ...

    def read_stat(self, rel: str) -> tuple[bytes, os.stat_result | None]:
        """The file's bytes, as `read` gives them, and the stat of the file on disk they were read from, taken before
        they were read (`fstat` of the open file); None when no file on disk holds them (a buffer, a blob)."""
        ...

    def exists(self, rel: str) -> bool: ...

    def stat(self, rel: str) -> os.stat_result | None:
        """The file's stat on disk, when its bytes are the disk's (a blob's: its object id, see `GitTree`); None when
        only reading the bytes tells (a buffer). `OSError` when the file is not there."""
        ...

    def digest(self, rel: str) -> bytes | None:
        """The file's `content_digest` when it is known without reading the file (a git blob's: its object id); None
        when only reading the bytes tells."""
        ...


class WorkTree:
    """The files on disk under `root`; a symlink among them is read only where it leads into the folder it is in, of
    `folders` (the records', the vocabulary's: `flopkb.load.files`)."""

    def __init__(self, root: Path, folders: tuple[str, ...] = ("records", "schema")) -> None:
        self.root = root
        self.folders = folders

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
        return read_in_base(str(self.root), rel, self.folders)

    def read_stat(self, rel: str) -> tuple[bytes, os.stat_result | None]:
        return read_stat_in_base(str(self.root), rel, self.folders)

    def exists(self, rel: str) -> bool:
        return os.path.exists(f"{self.root}/{rel}")

    def stat(self, rel: str) -> os.stat_result | None:
        return os.stat(f"{self.root}/{rel}")

    def digest(self, rel: str) -> bytes | None:
        return None


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
            raise _too_large()
        return buffer

    def read_stat(self, rel: str) -> tuple[bytes, os.stat_result | None]:
        return (self.read(rel), None) if rel in self.buffers else self.base.read_stat(rel)

    def exists(self, rel: str) -> bool:
        return rel in self.buffers or self.base.exists(rel)

    def stat(self, rel: str) -> os.stat_result | None:
        return None if rel in self.buffers else self.base.stat(rel)

    def digest(self, rel: str) -> bytes | None:
        return None if rel in self.buffers else self.base.digest(rel)


class Prefetched:
    """`base`, with the bytes of some files already read (by the load cache, to hash them): each is handed out once,
    so that a file is read once, and what is loaded is what was hashed. Sent to a parse worker without them (it reads
    from `base`)."""

    def __init__(self, base: FileSource, raws: dict[str, bytes]) -> None:
        self.base = base
        self.raws = raws

    def __reduce__(self) -> tuple[type[Prefetched], tuple[FileSource, dict[str, bytes]]]:
        return Prefetched, (self.base, {})

    def walk(self, folder: str) -> tuple[list[str], list[tuple[str, str]]]:
        return self.base.walk(folder)

    def read(self, rel: str) -> bytes:
        raw = self.raws.pop(rel, None)
        return self.base.read(rel) if raw is None else raw

    def read_stat(self, rel: str) -> tuple[bytes, os.stat_result | None]:
        raw = self.raws.pop(rel, None)
        return self.base.read_stat(rel) if raw is None else (raw, None)

    def exists(self, rel: str) -> bool:
        return self.base.exists(rel)

    def stat(self, rel: str) -> os.stat_result | None:
        return self.base.stat(rel)

    def digest(self, rel: str) -> bytes | None:
        return self.base.digest(rel)


class GitError(Exception):
    """git could not give what was asked (not a repository, an unknown revision): the command cannot run."""


class LookalikeRepository(GitError):
    """A folder where git would look for its repository holds the files of a git directory: git is not run."""


class GitTree:
    """The files of one commit's tree, under `prefix` (the base's root inside the repository), read from git objects.

    The tree is listed once (in full, or as its changes from another: `after`).
    Its first `ON_DEMAND` reads take one blob each (a base's vocabulary, the
    few files a diff compares before it compiles: no reason to read every file
    in this process, which a base parsed in worker processes never needs); the
    next takes every record file's blob at once: from the work
    tree's file at its path when that file's bytes hash to the blob's object
    id (as `git hash-object` would: then they are the blob, and reading a
    file costs a fraction of git inflating it from a pack), the others through one pipelined `git cat-file --batch` pass
    (object ids written by a thread while the contents stream back): one
    round trip per file would cost most of a large base's load. The blobs are
    kept until the tree is closed. A blob whose object id is in `known` is not fetched: its
    reader has it already (see `stat`), and reads it, if ever, on demand. A
    worker process that received this source pickled reads on demand only. A
    blob read on demand is also taken from the work tree's file when that is
    the blob, else asked of git.

    Hashing a work-tree file is what proves it is the commit's blob: the work
    tree may hold edits, or another commit. git's index could tell it from
    each file's stat, but not in a fresh clone (CI's), whose files are as
    recent as the index and so "racily clean": `git diff-index` hashes every
    one of them again, with git's slower collision-detecting SHA-1; and
    inflating every blob with `git cat-file` instead costs more still
    (docs/benchmarks.md, "The head from the base").

    A file's object id is its `content_digest` (`digest`), so the load cache
    takes a blob it saw before (in another commit of the same repository, or
    as a file of the work tree) back without reading it, and hashes no blob.
    In a SHA-256 repository, whose ids are not `content_digest`s, the object id
    is the file's stat instead, which the cache trusts as an unchanged stat on
    disk.
    """

    def __init__(
        self,
        repository: Path,
        commit: str,
        prefix: str = "",
        known: frozenset[str] = frozenset(),
        after: GitTree | None = None,
    ) -> None:
        """`after`: a tree of the same repository and prefix, already listed; this one is listed as its changes from
        it (`git diff-tree`), not in full (a diff's second side: most of a base's 10,000 files are the same)."""
        self.repository = repository
        self.commit = commit
        self.prefix = prefix.strip("/")
        self.changed: frozenset[str] | None = None
        """The paths whose blob (or mode) differs from `after`'s, when listed after it: added, removed or edited."""
        if after is None:
            self._blobs: dict[str, tuple[str, str]] = _list_tree(repository, commit, self.prefix)
        else:
            self._blobs, self.changed = _list_changes(repository, after.commit, after._blobs, commit, self.prefix)
        self._known = known
        self._fetched: dict[str, bytes | Unreadable] | None = None
        """The blobs read in one pass, by object id (None until that pass)."""
        self._early: dict[str, bytes] = {}
        """The blobs read one by one before the pass, by object id."""
        self._reader: _BlobReader | None = None

    def __getstate__(self) -> dict[str, object]:
        return {"repository": self.repository, "commit": self.commit, "prefix": self.prefix, "_blobs": self._blobs}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._known, self._fetched, self._early, self._reader = frozenset(), {}, {}, None

    @property
    def oids(self) -> set[str]:
        """The object ids of every blob in the tree."""
        return {oid for _, oid in self._blobs.values()}

    def blob(self, rel: str) -> tuple[str, str] | None:
        """The mode and object id of the blob at `rel`, or None."""
        return self._blobs.get(rel)

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
        if mode not in _REGULAR:
            raise Unreadable("a submodule is not a record file; records are regular files")
        if self._fetched is None and len(self._early) >= ON_DEMAND:
            self._fetched = self._fetch_all()
        found = (self._early if self._fetched is None else self._fetched).get(oid)
        if isinstance(found, Unreadable):
            raise found
        if found is not None:
            return found
        raw = self._from_work_tree(rel, oid)
        if raw is None:
            if self._reader is None:
                self._reader = _BlobReader(self.repository)
            raw = self._reader.read(oid)
        if self._fetched is None:
            self._early[oid] = raw
        return raw

    def read_stat(self, rel: str) -> tuple[bytes, os.stat_result | None]:
        return self.read(rel), None

    def exists(self, rel: str) -> bool:
        return rel in self._blobs

    def stat(self, rel: str) -> os.stat_result | None:
        blob = self._blobs.get(rel)
        if blob is None:
            raise FileNotFoundError(rel)
        # (mode, inode, device, links, uid, gid, size, atime, mtime, ctime): the 160-bit object id as the inode,
        # which no file on disk has; times of 0 are old enough to be trusted.
        fields = (0o100644, int(blob[1], 16), 0, 1, 0, 0, 0, 0, 0, 0)
        return os.stat_result(fields, {"st_mtime_ns": 0, "st_ctime_ns": 0})

    def digest(self, rel: str) -> bytes | None:
        mode, oid = self._blobs.get(rel, ("", ""))
        # a SHA-256 repository's ids are not `content_digest`s; what is not a regular file is read, to say why
        return bytes.fromhex(oid) if len(oid) == SHA1_DIGITS and mode in _REGULAR else None

    def close(self) -> None:
        self._fetched, self._early = None, {}
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _from_work_tree(self, rel: str, oid: str) -> bytes | None:
        """The bytes of the work tree's file at `rel` when they are the blob `oid` (they hash to it), else None."""
        try:
            raw = read_bytes(f"{self.repository}/{self.prefix}/{rel}" if self.prefix else f"{self.repository}/{rel}")
        except Unreadable:
            return None
        return raw if _object_id(raw, oid) == oid else None

    def _fetch_all(self) -> dict[str, bytes | Unreadable]:
        """Every record file's blob not `known`, by object id: from the work tree where its file is the blob, the
        others read in one pipelined pass."""
        early = self._early
        wanted = {
            rel: oid
            for rel, (mode, oid) in self._blobs.items()
            if rel.endswith(RECORD_SUFFIXES) and mode in _REGULAR and oid not in self._known and oid not in early
        }
        fetched: dict[str, bytes | Unreadable] = dict(early)
        for rel, oid in wanted.items():
            raw = self._from_work_tree(rel, oid)
            if raw is not None:
                fetched[oid] = raw
        oids = [oid for oid in dict.fromkeys(wanted.values()) if oid not in fetched]
        if not oids:
            return fetched
        # --buffer: git writes in large chunks instead of flushing after each object (all the ids are known).
        process = subprocess.Popen(
            git_command("cat-file", "--batch", "--buffer"),
            cwd=self.repository,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        def write() -> None:
            with stdin:
                stdin.write("".join(f"{oid}\n" for oid in oids).encode())

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            for oid in oids:
                try:
                    fetched[oid] = _next_blob(stdout, oid)
                except Unreadable as why:
                    fetched[oid] = why
        finally:
            stdout.close()
            writer.join()
            process.wait()
        return fetched


_REGULAR = ("100644", "100755")
ON_DEMAND = 32
"""Blobs a `GitTree` reads one by one before it reads the rest in one pass."""


SHA1_DIGITS = 40


_BOM = "\ufeff".encode()


class Witness(NamedTuple):
    """What reading a file told of the bytes a parsed `Source`'s text was decoded from (`flopkb.load.files.decode`), for
    the load cache to store the file's results under without reading it again (`flopkb.pipeline.cache`)."""

    stat: tuple[int, int, int, int] | None
    """(size, mtime_ns, ctime_ns, inode) of the file they were read from, taken before they were read (as
    `flopkb.pipeline.stats.Stat`); None when no file on disk holds them (`FileSource.read_stat`)."""
    bom: bool
    """Whether they began with a byte order mark (which the text does not keep)."""

    def digest(self, text: str) -> bytes:
        """The `content_digest` of the bytes, from the text decoded from them (UTF-8 decodes and encodes back
        exactly): taken by the cache's writer, once the check has answered, not by the check."""
        return content_digest(_BOM + text.encode() if self.bom else text.encode())


def witness(raw: bytes, status: os.stat_result | None) -> Witness:
    stat = None if status is None else (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
    return Witness(stat, raw.startswith(_BOM))


def content_digest(raw: bytes) -> bytes:
    """The digest of a file's bytes that the load cache keys it by: its git blob id (SHA-1 of `blob <size>\\0` and
    the bytes, as `git hash-object` gives it), so that a blob read from a commit needs no hashing (`GitTree.digest`).

    The same SHA-1 tells that a work-tree file is a commit's blob (`GitTree`): git's own trust in it.
    """
    digest = hashlib.sha1(b"blob %d\0" % len(raw))
    digest.update(raw)
    return digest.digest()


def _object_id(raw: bytes, like: str) -> str:
    """The object id git gives a blob of these bytes in the repository of `like`: SHA-1, or SHA-256 in a repository of
    64-digit ids."""
    if len(like) == SHA1_DIGITS:
        return content_digest(raw).hex()
    digest = hashlib.sha256(b"blob %d\0" % len(raw))
    digest.update(raw)
    return digest.hexdigest()


def _too_large() -> Unreadable:
    return Unreadable(f"the file has more than {MAX_FILE_BYTES:,} bytes; records are limited to {MAX_FILE_BYTES:,}")


_HARDENED = (
    *("-c", "safe.bareRepository=explicit"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "log.showSignature=false"),
)
"""Before every git command flopkb runs: a base's files are a pull request's, so nothing they hold may make git run a
program. `safe.bareRepository=explicit` keeps git from taking a committed folder that looks like a git directory
(`HEAD`, `config`, `objects/`, `refs/`; the base's own folder, or one above it) for the repository, whose `config`
would then be the pull request's (`log.showSignature` + `gpg.program`, `core.fsmonitor`, `core.pager`, ...: all run
programs). The other settings turn off, whatever the repository's or the user's configuration says, the programs
that the commands flopkb runs (`log`, `status`, `rev-parse`, `ls-tree`, `diff-tree`, `cat-file`, `merge-base`) could
start: the file-system monitor and the signature checker. (The pager runs only for a terminal, and git's output
here is a pipe; diff and text conversion drivers and external diffs run only for patches and diffs of contents,
which flopkb never asks for; hooks, never for these commands.)"""


def git_command(*arguments: str) -> list[str]:
    """The command line of `git arguments`, hardened (`_HARDENED`)."""
    return ["git", *_HARDENED, *arguments]


def _refuse_lookalike(repository: Path) -> None:
    """`GitError` when git, searching from `repository` for its repository, would first meet a folder that is itself
    a git directory (not a `.git`): a pull request can commit one (see `_HARDENED`). git 2.38 and later refuse it
    under `safe.bareRepository=explicit`; this is for older ones, which ignore that setting."""
    if os.environ.get("GIT_DIR"):
        return  # given by the user: git searches nothing
    where = repository.absolute()
    for folder in (where, *where.parents):
        if os.path.lexists(folder / ".git"):
            return
        if (folder / "HEAD").is_file() and ((folder / "commondir").is_file() or (folder / "objects").is_dir()):
            raise LookalikeRepository(
                f"{folder} holds the files of a git directory (HEAD, objects/): git is not run there, so that no file "
                "of the base is taken for the repository's configuration"
            )


def git(repository: Path, *arguments: str) -> str:
    """What `git arguments` prints in `repository`; `GitError` with git's own words when it fails."""
    _refuse_lookalike(repository)
    try:
        done = subprocess.run(
            git_command(*arguments), cwd=repository, capture_output=True, check=False, stdin=subprocess.DEVNULL
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
    cut = len(prefix) + 1 if prefix else 0
    return {path[cut:]: (mode, oid) for mode, oid, path in _LISTED.findall(listed)}


_LISTED = re.compile(r"([0-7]+) [a-z]+ ([0-9a-f]+)\t([^\0]*)\0")
"""One line of `git ls-tree -z`: mode, type, object id, tab, path."""


def _list_changes(
    repository: Path, before: str, listed: dict[str, tuple[str, str]], commit: str, prefix: str
) -> tuple[dict[str, tuple[str, str]], frozenset[str]]:
    """What `_list_tree` gives for `commit`, from what it gave for `before` (`listed`) and the blobs that differ; and
    the paths that differ."""
    changes = git(repository, "diff-tree", "-r", "-z", "--no-renames", before, commit, "--", prefix or ".")
    cut = len(prefix) + 1 if prefix else 0
    blobs = dict(listed)
    changed = []
    for mode, oid, path in _CHANGED.findall(changes):
        changed.append(path[cut:])
        if mode == _GONE:
            del blobs[path[cut:]]
        else:
            blobs[path[cut:]] = (mode, oid)
    return blobs, frozenset(changed)


_CHANGED = re.compile(r":[0-7]+ ([0-7]+) [0-9a-f]+ ([0-9a-f]+) [A-Z][0-9]*\0([^\0]*)\0")
"""One change of `git diff-tree -r -z --no-renames`: old and new mode, old and new object id, status, path (the new mode
and object id are kept)."""
_GONE = "000000"
"""The new mode of a path the commit removes."""


class _BlobReader:
    """One `git cat-file --batch` process: object ids in, contents out, never more than the size limit kept."""

    def __init__(self, repository: Path) -> None:
        self._process = subprocess.Popen(
            git_command("cat-file", "--batch"), cwd=repository, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def read(self, oid: str) -> bytes:
        stdin, stdout = self._pipes()
        stdin.write(f"{oid}\n".encode())
        stdin.flush()
        return _next_blob(stdout, oid)

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self._process.stdin is not None and self._process.stdout is not None
        return self._process.stdin, self._process.stdout

    def close(self) -> None:
        stdin, stdout = self._pipes()
        stdin.close()
        stdout.close()
        self._process.wait()


def _next_blob(stdout: IO[bytes], oid: str) -> bytes:
    """The next object `git cat-file --batch` writes; `Unreadable` when git has none, or it is over the limit."""
    header = stdout.readline().decode().split()
    if len(header) != 3:
        raise Unreadable(f"git has no object {oid}")
    size = int(header[2])
    if size > MAX_FILE_BYTES:
        _discard(stdout, size + 1)
        raise _too_large()
    content = stdout.read(size)
    stdout.read(1)  # the newline after each object
    return content


def _discard(stream: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = stream.read(min(size, 1 << 16))
        if not chunk:
            return
        size -= len(chunk)

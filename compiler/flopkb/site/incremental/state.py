"""What one build leaves for the next, so that the next renders and builds only what changed.

    state = BuildState.load(path, folders)   # None when absent, damaged, of another format or other folders
    ...
    state.save(path, folders)                # folders: the site's and docs folder's identities, after the swap

Beside the site (`build/site-state.json`, JSON: nothing is unpickled) a build
keeps:

- `render_base` and every record page's key and files (`flopkb.site.incremental.keys`):
  a record whose key is unchanged keeps its page and charts from the kept
  docs folder (`build/site-docs/`); with every record's fingerprint and the
  records each key read, so that the next build computes only the keys that
  can have changed;
- `mkdocs_base` (the mkdocs configuration, the theme's templates and
  versions, the sitemap date) and the digest of every file of the docs
  folder: while `mkdocs_base` is unchanged, mkdocs rebuilds only the pages
  whose markdown changed and takes the others' HTML from the previous site
  (`flopkb.site.incremental.partial`).

A build that has no usable state (the first one, or after the site or its
docs folder were removed) renders and builds everything: the same code with
nothing to keep. Kept files are hard links into a fresh folder, never
written in place, so the previous site stays whole until the new one is
swapped in. The state file is removed before the swap and written after it:
a build interrupted in between leaves no state, and the next build is full.
A state is trusted only whole (a checksum on its first line) and only for
the very folders it was written for (their device and inode, which a swap
changes): a folder replaced or restored since costs a full build, never a
wrong site. `flopkb serve` keeps it in memory between saves and writes it
when it stops (`flopkb.site.incremental.held`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from flopkb.atomic import write_atomically

FORMAT = 4

Identity = tuple[int, int]
"""A folder's device and inode: kept by a rename and by changes inside it, not by a swap for another folder."""


Folders = tuple[Identity | None, Identity | None]
"""The identities of the site folder and the kept docs folder."""


def identity(folder: Path) -> Identity | None:
    """The folder's identity, None when there is none to read."""
    try:
        found = os.stat(folder)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def folders_of(site: Path, docs: Path) -> Folders:
    return identity(site), identity(docs)


@dataclass(slots=True)
class BuildState:
    render_base: str = ""
    mkdocs_base: str = ""
    records: dict[str, tuple[str | None, list[str]]] = field(default_factory=dict)
    """Record id -> (the key its page was rendered under, the files of its page)."""
    docs: dict[str, str] = field(default_factory=dict)
    """Every file of the docs folder -> its digest."""
    pages: dict[str, str] = field(default_factory=dict)
    """Listing pages rendered under a key (`Site.keep`): file -> the key."""
    prints: dict[str, str | None] = field(default_factory=dict)
    """Every record's fingerprint (`flopkb.site.incremental.keys.fingerprint`)."""
    reads: dict[str, list[str]] = field(default_factory=dict)
    """Record id -> the other records its page's key read."""
    faces: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Record id -> (its content digest, its face: `flopkb.site.incremental.keys.face`)."""
    beyond: dict[str, list[str]] = field(default_factory=dict)
    """Record id -> the records of its `reads` that its key read more of than their face (none: not listed)."""

    @classmethod
    def load(cls, path: Path, folders: Folders) -> BuildState | None:
        """The state saved at `path` for these very folders (site, docs); None when it is absent, damaged, of
        another format or of other folders."""
        try:
            check, _, text = path.read_bytes().partition(b"\n")
            if check.decode("ascii") != _check(text):
                return None
            data = json.loads(text)
            if data.get("format") != FORMAT or None in folders or data["folders"] != _as_json(folders):
                return None
            records = {rid: (key, list(files)) for rid, (key, files) in data["records"].items()}
            return cls(
                str(data["render_base"]),
                str(data["mkdocs_base"]),
                records,
                dict(data["docs"]),
                dict(data["pages"]),
                dict(data["prints"]),
                dict(data["reads"]),
                {rid: (digest, face) for rid, (digest, face) in data["faces"].items()},
                {rid: list(others) for rid, others in data["beyond"].items()},
            )
        # A state is only ever a shortcut: whatever is wrong with it, the answer is a full build.
        except Exception:
            return None

    def save(self, path: Path, folders: Folders) -> None:
        """Write the state for the site and docs folders as they are now (`folders`: their identities)."""
        data = {
            "format": FORMAT,
            "folders": _as_json(folders),
            "render_base": self.render_base,
            "mkdocs_base": self.mkdocs_base,
            "records": {rid: [key, files] for rid, (key, files) in sorted(self.records.items())},
            "docs": dict(sorted(self.docs.items())),
            "pages": dict(sorted(self.pages.items())),
            "prints": dict(sorted(self.prints.items())),
            "reads": dict(sorted(self.reads.items())),
            "faces": dict(sorted(self.faces.items())),
            "beyond": dict(sorted(self.beyond.items())),
        }
        text = json.dumps(data, separators=(",", ":")).encode("utf-8")
        write_atomically(path, _check(text).encode("ascii") + b"\n" + text)


def _as_json(folders: Folders) -> list[list[int] | None]:
    return [list(folder) if folder else None for folder in folders]


def _check(text: bytes) -> str:
    """The checksum on a state file's first line: a file damaged anywhere is no state."""
    return hashlib.blake2b(text, digest_size=16).hexdigest()


@dataclass(slots=True)
class PageKeys:
    """Every record page's key, the records it read, and every record's fingerprint (`flopkb.site.incremental.keys`)."""

    keys: dict[str, str | None] = field(default_factory=dict)
    reads: dict[str, list[str]] = field(default_factory=dict)
    """Record id -> the other records its key read, sorted."""
    prints: dict[str, str | None] = field(default_factory=dict)
    """Record id -> its fingerprint (None when its digest or dependency key is not known)."""
    faces: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Record id -> (its content digest, its face)."""
    beyond: dict[str, list[str]] = field(default_factory=dict)
    """Record id -> the records it read more of than their face, sorted (none: not listed)."""
    computed: int = 0
    """How many keys were computed (the others were the previous build's)."""


def link_files(source: Path, target: Path, files: Iterable[str]) -> None:
    """Hard-link these files (relative paths) of `source` into `target`, making folders as needed."""
    made: set[Path] = set()
    for rel in files:
        dest = target / rel
        if dest.parent not in made:
            dest.parent.mkdir(parents=True, exist_ok=True)
            made.add(dest.parent)
        os.link(source / rel, dest)


def move_files(source: Path, target: Path, files: Iterable[str]) -> None:
    """Move these files (relative paths) of `source` over those of `target`, each by one atomic rename."""
    made: set[Path] = set()
    for rel in sorted(files):
        dest = target / rel
        if dest.parent not in made:
            dest.parent.mkdir(parents=True, exist_ok=True)
            made.add(dest.parent)
        os.replace(source / rel, dest)


def walk_files(root: Path, skip_folders: frozenset[str] = frozenset()) -> list[str]:
    """Every file under `root` (relative paths), but those under the top-level folders `skip_folders`."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".":
            dirs[:] = [name for name in dirs if name not in skip_folders]
        prefix = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        found.extend(prefix + name for name in names)
    return found


def link_missing(source: Path, target: Path, skip: set[str], skip_folders: frozenset[str] = frozenset()) -> int:
    """Hard-link every file of `source` that `target` lacks, except those in `skip` and under the top-level
    folders `skip_folders`; return how many."""
    missing = [rel for rel in walk_files(source, skip_folders) if rel not in skip and not os.path.lexists(target / rel)]
    link_files(source, target, missing)
    return len(missing)

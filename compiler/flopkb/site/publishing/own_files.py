"""The files of a base's `site/` folder that flopkb may publish: never what a symlink reaches outside `site/`.

A base's `site/assets/` is copied into every built site. A symlink committed
there (to `.git/config`, with its authorization header, or to
`/proc/self/environ`, with CI's secrets) would publish what it points at. So
symlinks are never followed out of `site/`: a symlinked file whose target
lies inside `site/` is copied as that file; any other symlink is left out,
and named (`links_out`) for a warning, or, under `site/overrides/` (read by
mkdocs itself, which would copy it), for a refusal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from flopkb.load.files import lands_inside


def publishable_files(folder: Path, site_root: Path) -> list[Path]:
    """The files under `folder`, sorted, without following a symlink out of `site_root`, nor a symlinked folder."""
    return sorted(path for path in _walk(folder) if not path.is_symlink() or _file_inside(path, site_root))


def links_out(folder: Path, site_root: Path) -> list[str]:
    """The symlinks under `folder` that lead out of `site_root` (or nowhere), as paths relative to `site_root`'s
    parent, with their targets."""
    return sorted(
        f"{path.relative_to(site_root.parent).as_posix()} -> {os.readlink(path)}"
        for path in _walk(folder, with_folders=True)
        if path.is_symlink() and not _file_inside(path, site_root)
    )


def _walk(folder: Path, with_folders: bool = False) -> Iterator[Path]:
    """Every file (and folder) under `folder`, symlinks included, none followed (os.walk follows no symlinked
    folder)."""
    for current, folders, files in os.walk(folder):
        for name in (*files, *folders) if with_folders else files:
            yield Path(current) / name


def _file_inside(link: Path, site_root: Path) -> bool:
    """Whether the symlink `link` leads to a file in `site_root` (not to a folder, nor nowhere: dangling, a loop)."""
    return link.is_file() and lands_inside(link, site_root)

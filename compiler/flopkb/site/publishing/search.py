"""The site's search: a pagefind index of the built HTML, written into the site after mkdocs.

    from flopkb.site.publishing.search import index_site
    index_site("build/site")           # writes build/site/pagefind/

Material's own search sends every reader the whole index of every page (48 MB
at 10,000 records) before the first result. Pagefind splits the index into
compressed chunks by word: a first search fetches the chunks of the words
typed, then one small fragment per result shown. The indexer is a binary
shipped inside the `pagefind-bin` wheel (`pagefind[bin]`) and located by the
`pagefind` package (which also honours $PAGEFIND_BINARY_PATH); it reads only
the site folder and downloads nothing. It also writes the UI the theme
override (`site/overrides/main.html`) loads from `pagefind/`, so the search
box comes from the site itself.

What is indexed: the part of each page marked `data-pagefind-body` (the
theme override wraps each page's content in it, so pages of Material's own,
such as 404.html, are left out), without the elements below (the
listings marked `data-search-exclude`, backlink lists, heading permalinks,
the TeX source of formulas, whose text form is indexed instead).

Deterministic: the same HTML gives the same index, byte for byte (file names
are content hashes; tested by building twice).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["BUNDLE", "EXCLUDE_SELECTORS", "SearchIndexError", "index_command", "index_site", "pagefind_executable"]

#: The folder of the index and its UI, inside the site.
BUNDLE = "pagefind"

#: Parts of the content that are not searched.
EXCLUDE_SELECTORS = (
    "[data-search-exclude]",
    ".flopkb-backlinks",
    ".headerlink",
    ".arithmatex",
)


class SearchIndexError(RuntimeError):
    """The search index could not be written (pagefind missing or failing)."""


def pagefind_executable() -> Path:
    """The indexer binary, as the `pagefind` package finds it."""
    from pagefind.service import get_executable

    found = get_executable()
    if found is None or not found.is_file():
        raise SearchIndexError("pagefind's indexer is not installed: python -m pip install 'pagefind[bin]'")
    return found


def index_command(site_dir: str | Path, output: str | Path | None = None, *, language: str = "en") -> list[str]:
    """The pagefind command that indexes `site_dir` into `output` (default: `<site_dir>/pagefind/`)."""
    where = ["--output-path", str(Path(output).resolve())] if output is not None else ["--output-subdir", BUNDLE]
    return [
        str(pagefind_executable()),
        "--site",
        str(Path(site_dir).resolve()),
        *where,
        "--keep-index-url",
        "--force-language",
        language,
        "--exclude-selectors",
        ", ".join(EXCLUDE_SELECTORS),
    ]


def index_site(site_dir: str | Path, *, language: str = "en") -> None:
    """Index the built site in `site_dir` into `<site_dir>/pagefind/`."""
    done = subprocess.run(index_command(site_dir, language=language), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()
        raise SearchIndexError(f"pagefind failed (exit status {done.returncode}): {output}")

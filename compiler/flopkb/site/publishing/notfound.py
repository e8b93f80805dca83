"""The site's 404.html, made to work wherever the site is hosted.

mkdocs writes 404.html with root-absolute URLs (`/assets/...`): a host serves
that page for a missing URL at any depth, where relative URLs would not
resolve. The root is the path of `site_url` when it is set (`[tool.flopkb.site]
url`), which is then right under any sub-path; without it, mkdocs assumes `/`,
and a site under a sub-path (`https://host/kb/404.html`, or a folder served
with others) gets a 404 page without styles, scripts or working links.

Without a site URL, `relative_404()` turns those URLs into URLs relative to the
site's root folder, where 404.html lives: the page then works under any
sub-path, opened directly or from file://, and for the missing URLs of the
root folder. (For a host that serves 404.html for missing URLs deeper down,
set the site URL.)
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["relative_404"]

_ROOT_URL = re.compile(r'(\s(?:href|src)=")/(?!/)')
_BASE = '"base": "/"'


def relative_404(site_dir: str | Path) -> None:
    """Rewrite the root-absolute URLs of `<site_dir>/404.html` relative to the site's root (no-op without it)."""
    page = Path(site_dir) / "404.html"
    if not page.is_file():
        return
    html = page.read_text(encoding="utf-8")
    fixed = _ROOT_URL.sub(r"\1", html).replace(_BASE, '"base": "."')
    if fixed != html:
        page.write_text(fixed, encoding="utf-8")

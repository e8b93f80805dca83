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
root folder. For a host that serves 404.html for a missing URL deeper down, a
script at the top of the page finds the site's root before anything loads:
the nearest folder above the missing URL that holds the site's `sitemap.xml`
(which mkdocs writes at the root and nothing else can be named: HEAD
requests, nearest first), given to the page as its `<base>`.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["relative_404"]

_ROOT_URL = re.compile(r'(\s(?:href|src)=")/(?!/)')
_BASE = '"base": "/"'
_CHARSET = '<meta charset="utf-8">'
# Runs before any URL of the page is resolved (it writes a <base>): synchronous requests on purpose, at most one
# per folder of the missing URL, on a page no reader stays on.
FIND_ROOT = (
    "<script>(function(){var p=location.pathname;"
    r'if(location.protocol==="file:"||/\/404\.html$/.test(p))return;'
    'var parts=p.split("/").slice(0,-1);'
    "for(var i=parts.length;i>0;i--){"
    'var root=parts.slice(0,i).join("/")+"/",x=new XMLHttpRequest();'
    'try{x.open("HEAD",root+"sitemap.xml",false);x.send();}catch(e){return;}'
    "if(x.status===200){document.write('<base href=\"'+root.replace(/[\"<>]/g,encodeURIComponent)+'\">');return;}"
    "}})();</script>"
)


def relative_404(site_dir: str | Path) -> None:
    """Rewrite the root-absolute URLs of `<site_dir>/404.html` relative to the site's root (no-op without it)."""
    page = Path(site_dir) / "404.html"
    if not page.is_file():
        return
    html = page.read_text(encoding="utf-8")
    fixed = _ROOT_URL.sub(r"\1", html).replace(_BASE, '"base": "."').replace(_CHARSET, _CHARSET + FIND_ROOT, 1)
    if fixed != html:
        page.write_text(fixed, encoding="utf-8")

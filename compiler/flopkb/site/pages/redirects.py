"""Redirect pages: the old URL of every alias of a record leads to the record's page.

`flopkb mv` keeps a record's old id as an alias, so links written with it
still resolve; its old page URL (`records/<alias>.html`) gets a small page
that sends the reader on: a meta refresh, a canonical link (absolute when the
site URL is set) and a visible link for browsers that block the refresh. It is
one of the record's files, rendered with its page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import escape

if TYPE_CHECKING:
    from flopkb.site.pages.common import Site


def redirected_aliases(site: Site, record_id: str) -> list[str]:
    """The aliases of a record that get a redirect page: those that resolve to it (an alias two records claim, a
    `duplicate-id` when its code is turned down, belongs to the first, as for links; one that is also a record's id
    is that record's), so that no two records write one page. What they depend on is in every record page's key
    (`Resolver.signature`)."""
    resolver = site.resolver
    return [
        alias
        for alias in site.entries[record_id].summary.aliases
        if alias not in resolver.ids and resolver.aliases.get(alias) == record_id
    ]


def redirect_path(alias: str) -> str:
    """Where an alias's redirect page is written in the docs folder: the URL the record's page had under that id."""
    return f"records/{alias}.html"


def redirect_html(site: Site, alias: str, record_id: str) -> str:
    """The page at an alias's old URL, leading to the record `record_id`."""
    href = site.page(redirect_path(alias)).href(record_id)
    root = site.config.site.url
    canonical = f"{root.rstrip('/')}/records/{record_id}.html" if root else href
    title = escape(site.titles[record_id])
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title} (moved)</title>\n"
        f'<meta http-equiv="refresh" content="0; url={escape(href)}">\n'
        f'<link rel="canonical" href="{escape(canonical)}">\n'
        '<meta name="robots" content="noindex">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "</head>\n<body>\n"
        f'<p>This record is now at <a href="{escape(href)}">{title}</a> '
        f"(its id was <code>{escape(alias)}</code>).</p>\n"
        "</body>\n</html>\n"
    )

"""Markdown as GitHub renders a pull request comment, and what a reader sees of the HTML."""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

GFM = MarkdownIt("commonmark").enable(["table", "strikethrough"])
"""Close to what GitHub renders a comment with (GFM: tables, strikethrough; HTML kept)."""


class Seen(HTMLParser):
    """What a reader sees of rendered HTML: the tags, the cells of each table row, the text of each `<code>`."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.code: list[str] = []
        self._in_cell = self._in_code = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._in_cell = True
            self.rows[-1].append("")
        elif tag == "code":
            self._in_code = True
            self.code.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_code = self._in_code and tag != "code"
        if tag in ("td", "th"):
            self._in_cell = False
            self.rows[-1][-1] = self.rows[-1][-1].strip()

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.rows[-1][-1] += data
        if self._in_code:
            self.code[-1] += data

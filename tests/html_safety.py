"""Scan built HTML for anything a browser would run: scripts, event handlers, script URLs, active elements."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

SCRIPT_SCHEMES = re.compile(r"^(?:javascript|vbscript|data|livescript|mocha):", re.IGNORECASE)
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href", "poster", "background", "srcset", "ping"}
ACTIVE_TAGS = {"iframe", "object", "embed", "frame", "frameset", "applet", "base"}
_BLANKS = re.compile(r"[\x00-\x20\x7f]+")


class _Scanner(HTMLParser):
    def __init__(self, name: str) -> None:
        super().__init__(convert_charrefs=True)
        self.name = name
        self.problems: list[str] = []
        self._script: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        for key, value in attrs:
            if key.startswith("on"):
                self.problems.append(f"{self.name}: <{tag} {key}=...>")
            script_url = key in URL_ATTRIBUTES and value and SCRIPT_SCHEMES.match(_BLANKS.sub("", value))
            if script_url and not (tag == "img" and (value or "").startswith("data:image/")):
                self.problems.append(f"{self.name}: <{tag} {key}={value!r}>")
            if key == "style" and value and ("url(" in value.lower() or "expression" in value.lower()):
                self.problems.append(f"{self.name}: <{tag} style={value!r}>")
        if tag in ACTIVE_TAGS:
            self.problems.append(f"{self.name}: <{tag}> element")
        if tag == "meta" and (attributes.get("http-equiv") or "").lower() == "refresh":
            self.problems.append(f"{self.name}: <meta http-equiv=refresh>")
        if tag == "script":
            self._script = attributes
            self._text = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "script":
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag != "script" or self._script is None:
            return
        attributes, text = self._script, "".join(self._text)
        self._script = None
        kind = (attributes.get("type") or "").lower()
        if kind == "application/json":
            try:
                json.loads(text)
            except ValueError:
                self.problems.append(f"{self.name}: a JSON script that does not parse: {text[:80]!r}")
        elif attributes.get("src"):
            src = attributes["src"] or ""
            if "://" in src or src.startswith("//"):
                self.problems.append(f"{self.name}: a script from outside the site: {src}")
        elif "alert" in text or "flopkb-pwned" in text:
            self.problems.append(f"{self.name}: an inline script with record text: {text[:80]!r}")


def scan_html(text: str, name: str = "page") -> list[str]:
    scanner = _Scanner(name)
    scanner.feed(text)
    scanner.close()
    return scanner.problems


def scan_site(site: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted(site.rglob("*.html")):
        problems += scan_html(path.read_text(encoding="utf-8"), path.relative_to(site).as_posix())
    return problems

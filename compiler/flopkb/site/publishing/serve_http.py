"""What `flopkb serve` answers: a request checked for its Host and its path, then a file of the site or the site's 404.

The server is for the author's own browser on this machine, and it serves
the site and the base's diagnostics, so it answers as little as it can:

- Only requests that name a loopback host (`localhost`, `127.0.0.1`, `[::1]`
  or the address it is bound to) in their `Host` header get an answer; any
  other name gets 421. A web page on another site that makes its own name
  resolve to 127.0.0.1 (DNS rebinding) sends its own name there, so it
  cannot read the local site.
- A path is decoded strictly, and one holding a NUL or another control
  character, invalid percent-encoding or UTF-8, a `.` or `..` segment, a
  name longer than a file name can be or more than `MAX_PATH` bytes gets 400.
- Only files inside the site folder are sent: a symlink that leads out of it
  is not followed (404), and a folder is never listed (its `index.html`, or
  404).
- A missing file gets 404 with the site's own `404.html` (which finds the
  site's root itself, at any depth: `flopkb.site.publishing.notfound`).
- HEAD gets the headers GET would get, Content-Length included.
- The listen backlog holds a burst of connections (`Listener`): each is
  answered, none left to the client's retry timer.

Pages are sent with the reload script added (`inject`), never written to the
built site; `VERSION_PATH` tells the pages' poller the build's version and
state (`flopkb.site.publishing.serve`).
"""

from __future__ import annotations

import email.utils
import http.server
import json
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from flopkb.site.publishing.search import BUNDLE

__all__ = [
    "INDEX_ENTRY",
    "MAX_PATH",
    "RELOAD_SCRIPT",
    "VERSION_PATH",
    "BadRequest",
    "Found",
    "Listener",
    "handler",
    "host_allowed",
    "inject",
    "resolve",
]

VERSION_PATH = "/__flopkb__/version"
#: The file of the search index that pagefind's script fetches first, when a reader starts a search.
INDEX_ENTRY = "pagefind-entry.json"
POLL_MS = 200

RELOAD_SCRIPT = (
    "<script>/* flopkb serve: reload on rebuild (added by the server, not part of the site) */"
    "(function(){var seen=null,box=null;"
    # A reader's typing (a search) is never thrown away: while a text field holds text, the reload waits.
    "function typing(){var f=document.querySelectorAll('input,textarea');for(var i=0;i<f.length;i++){"
    "var e=f[i];if((e.tagName==='TEXTAREA'||/^(text|search)$/.test(e.type))&&e.value){return true}}return false}"
    "function banner(text){if(!box){box=document.createElement('pre');box.id='flopkb-serve-banner';"
    "box.style.cssText='position:fixed;z-index:1000;left:0;right:0;bottom:0;max-height:40vh;overflow:auto;margin:0;"
    "padding:.8em 1.2em;background:#cf222e;color:#fff;font:12px/1.5 monospace;white-space:pre-wrap';"
    "document.body.appendChild(box)}box.textContent=text}"
    "function poll(){fetch('" + VERSION_PATH + "',{cache:'no-store'}).then(function(r){return r.json()})"
    ".then(function(d){if(seen===null){seen=d.version}else if(d.version!==seen&&!typing()){location.reload();return}"
    "if(d.state!=='ok'){banner(d.message)}else if(box){box.remove();box=null}"
    "setTimeout(poll," + str(POLL_MS) + ")}).catch(function(){setTimeout(poll,1500)})}"
    "poll()})();</script>"
)

#: The longest URL path answered, in bytes once decoded; a site's own paths are far shorter.
MAX_PATH = 2048
#: The longest name of one path segment (a file name of most file systems).
MAX_NAME = 255

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "[::1]"})
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::[0-9]{1,5})?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BadRequest(Exception):
    """The request's path cannot name a file of the site (400)."""


@dataclass(frozen=True, slots=True)
class Found:
    """What a path names: a file to send, a folder URL to redirect to with a slash, or nothing (`file` None)."""

    file: Path | None = None
    redirect: str | None = None


def host_allowed(host: str | None, bound: str) -> bool:
    """Whether a `Host` header names this machine's loopback (with any port), or the address bound to."""
    if host is None:
        return False
    matched = _HOST.fullmatch(host.strip().lower())
    if matched is None:
        return False
    name = matched.group(1)
    bound = bound.lower()
    return name in _LOOPBACK or name in (bound, f"[{bound}]")


def resolve(site_dir: Path, target: str) -> Found:
    """The file of `site_dir` that a request target (`/path?query`) names; raises BadRequest for a bad path."""
    if not target.startswith("/"):
        raise BadRequest("the path must start with /")
    try:
        path = unquote(urlsplit(target).path, errors="strict")
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequest("the path is not valid percent-encoded UTF-8") from error
    if _CONTROL.search(path):
        raise BadRequest("the path holds a control character")
    if len(path.encode("utf-8")) > MAX_PATH:
        raise BadRequest(f"the path is longer than {MAX_PATH} bytes")
    names = path.split("/")[1:]
    if any(name in (".", "..") for name in names):
        raise BadRequest("the path has a . or .. segment")
    if any(len(name.encode("utf-8")) > MAX_NAME for name in names):
        raise BadRequest(f"a name in the path is longer than {MAX_NAME} bytes")
    root = os.path.realpath(site_dir)
    real = _inside(root, os.path.join(root, *(name for name in names if name)))
    if real is not None and os.path.isdir(real):
        if not path.endswith("/"):
            return Found(redirect=urlsplit(target).path + "/")
        real = _inside(root, os.path.join(real, "index.html"))
    return Found(file=Path(real)) if real is not None and os.path.isfile(real) else Found()


def _inside(root: str, path: str) -> str | None:
    """`path` with its symlinks resolved, if that is inside `root`."""
    real = os.path.realpath(path)
    return real if real == root or real.startswith(root + os.sep) else None


def inject(page: bytes) -> bytes:
    """The page with the reload script before `</body>` (or at the end)."""
    script = RELOAD_SCRIPT.encode("utf-8")
    index = page.rfind(b"</body>")
    return page[:index] + script + page[index:] if index >= 0 else page + script


class Listener(http.server.ThreadingHTTPServer):
    """The server socket: a thread per connection, and a backlog (the default is 5) for a burst of connections."""

    request_queue_size = 1024
    daemon_threads = True


def handler(
    site_dir: Path,
    version: Callable[[], dict[str, Any]],
    pages: threading.Lock,
    before_search: Callable[[], None] | None = None,
) -> type[http.server.BaseHTTPRequestHandler]:
    """The request handler of a site folder.

    `pages` is held while a page is read (`build(..., update=pages)`);
    `before_search` is called before the search index's entry file is sent
    (the server brings the index up to date there).
    """
    search_entry = f"/{BUNDLE}/{INDEX_ENTRY}"

    class Handler(http.server.SimpleHTTPRequestHandler):  # for its content types; it never lists nor translates
        answered = False

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def send_response(self, code: int, message: str | None = None) -> None:
            self.answered = True
            super().send_response(code, message)

        def end_headers(self) -> None:
            # Pages and the version are never cached; assets are revalidated (a 304 when
            # unchanged), so that a reload after a rebuild does not fetch KaTeX again.
            self.send_header("Cache-Control", "no-cache")
            super().end_headers()

        def do_GET(self) -> None:
            self._answer(body=True)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def _answer(self, body: bool) -> None:
            self.answered = False
            try:
                self._respond(body)
            except OSError:
                pass  # the reader went away, or a file of a rebuild did
            except Exception:
                if not self.answered:
                    self.send_error(500)

        def _respond(self, body: bool) -> None:
            address = self.server.server_address
            if not host_allowed(self.headers.get("Host"), str(address[0]) if isinstance(address, tuple) else ""):
                self.send_error(421, "flopkb serve answers requests for localhost only")
                return
            path = urlsplit(self.path).path
            if path == VERSION_PATH:
                self._send(200, "application/json", json.dumps(version()).encode("utf-8"), body)
                return
            if path == search_entry and before_search is not None:
                before_search()
            try:
                found = resolve(site_dir, self.path)
            except BadRequest as error:
                self.send_error(400, str(error))
                return
            if found.redirect is not None:
                self.send_response(301)
                self.send_header("Location", found.redirect)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif found.file is None:
                self._not_found(body)
            elif found.file.suffix == ".html":
                self._send(200, "text/html; charset=utf-8", inject(self._read_page(found.file)), body)
            else:
                self._send_file(found.file, body)

        def _read_page(self, page: Path) -> bytes:
            with pages:  # never half of a rebuild's pages
                return page.read_bytes()

        def _not_found(self, body: bool) -> None:
            try:
                page = self._read_page(site_dir / "404.html")
            except OSError:
                self.send_error(404)
                return
            self._send(404, "text/html; charset=utf-8", inject(page), body)

        def _send(self, status: int, content_type: str, content: bytes, body: bool) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)

        def _send_file(self, path: Path, body: bool) -> None:
            with open(path, "rb") as handle:
                stat = os.fstat(handle.fileno())
                since = self.headers.get("If-Modified-Since")
                if since and _not_modified(since, stat.st_mtime):
                    self.send_response(304)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(str(path)))
                self.send_header("Content-Length", str(stat.st_size))
                self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
                self.end_headers()
                if body:
                    shutil.copyfileobj(handle, self.wfile)

    return Handler


def _not_modified(since: str, mtime: float) -> bool:
    try:
        when = email.utils.parsedate_to_datetime(since)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    return when.tzinfo is not None and int(mtime) <= when.timestamp()

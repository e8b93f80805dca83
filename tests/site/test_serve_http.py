"""What `flopkb serve` answers, asked over a real socket: the project's site built by mkdocs, with serve's handler.

Each attack of issue 21 (a DNS-rebinding page, a folder listing, a symlink
out of the site, a NUL or over-long path dropped without an answer, a burst
of connections left in a backlog of 5, HEAD disagreeing with GET) and issue
19's bare 404 is asked here as a client would ask it.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import string
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.site.publishing.serve_http import MAX_PATH, VERSION_PATH, Listener, handler, host_allowed, inject
from site_fixtures import BuiltSite

RIDGE = "/records/facts/ridge-point.html"


@contextlib.contextmanager
def serving(site: Path) -> Iterator[int]:
    """Serve `site` with serve's own listener and handler; yield the port."""
    state = {"version": 3, "state": "refused", "message": "records/facts/x.yaml:3:1: error: a secret diagnostic"}
    server = Listener(("127.0.0.1", 0), handler(site, lambda: state, threading.Lock()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def site(project_site: BuiltSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project's site, with symlinks in it: to a file and a folder outside, and to a page inside."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("the CI token\n")
    copy = tmp_path_factory.mktemp("served") / "site"
    shutil.copytree(project_site.site, copy)
    (copy / "leak.txt").symlink_to(outside / "secret.txt")
    (copy / "leaks").symlink_to(outside)
    (copy / "records" / "same.html").symlink_to(copy / RIDGE.lstrip("/"))
    return copy


@pytest.fixture(scope="module")
def port(site: Path) -> Iterator[int]:
    with serving(site) as found:
        yield found


def raw(port: int, request: bytes, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are; the status, headers and body of the answer (status 0: the connection was dropped)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/"):
        return 0, {}, data
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def get(port: int, path: str, host: str | None = None, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    name = f"Host: {host}\r\n" if host is not None else ""
    return raw(port, f"{method} {path} HTTP/1.1\r\n{name}Connection: close\r\n\r\n".encode("latin-1"))


def local(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    return get(port, path, f"127.0.0.1:{port}", method)


# -- Host: DNS rebinding --------------------------------------------------------


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "LocalHost"])
def test_loopback_names_are_answered(port: int, host: str) -> None:
    status, _, body = get(port, RIDGE, f"{host}:{port}")
    assert status == 200 and b"<h1" in body
    assert get(port, RIDGE, host)[0] == 200  # without a port too


@pytest.mark.parametrize(
    "host", ["attacker.example", "127.0.0.1.attacker.example", "localhost.attacker.example", "0.0.0.0", "", None]
)
def test_a_rebinding_page_reads_neither_the_site_nor_the_diagnostics(port: int, host: str | None) -> None:
    for path in (RIDGE, VERSION_PATH, "/"):
        status, _, body = get(port, path, f"{host}:{port}" if host else host)
        assert status == 421, (host, path)
        assert b"secret diagnostic" not in body and b"md-header" not in body


@given(st.from_regex(r"[a-z0-9.-]{1,40}", fullmatch=True), st.integers(1, 65535))
def test_any_other_host_name_is_refused(name: str, port: int) -> None:
    allowed = name in ("localhost", "127.0.0.1")
    assert host_allowed(f"{name}:{port}", "127.0.0.1") is allowed
    assert host_allowed(name.upper(), "127.0.0.1") is allowed


# -- paths: listings, symlinks, bad paths -----------------------------------------


def test_a_folder_is_never_listed(port: int, site: Path) -> None:
    assert not (site / "assets" / "index.html").exists()
    status, _, body = local(port, "/assets/")
    assert status == 404 and body == local(port, "/nothing.html")[2]  # the site's 404, not a listing
    status, headers, _ = local(port, "/records")
    assert status == 301 and headers["Location"] == "/records/"


def test_symlinks_out_of_the_site_are_not_followed(port: int) -> None:
    for path in ("/leak.txt", "/leaks/secret.txt", "/leaks/"):
        status, _, body = local(port, path)
        assert status == 404 and b"CI token" not in body, path
    status, _, body = local(port, "/records/same.html")  # a symlink inside the site is a page of it
    assert status == 200 and b"<h1" in body


@pytest.mark.parametrize(
    "path",
    [
        "/records/a%00b.html",
        "/records/a\x00b.html",
        "/records/%ff%fe.html",
        "/records/a\x01.html",
        "/../../etc/passwd",
        "/records/%2e%2e/%2e%2e/etc/passwd",
        "/" + "a" * 300 + ".html",
        "/" + "records/" * (MAX_PATH // 8 + 1),
        "records/facts/ridge-point.html",
    ],
)
def test_a_bad_path_gets_400(port: int, path: str) -> None:
    status, _, body = local(port, path)
    assert status == 400, path
    assert b"root:" not in body


def test_a_request_line_past_the_servers_limit_gets_an_answer(port: int) -> None:
    status, _, _ = local(port, "/" + "a" * 70_000)
    assert status == 414


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300).filter(lambda b: b"\r" not in b and b"\n" not in b and b" " not in b))
def test_any_path_gets_an_answer(port: int, path: bytes) -> None:
    request = b"GET /" + path + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    status, _, _ = raw(port, request)
    assert status in (200, 301, 400, 404)


@given(st.text(string.ascii_letters + string.digits + "/._-%", max_size=60))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_head_is_get_without_the_body(port: int, path: str) -> None:
    check_head(port, "/" + path)


@pytest.mark.parametrize(
    "path", ["/", RIDGE, "/assets/stylesheets/flopkb.css", "/records/none.html", "/records", "/%00", VERSION_PATH]
)
def test_head_is_get_without_the_body_for_each_kind_of_answer(port: int, site: Path, path: str) -> None:
    check_head(port, path)


def check_head(port: int, path: str) -> None:
    got, got_headers, body = local(port, path)
    head, head_headers, nothing = local(port, path, "HEAD")
    assert head == got and nothing == b""
    assert {k: v for k, v in head_headers.items() if k != "Date"} == {
        k: v for k, v in got_headers.items() if k != "Date"
    }
    assert int(head_headers["Content-Length"]) == len(body)


# -- 404 --------------------------------------------------------------------------------------


def test_a_missing_url_gets_the_sites_own_404_at_any_depth(port: int, site: Path) -> None:
    own = (site / "404.html").read_bytes()
    for path in ("/nothing.html", "/records/facts/renamed.html", "/a/b/c/d/e"):
        status, headers, body = local(port, path)
        assert status == 404 and headers["Content-Type"].startswith("text/html")
        assert body == inject(own)  # the site's page, with the reload script


def test_a_missing_url_is_a_styled_page_in_a_browser(site: Path, page, page_log, shot) -> None:
    with serving(site) as port:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 800})
            response = page.goto(f"http://localhost:{port}/records/facts/deeper/renamed.html")
            assert response.status == 404
            page.wait_for_load_state("load")  # (never network-idle: the reload script polls)
            header = page.locator(".md-header")
            assert header.is_visible()
            assert header.evaluate("e => getComputedStyle(e).position") == "sticky"  # the theme's CSS applies
            tallest = page.evaluate("Math.max(...[...document.querySelectorAll('svg')].map(s => s.clientHeight))")
            assert 0 < tallest < 50  # icons, not the giant logo of an unstyled page
            home = page.evaluate("document.querySelector('.md-header__button.md-logo').href")
            assert home in (f"http://localhost:{port}/", f"http://localhost:{port}/index.html")
            shot(page, f"serve-404-{width}")
    assert page_log.page_errors == [] and page_log.external_requests == []
    assert page_log.failed_requests == []  # every stylesheet, script and image of the page was found


# -- backlog ----------------------------------------------------------------------------------


def test_a_burst_of_200_connections_is_all_answered(port: int) -> None:
    count = 200
    start = threading.Barrier(count)
    statuses: list[int] = []

    def ask() -> None:
        start.wait(timeout=30)
        with contextlib.suppress(OSError):
            statuses.append(raw(port, b"GET /nothing HTTP/1.1\r\nHost: localhost\r\n\r\n", timeout=10)[0])

    threads = [threading.Thread(target=ask) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses.count(404) == count

"""`flopkb lsp`'s start: the checker starts before the server's modules are imported.

pygls and lsprotocol take 0.6 s to import. The checker, made first (its
module and the server's import nothing of the pipeline), reads the
diagnostics the last check stored, and when they hold pushes them once the
client is initialized, before it imports the pipeline (0.5 s) and checks;
when none hold, it imports the pipeline, lists and stats the files, and
the parse workers parse while the server is imported (`flopkb.editor.checker`).
The server's modules are imported once it has done either (`until_underway`):
two imports in two threads contend for the interpreter, and cost more than
one after the other (0.81 s of CPU against 0.69 s, median of six runs each);
the reads and stats before the parse took 0.5 s beside the import at 10,000
records (0.08 s alone), each of their system calls waiting for the interpreter.
"""

from __future__ import annotations

import os
import sys

from flopkb.config import Config
from flopkb.editor.checker import Checker

UNDERWAY_SECONDS = 2.0
"""The longest wait for the checker's first check to begin loading before the server's modules are imported."""
SWITCH_SECONDS = 0.0005
"""How long a thread holds the interpreter while another waits for it (Python's default: 5 ms). A keystroke's answer
passes from thread to thread (the message loop, the wait for the edited buffer's check, that check), each waiting for
the full check running beside it to let go: 86 to 102 ms a keystroke at 10,000 records with the default, 23 ms with
this (`benchmarks/bench_lsp.py`, docs/benchmarks.md)."""


def serve_editor(config: Config | None, *, root_named: bool, port: int | None) -> None:
    """Serve over stdio, or on 127.0.0.1:`port`. `config`: the base flopkb was started in, or None when the client
    names it (its workspace folder); `root_named`: given by `--root`, so it is the base whatever the client names."""
    sys.setswitchinterval(SWITCH_SECONDS)
    started = Checker(config) if config is not None else None
    if started is not None:
        started.until_underway(UNDERWAY_SECONDS)
    from flopkb.editor.server import make_server

    server = make_server(config.root if root_named and config is not None else None, started)
    if port is None:
        # pygls's reader thread blocks reading stdin with its buffer's lock held; a parse worker forked meanwhile
        # (`flopkb.pipeline.compile.read_sources`) closes `sys.stdin` as it starts, and waited for that lock forever
        with open(os.devnull, encoding="utf-8") as null:
            stdin, sys.stdin = sys.stdin.buffer, null
            server.start_io(stdin)
    else:
        server.start_tcp("127.0.0.1", port)

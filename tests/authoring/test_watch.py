"""`flopkb check --watch`: the first check in full, then only what each save changed, until Ctrl-C."""

from __future__ import annotations

import io
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.authoring.watch import changes, watch
from flopkb.cli import main
from flopkb.config import load_config
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.reporters import Summary
from kbfixture import write_kb

TIMEOUT = 20.0
LINKS_TO = "id: flops/{name}\nkind: flop\ncategory: memory-bandwidth\ndescription: See [[flops/{target}]].\n"


def dangling(path: str, line: int, target: str) -> Diagnostic:
    return make("dangling-link", path, line, 5, f"[[{target}]] resolves to no record")


def test_changes_are_new_and_fixed_problems() -> None:
    kept, gone, added = dangling("a.yaml", 3, "x"), dangling("a.yaml", 4, "y"), dangling("b.yaml", 2, "z")
    assert changes([kept, gone], [kept, added]) == ([added], [gone])
    assert changes([], [kept]) == ([kept], [])
    assert changes([kept], [kept]) == ([], [])


def test_a_problem_that_only_moved_is_not_reported_again() -> None:
    assert changes([dangling("a.yaml", 3, "x")], [dangling("a.yaml", 9, "x")]) == ([], [])


def test_repeated_problems_are_counted() -> None:
    once, twice = [dangling("a.yaml", 3, "x")], [dangling("a.yaml", 3, "x"), dangling("a.yaml", 7, "x")]
    assert changes(once, twice) == ([twice[1]], [])
    assert changes(twice, once) == ([], [twice[1]])


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_watch_prints_what_each_save_changed(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/flops/a.yaml": LINKS_TO.format(name="a", target="b")})
    config = load_config(root)

    def check() -> tuple[list[Diagnostic], Summary]:
        kb = compile_knowledge_base(config, CHECK_STAGES)
        problems = [d for d in kb.diagnostics if d.code != "orphan"]
        return problems, Summary.of(problems, records=len(kb.entries))

    stream, stop = io.StringIO(), threading.Event()
    watcher = threading.Thread(
        target=watch, args=(check, [config.records_path], stream), kwargs={"stop_event": stop}, daemon=True
    )
    watcher.start()
    try:
        wait_for(lambda: "watching for changes" in stream.getvalue(), "the first check")
        first = stream.getvalue()
        assert "+ records/flops/a.yaml:4:18: error dangling-link: [[flops/b]] resolves to no record" in first
        assert "1 record: 1 error" in first
        (root / "records/flops/b.yaml").write_text(LINKS_TO.format(name="b", target="c"), encoding="utf-8")
        wait_for(lambda: stream.getvalue().count("watching for changes") >= 2, "the check after a save")
        second = stream.getvalue()[len(first) :]
        assert second.splitlines()[:2] == [
            "- records/flops/a.yaml:4:18: error dangling-link: [[flops/b]] resolves to no record",
            "-     hint: did you mean flops/a?",
        ]
        assert "+ records/flops/b.yaml:4:18: error dangling-link: [[flops/c]] resolves to no record" in second
        assert "checked again: 2 records: 1 error" in second
    finally:
        stop.set()
        watcher.join(TIMEOUT)
    assert not watcher.is_alive()


def _interruptible() -> None:
    """Ctrl-C in a terminal reaches a process whose SIGINT does what it does by default; one started in the
    background by a shell without job control (a CI runner's `cmd &`) inherits it ignored, and Python then never
    raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_check_watch_runs_until_ctrl_c(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/flops/a.yaml": LINKS_TO.format(name="a", target="a")})
    process = subprocess.Popen(
        [sys.executable, "-m", "flopkb", "check", "--watch", "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_interruptible,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()  # type: ignore[union-attr]

    def read_until(marker: str) -> list[str]:
        seen = []
        while True:
            line = lines.get(timeout=TIMEOUT)
            seen.append(line.rstrip("\n"))
            if marker in line:
                return seen

    try:
        assert read_until("watching for changes")[-1].endswith(
            "checked: 1 record: 0 errors, 1 warning; watching for changes (Ctrl-C to stop)"
        )
        (root / "records/flops/a.yaml").write_text(LINKS_TO.format(name="a", target="gone"), encoding="utf-8")
        assert (
            read_until("watching for changes")[0]
            == "+ records/flops/a.yaml:4:18: error dangling-link: [[flops/gone]] resolves to no record"
        )
        process.send_signal(signal.SIGINT)
        assert process.wait(TIMEOUT) == 0
        assert "stopped watching" in read_until("stopped watching")[-1]
    finally:
        process.kill()
        process.wait(TIMEOUT)
    folder = FileCache(load_config(root)).folder
    assert folder is not None and list(folder.glob("*.pickle"))


@pytest.mark.parametrize("output_format", ["json", "github", "sarif"])
def test_watch_prints_text_only(tmp_path: Path, output_format: str) -> None:
    root = write_kb(tmp_path, {})
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--watch", "--format", output_format])
    assert result.exit_code == 2 and "--watch prints text" in result.output

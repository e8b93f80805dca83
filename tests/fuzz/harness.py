"""Run `flopkb` on a knowledge base through its command line only, and check what every run must satisfy.

The runner forks: the child calls `flopkb.cli.main` as `python -m flopkb` would (real file descriptors,
strict UTF-8 standard streams), the parent waits at most `timeout` seconds and kills it after that (the
hang guard). A child limits its own address space, so a file that makes flopkb read without end ends in a
MemoryError (a traceback) rather than in a stalled machine. Nothing here imports flopkb's internals: the
harness must survive any change to the package's layout.

Lines are counted as git, `grep -n`, `wc -l` and GitHub's annotations count them: a line ends at `\\n`
(so `\\r\\n` ends one line), and nothing else ends a line: not a lone `\\r`, not U+0085, U+2028 or U+2029.
A final line without `\\n` is a line; the empty "line" after a final `\\n` is not. An empty file has one
line (line 1, column 1 is where its `not-a-record` belongs).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
EXIT_CODES = (0, 1, 2)
SEVERITIES = ("error", "warning")
DIAGNOSTIC_KEYS = {"code", "severity", "path", "line", "column", "message"}
MEMORY_HEADROOM = 2 << 30
"""Bytes of address space a forked run may take beyond its parent's."""
TRACEBACK = "Traceback (most recent call last)"
TIMEOUT = float(os.environ.get("FLOPKB_FUZZ_TIMEOUT", "10"))
"""The hang guard: seconds one `flopkb check` of a mutation of the base may take."""


@dataclass(frozen=True)
class Run:
    """What one command printed and how it ended; `exit_code` is None when the hang guard killed it."""

    args: tuple[str, ...]
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    seconds: float


@dataclass(frozen=True)
class Violation:
    """One broken invariant: `kind` names the failure class, `detail` says what was seen."""

    kind: str
    detail: str
    path: str | None = None
    """The file the violation is about, when it names one (a diagnostic's)."""

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


def copy_base(destination: Path, source: Path = REPOSITORY) -> Path:
    """A copy of the project's knowledge base (records/, schema/, pyproject.toml) at `destination`."""
    destination.mkdir(parents=True, exist_ok=True)
    for folder in ("records", "schema"):
        shutil.copytree(source / folder, destination / folder, dirs_exist_ok=True)
    shutil.copy2(source / "pyproject.toml", destination / "pyproject.toml")
    return destination


def record_files(root: Path) -> list[str]:
    """The root-relative paths of the base's record files, sorted."""
    return sorted(path.relative_to(root).as_posix() for path in (root / "records").rglob("*.y*ml"))


def warm_up(root: Path) -> None:
    """Import what `check` needs in this process, so that every forked run starts warm."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        from flopkb.cli import main

        main(["check", "--root", str(root), "--format", "json", "--no-cache"], standalone_mode=False)


def run_cli(args: Sequence[str], timeout: float, cwd: Path | None = None) -> Run:
    """`flopkb ARGS` in a forked child, killed after `timeout` seconds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(list(args), out.fileno(), err.fileno(), cwd)
        exit_code = _wait(pid, timeout)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Run(tuple(args), exit_code, out.read(), err.read(), seconds)


def _child(args: list[str], out: int, err: int, cwd: Path | None) -> None:
    code = 1
    try:
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdout = open(1, "w", encoding="utf-8", errors="strict", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        limit = _address_space() + MEMORY_HEADROOM
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if cwd is not None:
            os.chdir(cwd)
        code = _call_main(args)
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _address_space() -> int:
    """This process's virtual memory size in bytes."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _call_main(args: list[str]) -> int:
    from flopkb.cli import main

    try:
        main.main(args=args, prog_name="flopkb", standalone_mode=True)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # as the interpreter would: a traceback on stderr, status 1
        traceback.print_exc()
        return 1
    return 0


def run_process(args: Sequence[str], timeout: float, prefix: Sequence[str] = ()) -> Run:
    """`PREFIX python -m flopkb ARGS` as a new process (for what a fork cannot do: run under `setpriv`)."""
    start = time.monotonic()
    command = [*prefix, sys.executable, "-m", "flopkb", *args]
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as expired:
        return Run(tuple(args), None, expired.stdout or b"", expired.stderr or b"", time.monotonic() - start)
    return Run(tuple(args), done.returncode, done.stdout, done.stderr, time.monotonic() - start)


def _wait(pid: int, timeout: float) -> int | None:
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(handle)
    return os.waitstatus_to_exitcode(status) if ready else None


def check_json(root: Path, timeout: float, paths: Sequence[str] = ()) -> Run:
    """`flopkb check --root ROOT --format json --no-cache [PATH ...]`."""
    return run_cli(["check", "--root", str(root), "--format", "json", "--no-cache", *paths], timeout)


def violations(run: Run, root: Path) -> list[Violation]:
    """Every invariant that `run` (a `check --format json`) breaks, judged against the files now in `root`."""
    found = _process_violations(run)
    if run.exit_code is None:
        return found
    if not run.stdout.strip() and (run.exit_code == 2 or found):
        return found  # the command could not run (a message on stderr), or crashed: no report to judge
    document, problem = _parse_json(run.stdout)
    if problem is not None:
        return [*found, problem]
    found.extend(_shape_violations(document))
    if not found:
        found.extend(_content_violations(document, run.exit_code, root))
    return found


def _process_violations(run: Run) -> list[Violation]:
    found = []
    if run.exit_code is None:
        found.append(Violation("hang", f"no answer within {run.seconds:.1f} s"))
    elif run.exit_code not in EXIT_CODES:
        found.append(Violation("exit-code", f"exit status {run.exit_code}"))
    for name, stream in (("stdout", run.stdout), ("stderr", run.stderr)):
        text = stream.decode("utf-8", "replace")
        if TRACEBACK in text:
            found.append(Violation("traceback", f"{_exception_line(text)} (on {name})"))
    return found


def _exception_line(text: str) -> str:
    """The last line of a traceback (the exception's type and message) and the frame that raised it."""
    tail = text[text.rindex(TRACEBACK) :].rstrip().splitlines()
    frames = [line.strip() for line in tail if line.strip().startswith('File "')]
    where = re.sub(r'File ".*?([^/"]+)", line [0-9]+, in ', r"\1:", frames[-1]) if frames else "?"
    return f"{tail[-1][:300]} [in {where}]"


def _parse_json(stdout: bytes) -> tuple[object, Violation | None]:
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, Violation("invalid-json", f"output is not UTF-8: {error}")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        return None, Violation("invalid-json", f"{error}: {text[:200]!r}")
    if _has_lone_surrogate(document):
        return document, Violation("invalid-json", "a string holds a lone surrogate (\\udcxx): not Unicode")
    return document, None


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(character) <= 0xDFFF for character in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(key) or _has_lone_surrogate(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


def _shape_violations(document: object) -> list[Violation]:
    """The shape of docs/cli.md's `--format json` object."""
    if not isinstance(document, dict) or set(document) != {"diagnostics", "summary"}:
        return [Violation("json-shape", f"top level is not {{diagnostics, summary}}: {str(document)[:200]}")]
    summary, diagnostics = document["summary"], document["diagnostics"]
    found = []
    counts = ("records", "errors", "warnings")
    if not isinstance(summary, dict) or not all(isinstance(summary.get(key), int) for key in counts):
        found.append(Violation("json-shape", f"summary: {summary!r}"))
    if not isinstance(diagnostics, list):
        return [*found, Violation("json-shape", "diagnostics is not a list")]
    found.extend(Violation("json-shape", f"diagnostic {item!r}") for item in diagnostics if not _well_formed(item))
    return found


NOT_UTF8_BYTE = re.compile(r"\\x[0-9a-f]{2}")


def _well_formed(item: object) -> bool:
    if not isinstance(item, dict) or not DIAGNOSTIC_KEYS <= set(item) <= DIAGNOSTIC_KEYS | {"hint"}:
        return False
    texts = [item[key] for key in ("code", "path", "message")] + ([item["hint"]] if "hint" in item else [])
    numbers = [item["line"], item["column"]]
    return (
        all(isinstance(text, str) for text in texts)
        and all(isinstance(number, int) and not isinstance(number, bool) for number in numbers)
        and item["severity"] in SEVERITIES
        and "\\" not in NOT_UTF8_BYTE.sub("", item["path"])  # '/' separators; a byte of a non-UTF-8 name is \xHH
    )


def _content_violations(document: dict, exit_code: int, root: Path) -> list[Violation]:
    diagnostics = document["diagnostics"]
    found = [problem for item in diagnostics for problem in _position_violations(item, root)]
    found.extend(_order_violations(diagnostics))
    found.extend(_summary_violations(diagnostics, document["summary"], exit_code))
    return found


def _position_violations(item: dict, root: Path) -> Iterator[Violation]:
    where = f"{item['code']} at {item['path']}:{item['line']}:{item['column']}"
    if item["line"] < 1 or item["column"] < 1:
        yield Violation("position-below-one", where, item["path"])
        return
    data = _file_bytes(root, item["path"])
    if data is None:
        return
    lines = split_lines(data)
    if item["line"] > len(lines):
        yield Violation("line-past-end", f"{where}, but the file has {len(lines)} lines", item["path"])
        return
    width = len(lines[item["line"] - 1].decode("utf-8", "replace").removesuffix("\r"))
    if item["column"] > width + 1:
        yield Violation(
            "column-past-line-end", f"{where}, but line {item['line']} has {width} characters", item["path"]
        )


def _file_bytes(root: Path, path: str) -> bytes | None:
    target = root / path
    with contextlib.suppress(OSError, ValueError):
        if target.is_file():
            return target.read_bytes()
    return None


def split_lines(data: bytes) -> list[bytes]:
    """The file's lines as the module's docstring counts them (at least one)."""
    lines = data.split(b"\n")
    if len(lines) > 1 and lines[-1] == b"":
        lines.pop()
    return lines


def _order_violations(diagnostics: list[dict]) -> list[Violation]:
    keys = [(item["path"], item["line"], item["column"], item["code"]) for item in diagnostics]
    return (
        []
        if keys == sorted(keys)
        else [Violation("unsorted", "diagnostics are not sorted by path, line, column, code")]
    )


def _summary_violations(diagnostics: list[dict], summary: dict, exit_code: int) -> list[Violation]:
    errors = sum(item["severity"] == "error" for item in diagnostics)
    warnings = len(diagnostics) - errors
    internal = any(item["code"] == "internal-error" for item in diagnostics)
    found = []
    if (summary["errors"], summary["warnings"]) != (errors, warnings):
        found.append(Violation("summary", f"summary {summary} for {errors} errors and {warnings} warnings"))
    expected = 2 if internal else (1 if errors else 0)
    if exit_code != expected:
        found.append(Violation("exit-status-mismatch", f"exit {exit_code} with {errors} errors (expected {expected})"))
    return found


def signature(violation: Violation) -> str:
    """The failure class of a violation, for grouping: an exception's type and frame, a diagnostic's code."""
    detail = violation.detail
    if violation.kind == "traceback":
        detail = detail.split(":")[0] + " " + detail[detail.rindex("[in ") :].split("]")[0] + "]"
    elif violation.kind in ("line-past-end", "column-past-line-end", "position-below-one"):
        detail = detail.split(" at ")[0]
    return f"{violation.kind}: {re.sub(r'[0-9]+', 'N', detail)[:160]}"


def codes(run: Run) -> list[tuple[str, str, int, int]]:
    """(code, path, line, column) of every diagnostic of a well-formed `check --format json` run."""
    document = json.loads(run.stdout.decode("utf-8"))
    return [(item["code"], item["path"], item["line"], item["column"]) for item in document["diagnostics"]]


@contextlib.contextmanager
def swapped(root: Path, files: dict[str, bytes]) -> Iterator[None]:
    """`files` (root-relative path: content) written into the base for the block, then the base as it was."""
    originals = {rel: (root / rel).read_bytes() if (root / rel).exists() else None for rel in files}
    try:
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        yield
    finally:
        for rel, original in originals.items():
            if original is None:
                (root / rel).unlink()
            else:
                (root / rel).write_bytes(original)


def checked(root: Path, files: dict[str, bytes], timeout: float = TIMEOUT) -> tuple[Run, list[Violation]]:
    """`flopkb check --format json` of the base with `files` swapped in, and the invariants it breaks."""
    with swapped(root, files):
        run = check_json(root, timeout)
        return run, violations(run, root)


def assert_clean(root: Path, files: dict[str, bytes], timeout: float = TIMEOUT) -> Run:
    run, found = checked(root, files, timeout)
    assert not found, "\n".join(map(str, found)) + f"\nstderr: {run.stderr[-2000:].decode('utf-8', 'replace')}"
    return run

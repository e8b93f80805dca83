"""Benchmark `flopkb lsp` on a generated base: start, keystrokes, hover, completion, an accelerator edit, memory.

    python benchmarks/bench_lsp.py [--records 10000] [--keystrokes 30] [--root DIR] [--compiler DIR]
    python benchmarks/bench_lsp.py --start-rounds N [--against DIR ...] [--root DIR] [--compiler DIR]

One run of this script measures, against baselines taken in the same run
(the machine is shared and noisy: compare the ratios):

- start: `flopkb check --no-cache` (cold) and `flopkb check` with the cache
  it wrote (warm: the third check, once the detached writers of the two
  before it are done), against the server's start -> first diagnostics,
  without and then with that cache (and the diagnostics the checks stored
  with it: `flopkb.pipeline.verdict`); and start -> the first check's
  diagnostics with their related places (pushed after them:
  `flopkb.editor.checker`), until a workspace pull answers; in wall time,
  and in CPU (the check's, its parse workers' included, and the server's
  when its first diagnostics are in);
- start with a document opened (as an editor opens one as it starts the
  server, right after `initialize`), without a cache: to the first
  diagnostics, the document as on disk; and to the document's own
  diagnostics, a dangling link typed into it (the first check tells the open
  documents before its stages run: `flopkb.editor.checker`), in wall time and
  CPU against the cold check;
- keystroke: one character typed into a content record's description (an
  incremental `didChange`), until the server answers a pull of that
  document's diagnostics (the pull waits for the check of what was typed:
  the edited buffer's check first, `flopkb.editor.focus`, when it tells):
  median and p90 over the keystrokes, typed without a pause;
- hover on a formula and completion after `[[`: the request's round trip;
- accelerator: a spec value of an accelerator changed in its open buffer,
  until the diagnostics of every record that computes with it are out
  (a workspace pull, answered after the full check has pushed them);
- memory: the server's peak resident size (VmHWM) against `flopkb check`'s.

The client is pytest-lsp's, over stdio, as in the tests, with Neovim 0.9's
capabilities and file watching (the server then trusts the editor to tell
what changed on disk: `flopkb.editor.disk`). `--compiler` runs another
tree's flopkb (`--compiler /work/wt/before/compiler`: main, unchanged) with
this script, so that two trees are timed the same way. `--start-rounds N`
times only the start without a cache, N rounds of a cold check followed by
a start of `--compiler` and of each `--against` tree, as ratios to the
round's check: two trees' starts compared in the same rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

COMPILER = Path(__file__).resolve().parents[1] / "compiler"


def environment(cache_home: Path, compiler: Path) -> dict[str, str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(compiler), env.get("PYTHONPATH")]))
    return env


def check(root: Path, env: dict[str, str], *options: str) -> tuple[float, float]:
    """Seconds of wall time and of CPU (its parse workers' included) of one `flopkb check`."""
    used = _children_cpu()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "flopkb", "check", "--root", str(root), *options],
        stdout=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    return time.perf_counter() - start, _children_cpu() - used


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def writers_done(cache_home: Path) -> None:
    """Wait for the detached writers of the checks run so far (`flopkb.pipeline.cache_lock`: they hold the lock)."""
    for lock in cache_home.glob("flopkb/bases/*/check/.lock"):
        with lock.open("rb") as held:
            fcntl.flock(held, fcntl.LOCK_SH)


def process_cpu(pid: int) -> float:
    """Seconds of CPU of process `pid` so far, its threads' and its waited-for children's included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def start_server(root: Path, env: dict[str, str]) -> tuple[LanguageClient, float, float, float]:
    """A client with the server started and every diagnostic of the base in: (client, seconds to them, the server's
    CPU seconds to them, seconds to them with their related places)."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "flopkb", "lsp", "--root", str(root)], server_env=env
    )
    started = time.perf_counter()
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)  # the watchers: granted
    capabilities = client_capabilities("neovim@v0.9.1")
    assert capabilities.workspace is not None
    capabilities.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=True  # an editor that watches files (as VS Code does): the server trusts it
    )
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="kb")],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    first = time.perf_counter() - started
    assert client._server is not None
    cpu = process_cpu(client._server.pid)
    await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    return client, first, cpu, time.perf_counter() - started


async def stop_server(client: LanguageClient) -> int:
    """Shut the server down; its peak resident size in KiB."""
    assert client._server is not None
    status = Path(f"/proc/{client._server.pid}/status").read_text()
    peak = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    await client.shutdown_session()
    await client.stop()
    return peak


async def pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(report.items)


def did_change(client: LanguageClient, uri: str, version: int, line: int, character: int, text: str) -> None:
    position = types.Position(line=line, character=character)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(start=position, end=position), text=text)
            ],
        )
    )


def open_document(client: LanguageClient, path: Path) -> tuple[str, str]:
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text))
    )
    return uri, text


async def session(root: Path, env: dict[str, str], keystrokes: int) -> dict[str, object]:
    client, first, cpu, related = await start_server(root, env)
    figures: dict[str, object] = {
        "first diagnostics (warm)": first,
        "CPU to them (warm)": cpu,
        "with related places (warm)": related,
    }
    record = next(
        path
        for path in sorted((root / "records/kb").rglob("*.yaml"))
        if {"formulas:", "description: |"} <= set(path.read_text().split("\n"))
    )
    uri, text = open_document(client, record)
    await pull(client, uri)
    lines = text.split("\n")
    at = next(index for index, line in enumerate(lines) if line.startswith("description:")) + 1  # a block scalar
    latencies = []
    for version in range(2, keystrokes + 2):
        started = time.perf_counter()
        did_change(client, uri, version, at, 2, "x")
        await pull(client, uri)
        latencies.append(time.perf_counter() - started)
    figures["keystroke median"] = statistics.median(latencies)
    figures["keystroke p90"] = statistics.quantiles(latencies, n=10)[-1]
    formula_line = next(index for index, line in enumerate(lines) if line.strip().startswith("- id:") and index > at)
    did_change(client, uri, keystrokes + 2, at, 2, "[[")
    await pull(client, uri)
    hovers, completions = [], []
    for _ in range(10):
        started = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=formula_line, character=8))
        )
        hovers.append(time.perf_counter() - started)
        started = time.perf_counter()
        await client.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(line=at, character=4))
        )
        completions.append(time.perf_counter() - started)
    figures["hover median"] = statistics.median(hovers)
    figures["completion after [[ median"] = statistics.median(completions)
    figures["accelerator edit -> dependents"] = await accelerator_edit(client, root)
    figures["server peak KiB"] = await stop_server(client)
    return figures


async def accelerator_edit(client: LanguageClient, root: Path) -> float:
    """Seconds from an accelerator's bandwidth given in bytes (not bytes per second) in its open buffer to the
    diagnostics of every record that computes with it."""
    path = root / "records/hw/acc-000.yaml"
    uri, text = open_document(client, path)
    await pull(client, uri)
    lines = text.split("\n")
    line = next(index for index, value in enumerate(lines) if "memory_bandwidth" in value) + 1
    start = lines[line].index("TB/s")
    before = {key: list(items) for key, items in client.diagnostics.items()}
    started = time.perf_counter()
    position = types.Range(
        start=types.Position(line=line, character=start), end=types.Position(line=line, character=start + 4)
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=position, text="TB")],
        )
    )
    await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    # a workspace pull is answered after the full check, once every file's changed diagnostics were pushed
    elapsed = time.perf_counter() - started
    changed = [key for key, items in client.diagnostics.items() if before.get(key, []) != list(items)]
    print(f"  accelerator edit: the diagnostics of {len(changed)} files changed", file=sys.stderr)
    return elapsed


async def opened_start(root: Path, env: dict[str, str], typed: bool) -> tuple[float, float]:
    """Seconds from starting the server, a content record opened right after `initialize`, to the first diagnostics
    pushed (the record as on disk), or to the record's own (`typed`: a dangling link typed into it); the server's CPU
    seconds to them."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "flopkb", "lsp", "--root", str(root)], server_env=env
    )
    started = time.perf_counter()
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    capabilities = client_capabilities("neovim@v0.9.1")
    assert capabilities.workspace is not None
    capabilities.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=True
    )
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="kb")],
        )
    )
    path = next(path for path in sorted((root / "records/kb").rglob("*.yaml")) if "[[" in path.read_text())
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri,
                language_id="yaml",
                version=1,
                text=text.replace("[[", "[[kb/nowhere]] [[", 1) if typed else text,
            )
        )
    )
    while not (uri in client.diagnostics if typed else client.diagnostics):  # pushes may come several at once
        await asyncio.sleep(0.005)
    elapsed = time.perf_counter() - started
    assert client._server is not None
    cpu = process_cpu(client._server.pid)
    await stop_server(client)
    return elapsed, cpu


async def cold_start(root: Path, env: dict[str, str]) -> tuple[float, float, float]:
    client, first, cpu, related = await start_server(root, env)
    await stop_server(client)
    return first, cpu, related


def compare_starts(root: Path, work: Path, args: argparse.Namespace) -> None:
    """Rounds of a cold check (of `--compiler`), then a server start without a cache of each tree, in turn."""
    trees = [args.compiler.resolve(), *(tree.resolve() for tree in args.against)]
    ratios: dict[Path, list[float]] = {tree: [] for tree in trees}
    for round_number in range(args.start_rounds):
        cold, _ = check(root, environment(work / "cache", trees[0]), "--no-cache")
        for number, tree in enumerate(trees):
            env = environment(work / f"no-cache-{round_number}-{number}", tree)
            first, _, _ = asyncio.run(cold_start(root, env))
            ratios[tree].append(first / cold)
            print(f"round {round_number + 1}: cold check {cold:.2f} s; {tree}: {first:.2f} s ({first / cold:.2f})")
    for tree, values in ratios.items():
        print(
            f"{tree}: start -> first diagnostics, no cache, ratio to the cold check: median"
            f" {statistics.median(values):.3f} ({min(values):.2f} to {max(values):.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--keystrokes", type=int, default=30)
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--compiler", type=Path, default=COMPILER, help="the flopkb to run (default: this tree's)")
    parser.add_argument(
        "--start-rounds",
        type=int,
        default=0,
        help="only the start without a cache: this many rounds of a cold check, then a server start of --compiler"
        " and of each --against tree, as ratios to the round's check",
    )
    parser.add_argument("--against", type=Path, action="append", default=[], help="another tree's compiler folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="flopkb-bench-lsp-"))
    if args.start_rounds:
        try:
            compare_starts(args.root or generate(work / "kb", args.records), work, args)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    try:
        root = args.root or generate(work / "kb", args.records)
        env = environment(work / "cache", args.compiler.resolve())
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        cold_check, cold_check_cpu = check(root, env, "--no-cache")
        check_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if check_peak <= before:
            print("  (the check's peak is below an earlier child's: memory ratio is a lower bound)", file=sys.stderr)
        cold_first, cold_cpu, cold_related = asyncio.run(
            cold_start(root, dict(env, XDG_CACHE_HOME=str(work / "no-cache")))
        )
        opened = [
            asyncio.run(opened_start(root, dict(env, XDG_CACHE_HOME=str(work / f"no-cache-{typed}")), typed))
            for typed in (False, True)
        ]
        for _ in range(2):  # the first writes the cache, the second what stages derive (answer first: see FileCache)
            check(root, env)
            writers_done(work / "cache")
        warm_check, warm_check_cpu = check(root, env)
        writers_done(work / "cache")
        figures = asyncio.run(session(root, env, args.keystrokes))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"records: {args.records}; flopkb from {args.compiler}")
    print(
        f"cold check (--no-cache): {cold_check:.2f} s, CPU {cold_check_cpu:.2f} s; server start -> first diagnostics,"
        f" no cache: {cold_first:.2f} s (ratio {cold_first / cold_check:.2f}), CPU {cold_cpu:.2f} s (ratio"
        f" {cold_cpu / cold_check_cpu:.2f}); with their related places {cold_related:.2f} s (ratio"
        f" {cold_related / cold_check:.2f})"
    )
    (opened_first, opened_cpu), (typed_first, typed_cpu) = opened
    print(
        f"server start, no cache, a record opened at once -> first diagnostics: {opened_first:.2f} s (ratio"
        f" {opened_first / cold_check:.2f}), CPU {opened_cpu:.2f} s (ratio {opened_cpu / cold_check_cpu:.2f}); a link"
        f" typed into it -> its diagnostics: {typed_first:.2f} s (ratio {typed_first / cold_check:.2f}), CPU"
        f" {typed_cpu:.2f} s (ratio {typed_cpu / cold_check_cpu:.2f})"
    )
    warm = float(figures.pop("first diagnostics (warm)"))  # type: ignore[arg-type]
    warm_cpu = float(figures.pop("CPU to them (warm)"))  # type: ignore[arg-type]
    warm_related = float(figures.pop("with related places (warm)"))  # type: ignore[arg-type]
    print(
        f"warm check: {warm_check:.2f} s, CPU {warm_check_cpu:.2f} s; server start -> first diagnostics, warm cache:"
        f" {warm:.2f} s (ratio {warm / warm_check:.2f}), CPU {warm_cpu:.2f} s (ratio {warm_cpu / warm_check_cpu:.2f});"
        f" with their related places {warm_related:.2f} s (ratio {warm_related / warm_check:.2f})"
    )
    peak = int(figures.pop("server peak KiB"))  # type: ignore[call-overload]
    ratio = peak / check_peak
    print(f"memory: server peak {peak / 1024:.0f} MiB, check peak {check_peak / 1024:.0f} MiB (ratio {ratio:.2f})")
    for name, value in figures.items():
        print(f"{name}: {float(value) * 1000:.0f} ms")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

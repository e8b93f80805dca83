"""Benchmark `flopkb serve`'s live preview: from saving a record to the served page showing the change.

    python benchmarks/bench_serve.py                          # 1,000 and 10,000 records, this checkout
    python benchmarks/bench_serve.py --sizes 1000 --repeat 5
    python benchmarks/bench_serve.py --before /work/main/compiler   # also another flopkb, side by side

For each size: generate a synthetic base (benchmarks/generate.py), start
`flopkb serve` on a copy of it as a fresh process (port 0: a free one), wait
for the first build, then make each edit `--repeat` times and measure, from
just after the file is written to when a reader's page shows it: the
server's version, which the pages it serves poll and reload on, has changed
since the save, and a GET of the record's page returns the new text (both
polled every 20 ms):

- `prose`: a sentence with a new word appended to a flop's description;
- `accelerator`: an accelerator's `memory_capacity` set to a new value
  (its page, and every record that computes with it, change).

After each edit's page shows, the server is left until it is idle (less than
2% of a core over 2 s, the search indexer included): the CPU seconds the
server and its children spent from the save to then are the save's whole
cost, and its resident memory (RSS) then is recorded.

    python benchmarks/bench_serve.py --sizes 10000 --saves 50   # memory and CPU over 50 prose saves

With `--saves N`, N prose edits follow the timed ones (each once the server is
idle), and the RSS after the first build, after the first save and after the
last are printed: a server that keeps the previous base grows with every save.

With `--before PATH` (the `compiler/` folder of another checkout of flopkb),
the same is measured with that code (`PYTHONPATH=PATH`) in the same run, and
the ratio after / before is printed: the machine is shared and noisy, so
compare ratios measured together, not seconds of different runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate

POLL = 0.02
VERSION_PATH = "/__flopkb__/version"  # flopkb.site.publishing.serve_http's, not imported: `--before` runs other code
IDLE_SHARE = 0.02
IDLE_SECONDS = 2.0
TICK = os.sysconf("SC_CLK_TCK")
FLOP = "kb/g26/rec-00026"
ACCELERATOR = "hw/acc-018"


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode("utf-8", "replace"))
    except OSError:
        return ""


class Served:
    def __init__(self, root: Path, code: str | None) -> None:
        env = dict(os.environ)
        if code:
            env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
        self.log = open(root / "serve.log", "w+")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "flopkb", "serve", "--root", str(root), "--port", "0"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.url = self._wait_for_url(root / "serve.log")

    def _wait_for_url(self, log: Path, timeout: float = 1800) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", log.read_text())
            if found:
                return found.group(1)
            if self.process.poll() is not None:
                raise SystemExit("flopkb serve ended:\n" + log.read_text())
            time.sleep(0.1)
        raise SystemExit("flopkb serve did not start")

    def cpu(self) -> float:
        """CPU seconds of the server and of its children that ended (pagefind)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK  # utime stime cutime cstime

    def rss(self) -> float:
        """Resident memory of the server, in MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def idle(self, timeout: float = 300) -> None:
        """Wait until the server (and its children) have used under IDLE_SHARE of a core for IDLE_SECONDS."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            before = self.cpu()
            time.sleep(IDLE_SECONDS)
            if self.cpu() - before < IDLE_SHARE * IDLE_SECONDS and not _children(self.process.pid):
                return

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def _children(pid: int) -> list[str]:
    """The running children of every thread of `pid` (pagefind is started by the server's search thread)."""
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found += (task / "children").read_text().split()
    return found


def _version(root_url: str) -> int | None:
    """The version of the site that the served pages poll (they reload when it changes)."""
    try:
        return int(json.loads(_get(root_url + VERSION_PATH.lstrip("/")))["version"])
    except (ValueError, KeyError):
        return None


def _until(url: str, text: str, changed_from: tuple[str, int | None] | None = None, timeout: float = 600) -> float:
    """Seconds until the page at `url` holds `text` (and, with `changed_from`, the server at that root URL has a
    version other than that one)."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if (changed_from is None or _version(changed_from[0]) != changed_from[1]) and text in _get(url):
            return time.perf_counter() - start
        time.sleep(POLL)
    return float("inf")


def edit_prose(root: Path, n: int) -> tuple[str, str]:
    path = root / "records" / f"{FLOP}.yaml"
    word = f"previewword{n:04d}"
    text = path.read_text()
    head, rest = text.split("description: |\n", 1)
    first_line_end = rest.index("\n") + 1
    path.write_text(
        head + "description: |\n" + rest[:first_line_end].rstrip("\n") + f" {word}\n" + rest[first_line_end:]
    )
    return f"records/{FLOP}.html", word


def edit_accelerator(root: Path, n: int) -> tuple[str, str]:
    path = root / "records" / f"{ACCELERATOR}.yaml"
    value = 100 + n
    text = re.sub(r'(memory_capacity:\n    value: )"[^"]*"', rf'\1"{value} GB"', path.read_text())
    path.write_text(text)
    return f"records/{ACCELERATOR}.html", f"{value} GB"


EDITS = {"prose": edit_prose, "accelerator": edit_accelerator}


class Measured:
    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {name: [] for name in EDITS}
        self.cpu: dict[str, list[float]] = {name: [] for name in EDITS}
        self.rss: list[float] = []
        """MiB: after the first build, then after each save."""


def measure(base: Path, code: str | None, repeat: int, saves: int, work: Path) -> Measured:
    root = work / "base"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(base, root)
    served = Served(root, code)
    found = Measured()
    try:
        _until(served.url + f"records/{FLOP}.html", "<html")
        served.idle()
        found.rss.append(served.rss())
        plan = [(name, n) for n in range(repeat) for name in EDITS] + [("prose", repeat + n) for n in range(saves)]
        for name, n in plan:
            time.sleep(0.5)  # the watcher settles; no build is running
            cpu, version = served.cpu(), _version(served.url)
            page, text = EDITS[name](root, n + (1000 if code else 0))
            seconds = _until(served.url + page, text, (served.url, version))
            served.idle()
            if n < repeat:
                found.seconds[name].append(seconds)
                found.cpu[name].append(served.cpu() - cpu)
            found.rss.append(served.rss())
    finally:
        served.stop()
    return found


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record counts")
    parser.add_argument("--repeat", type=int, default=3, help="edits of each kind per size (best and median shown)")
    parser.add_argument("--saves", type=int, default=0, help="prose saves after the timed ones, for memory")
    parser.add_argument("--before", help="the compiler/ folder of another flopkb checkout, measured side by side")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="flopkb-bench-serve-") as tmp:
            work = Path(tmp)
            base = work / "generated"
            generate(base, size)
            variants = {"after": None} | ({"before": args.before} if args.before else {})
            results = {label: measure(base, code, args.repeat, args.saves, work) for label, code in variants.items()}
        print(f"\n{size:,} records: seconds from save to the served page showing the edit; CPU seconds of the save")
        for name in EDITS:
            line = f"  {name:<12}"
            for label, found in results.items():
                times, cpu = sorted(found.seconds[name]), _median(found.cpu[name])
                line += f"  {label}: best {times[0]:6.2f}  median {_median(times):6.2f}  CPU {cpu:6.2f}"
            if "before" in results:
                ratio = _median(results["after"].seconds[name]) / _median(results["before"].seconds[name])
                line += f"  after/before (median) {ratio:.2f}"
            print(line, flush=True)
        print("  RSS (MiB) after the first build, the first save and the last save:")
        for label, found in results.items():
            first, saved, last = found.rss[0], found.rss[1], found.rss[-1]
            print(f"    {label}: {first:.0f}, {saved:.0f}, {last:.0f} ({len(found.rss) - 1} saves)")


if __name__ == "__main__":
    main()

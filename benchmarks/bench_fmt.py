"""Time `flopkb fmt` (`format_text`) of 1 MB records of several shapes, against ruamel.yaml's own round trip.

    python benchmarks/bench_fmt.py [--size 1048000] [--shape NAME ...] [--profile] [--before CHECKOUT]

Each shape is a generated record of about `--size` characters (the record
limit is 1 MiB): one long literal block of notes, the same notes as a plain
string wrapped over its lines, tens of thousands of tags (every third with a
comment), thousands of claims under `formulas[].expect` (commented), thousands
of formulas each with a comment and a list of ids (`hardware`), mappings
nested 40 levels deep, lines of 10,000 characters, and small values (numbers,
nulls, dates, short quoted strings, flow lists of them) in many small
mappings. For each it prints the CPU seconds (`time.process_time`) of
`format_text` of the record as generated and of the record already formatted
(what a save of a formatted file formats), of ruamel.yaml's round-trip load
and dump of the same text in the same process (the baseline: a formatter
that keeps quotes and comments cannot do less than read and write the file
once), and their ratio. With `--before`, another checkout of flopkb (its
`compiler/`) formats the same texts in a child process, timed the same way
(formatted once before), right before this code's; its seconds, this code's
as a fraction of them, and whether both wrote the same bytes are printed
too. With `--profile`, the functions of each `format_text` by their own time.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable

from ruamel.yaml import YAML

from flopkb.authoring.fmt import format_text

HEAD = "id: facts/big\nkind: fact\ntitle: A big record\ntags: [a, b]\nstatement: Some statement.\n"
NOTE = "of the notes, with some words to make it about sixty characters."
CLAIMS = (
    "formulas:\n  - id: f\n    expr: a * b\n    unit: FLOP\n    inputs:\n      a: [1, 2, 3]\n      b: 2\n    expect:\n"
)


def _fill(size: int, head: str, unit: Callable[[int], str], tail: str = "") -> str:
    pieces, length, index = [head], len(head) + len(tail), 0
    while length + len(piece := unit(index)) <= size:
        pieces.append(piece)
        length += len(piece)
        index += 1
    return "".join([*pieces, tail])


def _claim(index: int) -> str:
    a = index % 3 + 1
    if index % 2:
        return f'      - where: {{a: {a}}}\n        value: "{2 * a} FLOP"  # claim {index}\n'
    return f'      # claim {index} below\n      - value: "{2 * a} FLOP"\n        where: {{a: {a}}}\n'


def _formula(index: int) -> str:
    body = f"  - id: f{index}\n    expr: a\n    unit: FLOP\n    inputs: {{a: 1}}\n    hardware: [h{index}]\n"
    return f"  # formula {index}\n{body}"


def _nested(index: int) -> str:
    lines = [f"  n{index}:\n", *(f"{'  ' * (depth + 1)}k{depth}:\n" for depth in range(1, 40)), f"{'  ' * 41}leaf: 1\n"]
    return "".join(lines)


def _small(index: int) -> str:
    values = (
        f"a: {index}\n    b: {index}.5\n    c: ~\n    d: 'q{index}'\n    e: 2026-12-05\n    f: [{index}, x, 0x1F]\n"
    )
    return f"  - {values}" + ("  # a comment\n" if index % 5 == 0 else "")


SHAPES: dict[str, Callable[[int], str]] = {
    "literal block": lambda size: _fill(size, HEAD + "notes: |\n", lambda i: f"  Line {i} {NOTE}\n"),
    "wrapped string": lambda size: _fill(size, HEAD + "notes:\n", lambda i: f"  Line {i} {NOTE}\n"),
    "list items": lambda size: _fill(
        size,
        HEAD.replace("tags: [a, b]\n", "") + "tags:\n",
        lambda i: f"  - tag-{i}" + (f"  # why {i}\n" if i % 3 == 0 else "\n"),
    ),
    "claims": lambda size: _fill(size, HEAD + CLAIMS, _claim),
    "formulas, ids": lambda size: _fill(size, HEAD + "formulas:\n", _formula),
    "deep nesting": lambda size: _fill(size, HEAD + "extra:\n", _nested),
    "long lines": lambda size: _fill(size, HEAD + "notes:\n", lambda i: f'  - "{"word " * 2000}{i}"\n'),
    "small values": lambda size: _fill(size, HEAD + "extra:\n", _small),
}


def _round_trip(text: str) -> None:
    handler = YAML(typ="rt")
    handler.preserve_quotes = True
    handler.dump(handler.load(text), io.StringIO())


def _cpu(run: Callable[[], object]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def _timed(text: str) -> tuple[float, str]:
    """CPU seconds of formatting `text` (once before, so that imports and caches are warm), and the output's digest."""
    formatted = format_text(text, "records/facts/big.yaml")
    assert isinstance(formatted, str), formatted  # a record fmt can format, or the figures mean nothing
    seconds = _cpu(lambda: format_text(text, "records/facts/big.yaml"))
    return seconds, hashlib.sha256(formatted.encode()).hexdigest()[:12]


def _before(checkout: str, size: int, name: str, formatted: bool) -> tuple[float, str]:
    """`_timed` by the flopkb of another checkout, in a child process."""
    environment = {**os.environ, "PYTHONPATH": os.path.join(checkout, "compiler")}
    command = [sys.executable, __file__, "--size", str(size), "--shape", name, "--child"]
    child = subprocess.run(
        [*command, *(["--formatted"] if formatted else [])], env=environment, capture_output=True, text=True, check=True
    )
    seconds, digest = child.stdout.split()
    return float(seconds), digest


def _text(name: str, size: int, formatted: bool) -> str:
    text = SHAPES[name](size)
    if not formatted:
        return text
    once = format_text(text, "records/facts/big.yaml")
    assert isinstance(once, str), once
    return once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_048_000, help="characters a record, at most")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only these shapes")
    parser.add_argument("--profile", action="store_true", help="profile each format_text")
    parser.add_argument("--before", metavar="CHECKOUT", help="another checkout of flopkb to time as well")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--formatted", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # a `--before` checkout's timing: one shape, as generated or formatted
        print(*_timed(_text(args.shape[0], args.size, args.formatted)))
        return
    before = f" {'before s':>8} {'/ before':>8} {'same':>4}" if args.before else ""
    print(f"{'shape':16} {'as':9} {'chars':>9} {'lines':>7} {'fmt s':>7}{before} {'ruamel s':>8} {'ratio':>6}")
    for name in args.shape or SHAPES:
        for formatted in (False, True):
            _row(name, args, formatted)


def _row(name: str, args: argparse.Namespace, formatted: bool) -> None:
    text = _text(name, args.size, formatted)
    compared = ""
    if args.before:
        old, old_digest = _before(args.before, args.size, name, formatted)
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()
    fmt, digest = _timed(text)
    if profile is not None:
        profile.disable()
    if args.before:
        compared = f" {old:8.2f} {fmt / old:8.2f} {'yes' if digest == old_digest else 'NO':>4}"
    baseline = _cpu(lambda: _round_trip(text))
    shape = "formatted" if formatted else "generated"
    print(
        f"{name:16} {shape:9} {len(text):9,} {text.count(chr(10)):7,} {fmt:7.2f}{compared} {baseline:8.2f}"
        f" {fmt / baseline:6.2f}",
        flush=True,
    )
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()

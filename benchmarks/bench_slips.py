"""How often a YAML slip is told in an author's words (`flopkb.load.slips`), where, and at what cost.

    python benchmarks/bench_slips.py [--root DIR] [--guesses N]

Every line of every record of the base (default: this repository's) is
slipped one way at a time, as authors slip: the ':' after a key dropped, a
': ' put into a plain value, the closing quote or ']' of a value dropped, the
line indented one space more or less, the space after a key's ':' or an
item's '-' dropped, a value quoted with ' that holds a word's apostrophe. Each slipped file is parsed as `flopkb
check` parses it. Prints, per slip: how many still parse (another valid
layout), how many are told in an author's words at the slipped line (or, for
an indent, the line next to it), told elsewhere (which the tests hold at
none), or left with libyaml's message; then the time of a parse of a slipped
file (median and worst), beside a parse of the clean files. `--guesses`
replaces the number of guesses tried (`_MAX_GUESSES`), to compare.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from flopkb.load import slips
from flopkb.load.source import parse

REPOSITORY = Path(__file__).resolve().parent.parent
KINDS = (
    "colon",
    "colon-in-value",
    "quote",
    "bracket",
    "indent+1",
    "indent-1",
    "colon-space",
    "dash-space",
    "apostrophe",
)
TOLD = (
    "a ':' is missing after",
    "': ' inside a value that is not quoted",
    "opens a quote",
    "' opens on line",
    "is indented by",
    "a space is missing after",
    "inside a value quoted with '",
)
"""Words of the messages `flopkb.load.slips` tells (any other `yaml-syntax` message is libyaml's)."""


def slipped(line: str, kind: str) -> str | None:
    """`line` with one slip of `kind` made in it, or None when it cannot take that slip."""
    if kind == "colon" and (found := re.match(r"\s*(?:- )?[a-z_]+(: )\S", line)):
        return line[: found.start(1)] + " " + line[found.end(1) :]
    if kind == "colon-in-value" and (found := re.match(r"\s*(?:- )?[a-z_]+: [A-Za-z][^\"'#:\[{ ]*( )[^\"'#:]+$", line)):
        return line[: found.start(1)] + ": " + line[found.end(1) :]
    if (kind == "quote" and re.search(r": \"[^\"\\]*\"\s*$", line)) or (
        kind == "bracket" and re.search(r": \[[^\]\[]*\]\s*$", line)
    ):
        return line.rstrip()[:-1]
    if kind == "colon-space" and (found := re.match(r"\s*(?:- )?[a-z_]+:( )[^\s\"'|>#]", line)):
        return line[: found.start(1)] + line[found.end(1) :]
    if kind == "dash-space" and (found := re.match(r"\s*-( )[a-z_]", line)):
        return line[: found.start(1)] + line[found.end(1) :]
    if kind == "apostrophe" and (found := re.match(r"(\s*(?:- )?[a-z_]+: )\"([A-Za-z]+)( [^\"\\']*)\"\s*$", line)):
        return f"{found[1]}'{found[2]}'s{found[3]}'"  # a value quoted with ', a word's apostrophe in it
    if kind.startswith("indent") and line.startswith("  ") and not line.lstrip().startswith("#"):
        return " " + line if kind == "indent+1" else line[1:]
    return None


def slips_of(texts: dict[str, str]) -> Iterator[tuple[str, int, str]]:
    """(file, 1-based line, kind) for every line of `texts` that can take each kind of slip."""
    for rel, text in sorted(texts.items()):
        for number, line in enumerate(text.split("\n"), start=1):
            for kind in KINDS:
                if slipped(line, kind) is not None:
                    yield rel, number, kind


def with_slip(text: str, number: int, kind: str) -> str:
    lines = text.split("\n")
    lines[number - 1] = slipped(lines[number - 1], kind) or lines[number - 1]
    return "\n".join(lines)


def told_near(kind: str) -> int:
    """How far from the slipped line a slip may be told: an indent may be told at the line after it (the first line of
    a block set deeper, and the next back at the block's depth: either repair holds)."""
    return 1 if kind.startswith("indent") else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPOSITORY)
    parser.add_argument("--guesses", type=int, default=None)
    arguments = parser.parse_args()
    if arguments.guesses is not None:
        slips._MAX_GUESSES = arguments.guesses
    texts = {
        path.relative_to(arguments.root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((arguments.root / "records").rglob("*.yaml"))
    }
    counts: Counter[tuple[str, str]] = Counter()
    seconds: list[float] = []
    for rel, number, kind in slips_of(texts):
        text = with_slip(texts[rel], number, kind)
        start = time.perf_counter()
        source, diagnostics = parse(text, rel)
        seconds.append(time.perf_counter() - start)
        syntax = [diagnostic for diagnostic in diagnostics if diagnostic.code == "yaml-syntax"]
        if source is not None or not syntax:
            counts[kind, "parses"] += 1
        elif not any(words in syntax[0].message for words in TOLD):
            counts[kind, "libyaml"] += 1
        else:
            counts[kind, "told" if abs(syntax[0].line - number) <= told_near(kind) else "told elsewhere"] += 1
    clean = []
    for rel, text in texts.items():
        start = time.perf_counter()
        parse(text, rel)
        clean.append(time.perf_counter() - start)
    print(f"{len(texts)} records, {len(seconds)} slipped files, at most {slips._MAX_GUESSES} guesses")
    print(f"{'slip':16} {'parses':>7} {'told':>6} {'elsewhere':>10} {'libyaml':>8}")
    for kind in KINDS:
        row = [counts[kind, outcome] for outcome in ("parses", "told", "told elsewhere", "libyaml")]
        print(f"{kind:16} {row[0]:7} {row[1]:6} {row[2]:10} {row[3]:8}")
    for what, times in (("a slipped file", seconds), ("a clean file", clean)):
        print(f"parse of {what}: median {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms")


if __name__ == "__main__":
    main()

"""A link its author broke over two lines, as prose wrapped at 80 columns breaks one: markdown shows it as text.

A wikilink stands on one line (`flopkb.links.prose`), so `[[flops/prefill-attention-` on one line and
`quadratic]]` on the next make no link: the page shows the brackets, and the graph lacks the edge, with
nothing said. `split_links` finds each `[[` that a line break cuts from its `]]` and that joining the two
lines would make a link, by the one parser the page is rendered from: a `[[` in code stays code, joined
or not, and is never reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from flopkb.links.prose import Link, parse

_SPLIT = re.compile(r"\[\[([^\[\]\n]*)\n[ \t]*([^\[\]\n]*?\]\])")
"""A `[[` whose line ends before any bracket, and the next line, which closes it."""
_GLUED = ("-", "/", "#", "_", ".")
"""A break after one of these in a target or anchor is inside an id (`nvidia-` / `h100-sxm`): the joined link has no
space there. In a label, only a hyphen joins its word (`well-` / `known`); after any other, a space (`e.g.` / `foo`)."""


class SplitLink(NamedTuple):
    offset: int
    """Where its `[[` stands in the field's text."""
    first: str
    """Its text up to the line break."""
    joined: str
    """The link as it reads on one line."""


def split_links(text: str, links: Sequence[Link]) -> list[SplitLink]:
    """Each `[[` of `text` (a markdown field's value) that a line break cuts from the `]]` closing it, where joining the
    two lines makes a link; `links` are the field's links (none of which can be split)."""
    found: list[SplitLink] = []
    starts = {link.offset for link in links}
    for match in _SPLIT.finditer(text):
        offset, first, rest = match.start(), match.group(1), match.group(2)
        if offset in starts:
            continue
        break_at = match.start(1) + len(first)
        if offset not in {link.offset for link in parse(text[:break_at] + " " + text[break_at + 1 :]).links}:
            continue  # in code, or no link however joined
        written = first.rstrip()
        glued = written.endswith("-" if "|" in written else _GLUED)
        joined = f"[[{written}{'' if glued else ' '}{rest}"
        found.append(SplitLink(offset, f"[[{first}", joined))
    return found

"""How deep a YAML text could nest, counted without parsing it: whether libyaml's compiled composer, which recurses
on the C stack, may compose it (`flopkb.load.source`).

Two bounds, both counted in the text's UTF-8 bytes, where no byte of a non-ASCII character is ASCII. The first counts
every character that can start a collection; long records, whose prose has hundreds of hyphens and colons, pass the
second, which leaves out those that stand before a word. tests/fuzz/test_fast_compose.py holds both against what
libyaml composes.
"""

from __future__ import annotations

import re

C_SAFE_DEPTH = 512
"""The compiled composer takes about 330 bytes of C stack a level: 512 levels fit in a thread stack of 256 KB (1,000
did not), a small fraction of what Python's threads get (8 MB with glibc). Records nest far less; the bound is on
what a text *could* nest, and a record of 4 KB counts 60 to 140."""

_COLLECTION_INDICATORS = b"[{:?-"
"""What every collection of a YAML text starts with or needs one of: a flow `[` or `{`, a block entry `-`, a key `?`
or a value `:`. No two collections share one, and an alias composes no collection: their count bounds the composer's
depth (one pass of `bytes.translate`: half the time of counting each)."""

_BEFORE_A_WORD = re.compile(rb"[-?:][0-9A-Za-z]")
"""An indicator character right before a letter or digit, as in prose's `memory-bound` or `10:30`: it opens no
block collection (libyaml's scanner takes `-`, `?` and `:` as indicators there only before a blank or a line break).
In a flow `:` and `?` are indicators anyway, but what they open, a single-pair mapping, sits directly in a `[`: each
`[` adds at most one such level."""


def libyaml_bounds_nesting() -> bool:
    """libyaml 0.2.6 and later refuse more than 1,000 nested levels while parsing: no bound is needed then."""
    try:
        from yaml import _yaml
    except ImportError:
        return False
    return tuple(_yaml.get_version()) >= (0, 2, 6)


def nesting_bound(encoded: bytes) -> int:
    """A bound on how deep the text's collections nest: its indicator characters; where they are more than
    `C_SAFE_DEPTH`, the smaller of that and the indicators that can open a collection with a level a `[`."""
    indicators = len(encoded) - len(encoded.translate(None, _COLLECTION_INDICATORS))
    if indicators <= C_SAFE_DEPTH:
        return indicators
    return min(indicators, indicators - len(_BEFORE_A_WORD.findall(encoded)) + encoded.count(b"["))

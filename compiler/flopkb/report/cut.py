"""Cutting record text to a bounded size: the one way a message, a hint or a view quotes text of any length."""

from __future__ import annotations

QUOTE = 200
"""The most characters a message or a hint quotes of one piece of record text (a link, an id, a term, a name, an
expression...): the longest id is quoted whole, and a longer text is recognisable from its first characters."""

MESSAGE = 2_000
"""The most characters of a message or a hint (`flopkb.report.diagnostics.make`): a message quotes a few pieces of
text, each cut at `QUOTE`, so only a list of names the records hold (a vocabulary's terms) ever comes near it."""


def cut(text: str, limit: int = QUOTE) -> str:
    """`text` when it has at most `limit` characters; else its first characters, then `…` and how many characters
    are left out (`aaaa… (99,996 more characters)`), `limit` characters in all (a `limit` under 30 keeps none)."""
    if len(text) <= limit:
        return text
    kept = max(0, limit - len(_left_out(len(text))))
    return text[:kept] + _left_out(len(text) - kept)


def _left_out(count: int) -> str:
    return f"… ({count:,} more characters)"

"""Markdown generated from the constructs that decide what is a link, for property tests of prose.

Code spans and fences, HTML-looking lines (`<div>`, `<img src=x>`), escapes, link URLs and titles, reference
definitions, autolinks, tables with `[[t\\|label]]`, emphasis (products like `k*T` too), lists, block quotes
and headings; links to targets `a` to `e` (and some that are no link, or resolve to nothing: `x`, `k*T`).
"""

from __future__ import annotations

from hypothesis import strategies as st

_LINKS = [
    "[[a]]",
    "[[b|lab]]",
    "[[c#f]]",
    "[[d#f|x y]]",
    "[[ e ]]",
    "[[a\\|t]]",
    "[[a\\#f]]",
    "[[x\\]]",
    "[[]]",
    "[[#f]]",
    "[[a|b`c]]",
    "[[a|`c`]]",
    "[[k*T|B*P]]",
    "[[a|<b]]",
    "[[x-1/y_2]]",
    "[[a|b|c]]",
]
_INLINE = [
    *_LINKS,
    "`",
    "``",
    "`[[a]]`",
    "`` [[a]] ``",
    "<div>",
    "<img src=x>",
    "</p>",
    "<http://x.y/[[a]]>",
    "<a@b.c>",
    "< ",
    "\\",
    "\\[[a]]",
    "\\`",
    "\\*",
    "\\|",
    "[t](u)",
    "[t]([[a]])",
    '[t](u "[[a]]")',
    "[t [[a]]](u)",
    "[t][r]",
    "[r]",
    "](",
    "]",
    "[",
    "(",
    ")",
    "*",
    "**",
    "_",
    "k*T",
    "(B*P)",
    "~~",
    "~",
    "a",
    "b c",
    " ",
    "  ",
    "|",
    "#",
    "&amp;",
    "&",
    "!",
    ":",
    "x",
]
_PREFIXES = [
    "",
    "",
    "",
    "> ",
    ">",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "  ",
    "   ",
    "    ",
    "\t",
    "# ",
    "## ",
    "> - ",
    "- > ",
    "    - ",
    "  - ",
    "-\t",
    ">\t",
    "> > ",
]
_LINES = [
    "",
    "",
    "```",
    "~~~",
    "```py",
    "---",
    "===",
    "***",
    "|---|---|",
    "| --- |",
    "--|--",
    "[r]: /u",
    "[r]: [[a]]",
    '[r]: /u "[[a]]"',
    "<div>",
    "<!-- x -->",
    "| a | b |",
    "| [[a\\|b]] | `x |",
    "a | [[b]]",
]


inline = st.lists(st.sampled_from(_INLINE), max_size=8).map("".join)
lines = st.one_of(
    st.tuples(st.sampled_from(_PREFIXES), inline).map("".join),
    st.tuples(st.sampled_from(_PREFIXES), st.sampled_from(_LINES)).map("".join),
)
markdown = st.tuples(st.lists(lines, max_size=10), st.sampled_from(["\n", "\n", "\r\n"])).map(
    lambda parts: parts[1].join(parts[0])
)
# Text the fast path may take: every character that can make structure around a link is left out, but
# everything the fast path lets through stands in every position (links with `|` and `#`, `*`, `_`,
# `~~`, brackets, `(`/`:`, list and quote markers, headings, setext underlines, three-space indents).
_PLAIN_PIECES = [
    "[[a]]",
    "[[b|lab]]",
    "[[c#f|x y]]",
    "[[ e ]]",
    "[[]]",
    "[[#f]]",
    "[[k*T|B*P]]",
    "[[a|b|c]]",
    "[",
    "]",
    "[[",
    "]]",
    "(",
    ")",
    ":",
    "*",
    "**",
    "_",
    "~~",
    "#",
    "# ",
    "> ",
    "- ",
    "+ ",
    "1. ",
    "1) ",
    "---",
    "===",
    "   ",
    " ",
    "\n",
    "\n",
    "a",
    "k*T",
    "&amp;",
    "!",
    "|",
    "=",
]
plain_markdown = st.lists(st.sampled_from(_PLAIN_PIECES), max_size=30).map("".join)
# One construct that can hide or cut a link, in text the fast path would otherwise take: it must decline.
_ONE_CONSTRUCT = [
    "<http://x.y/[[a]]>",
    "<a@b.c>",
    "`[[a]]`",
    "``",
    "\\[[a]]",
    "\\",
    "\t",
    "\r\n",
    "\0",
    "\n    [[a]]",
    "\n~~~\n",
    "\n```\n",
    "[t]([[a]])",
    '[t](u "[[a]]")',
    "[t [[a]]](u)",
    "\n[r]: [[a]]\n",
    "\n[r]: /u\n",
    "[r]",
    "\n| [[a|b]] |\n|---|\n",
    "\n|---|---|\n",
    "\n" + "> " * 21,
]
one_construct = st.tuples(plain_markdown, st.sampled_from(_ONE_CONSTRUCT), plain_markdown).map("".join)
texts = st.one_of(markdown, plain_markdown, one_construct, st.text(alphabet="ab[]|#*`~ \n\t>-<\\():!", max_size=60))


def inside_a(page: str, at: int) -> bool:
    """Whether `at` of a rendered page lies inside an `<a>` element: a link shown in a markdown link's text."""
    before = page[:at]
    return before.rfind("<a ") > before.rfind("</a>")

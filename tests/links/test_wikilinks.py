"""Tests for flopkb.links.wikilinks: link grammar, code exclusion (positions: tests/load/test_positions.py)."""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from flopkb.links import wikilinks as wl
from flopkb.links.wikilinks import WikiLink, find_wikilinks, replace_wikilinks


def targets(md: str) -> list[str]:
    return [link.target for link in find_wikilinks(md)]


# --------------------------------------------------------------------------
# Grammar


@pytest.mark.parametrize(
    "md, target, anchor, label",
    [
        ("see [[gpu/h100]] now", "gpu/h100", None, None),
        ("see [[gpu/h100|the H100]] now", "gpu/h100", None, "the H100"),
        ("see [[llama-70b#decode]] now", "llama-70b", "decode", None),
        (
            "see [[llama-70b#decode|decode cost]] now",
            "llama-70b",
            "decode",
            "decode cost",
        ),
        ("[[ padded  #  anc | a label ]]", "padded", "anc", "a label"),
        ("[[t|label with | bar and # hash]]", "t", None, "label with | bar and # hash"),
        ("[[t#a#b]]", "t", "a#b", None),
        ("[[t#]]", "t", None, None),
        ("[[t|]]", "t", None, None),
        ("[[t# |  ]]", "t", None, None),
    ],
)
def test_link_forms(md, target, anchor, label):
    (link,) = find_wikilinks(md)
    assert (link.target, link.anchor, link.label) == (target, anchor, label)
    assert md[link.offset : link.end].startswith("[[")
    assert md[link.offset : link.end].endswith("]]")


def test_offsets_and_order():
    md = "a [[x]] b [[y#z|w]]\nc [[q]]"
    links = find_wikilinks(md)
    assert links == [
        WikiLink("x", None, None, 2, 7),
        WikiLink("y", "z", "w", 10, 19),
        WikiLink("q", None, None, 22, 27),
    ]


@pytest.mark.parametrize(
    "md",
    [
        "[[]]",
        "[[ ]]",
        "[[#anchor]]",
        "[[ |label]]",
        "[[a\nb]]",
        "[[a]b]]",
        "[a]]",
        "[[a]",
        "no links",
    ],
)
def test_not_links(md):
    assert find_wikilinks(md) == []


def test_nested_brackets():
    links = find_wikilinks("[[[x]]]")
    assert [(l.target, l.offset, l.end) for l in links] == [("x", 1, 6)]


def test_wikilink_is_frozen_slotted_dataclass():
    (link,) = find_wikilinks("[[a#b|c]]")
    assert dataclasses.is_dataclass(link)
    assert type(link) is WikiLink
    assert not hasattr(link, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        link.target = "x"  # type: ignore[misc]
    assert link == WikiLink("a", "b", "c", 0, 9)
    assert hash(link) == hash(WikiLink("a", "b", "c", 0, 9))
    assert dataclasses.replace(link, target="z").target == "z"
    assert dataclasses.asdict(link) == {
        "target": "a",
        "anchor": "b",
        "label": "c",
        "offset": 0,
        "end": 9,
    }


# --------------------------------------------------------------------------
# Code is not linked


@pytest.mark.parametrize(
    "md, expected",
    [
        ("`[[no]]` [[yes]]", ["yes"]),
        ("``[[no]]`` [[yes]]", ["yes"]),
        ("``a ` [[no]] `` [[yes]]", ["yes"]),
        ("`x`[[yes]]", ["yes"]),
        ("[[yes]]`x`", ["yes"]),
        ("` unclosed [[yes]]", ["yes"]),
        ("`` unmatched ` [[yes]]", ["yes"]),
        ("\\`[[yes]]`", ["yes"]),  # escaped backtick opens nothing
        ("`[[no]]\\` [[yes]]", ["yes"]),  # no escapes inside code
        ("[[yes|the `H100` part]] `[[no]]`", ["yes"]),  # code inside a label
        ("`x [[no` y]] [[yes]]", ["yes"]),  # "[[" in code
        ("[[no `x]] y` [[yes]]", ["yes"]),  # "]]" in code
        ('<a title="`">[[yes]]` [[yes2]]', ["yes", "yes2"]),  # HTML tag wins
        ("<http://x.org/`>[[yes]]`", ["yes"]),  # autolink wins
        ("a `b\n[[no]] c` [[yes]]", ["yes"]),  # multi-line span
        (
            "a `b\n\n[[yes]] c` [[yes2]]",
            ["yes", "yes2"],
        ),  # spans stop at a paragraph end
        ("- a `b\n- [[yes]] c`", ["yes"]),  # ... and at a list item
        ("```\n[[no]]\n```\n[[yes]]", ["yes"]),
        ("```python\nx = [[no]]\n```\n\n[[yes]]", ["yes"]),
        ("~~~\n[[no]]\n~~~\n[[yes]]", ["yes"]),
        ("~~~~\n[[no]]\n~~~\n[[no]]\n~~~~\n[[yes]]", ["yes"]),
        ("```\n[[no]]\n~~~\n[[no]]", []),  # unclosed fence runs to the end
        ("```[[no]]\n```", []),  # the info string belongs to the fence
        ("``` a`b\n[[yes]]\n```\n[[no]]", ["yes"]),  # backtick info: no fence
        ("para\n\n    [[no]]\n\n[[yes]]", ["yes"]),
        ("\t[[no]]\n\n[[yes]]", ["yes"]),
        ("    [[no]]\n[[yes]]", ["yes"]),
        ("para\n    [[yes]]", ["yes"]),  # indented code can't interrupt a paragraph
        ("- a\n    - [[yes]]\n        - [[yes2]]", ["yes", "yes2"]),
        ("- a\n\n      [[no]]\n- [[yes]]", ["yes"]),
        ("-     [[no]]\n\n[[yes]]", ["yes"]),
        ("> a\n>\n>     [[no]]\n\n[[yes]]", ["yes"]),
        ("> ```\n> [[no]]\n\n[[yes]]", ["yes"]),
        ("- a\n  ```\n  [[no]]\n```\n[[no]]", []),
        ("- a\n\n     ```\n  [[no]]\n", []),  # a fence behind four spaces
        ("- a\n\n     ~~~\n  [[no]] `x`\n", []),
        ("- a\n\n    <div>\n  `[[yes]]`\n", ["yes"]),
        ("<div>\n`[[yes]]`\n</div>", ["yes"]),  # no code spans in HTML blocks
        ("```\r\n[[no]]\r\n```\r\n[[yes]]", ["yes"]),
        ("a `b\r\n[[no]]` [[yes]]", ["yes"]),
    ],
)
def test_code_is_not_linked(md, expected):
    assert targets(md) == expected


def test_fast_paths_avoid_markdown_it(monkeypatch):
    def boom(text):
        raise AssertionError(f"markdown-it used for {text!r}")

    monkeypatch.setattr(wl, "_code_ranges_markdown_it", boom)
    assert targets("plain [[a]] text\n\nmore [[b]]") == ["a", "b"]
    assert targets("with `code` and [[a]] and `[[no]]`") == ["a"]
    assert targets("- item [[a]]\n    - nested [[b]]\n- `x` [[c]]") == ["a", "b", "c"]
    assert targets("text [[a]]\n\n```py\n[[no]]\n```\n\n~~~\n[[no]]\n~~~\n[[b]] `c`") == ["a", "b"]
    assert targets("    code without links\n\n[[a]]") == ["a"]
    assert targets("no links at all ``` `") == []


# --------------------------------------------------------------------------
# replace_wikilinks


def test_replace_wikilinks():
    md = "See [[a#f|the f]] and `[[code]]`.\n\n```\n[[fenced]]\n```\n[[b]]"
    out = replace_wikilinks(
        md,
        lambda l: f"[{l.label or l.target}](/{l.target}/{'#' + l.anchor if l.anchor else ''})",
    )
    assert out == "See [the f](/a/#f) and `[[code]]`.\n\n```\n[[fenced]]\n```\n[b](/b/)"


def test_replace_wikilinks_no_links_returns_input():
    md = "nothing `[[here]]`"
    assert replace_wikilinks(md, lambda l: "X") is md


# --------------------------------------------------------------------------
# Properties

_PIECES = [
    "a",
    "b c",
    " ",
    "    ",
    "\n",
    "\n\n",
    "\t",
    "\r\n",
    "`",
    "``",
    "```",
    "~~~",
    "[[a]]",
    "[[b|c]]",
    "[[a#x]]",
    "[[ ]]",
    "[",
    "]",
    "|",
    "#",
    "\\",
    "<",
    ">",
    "> ",
    "- ",
    "* ",
    "1. ",
    "\n- ",
    "\n    - ",
    "\n    ",
    "\n> ",
    "\n```\n",
    "\n~~~\n",
    "````",
    "\n   ```",
    "```a",
    "<b>",
    "<div>",
    "</div>",
    "<http://x>",
    "<a title='`'>",
    "<!-- ",
    " -->",
    "-     ",
    "\n# h",
    "\n---",
    "\n     ```",
    "\n     ~~~",
    "\n    <div>",
    "\n  ",
]
_markdownish = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(_markdownish, st.text(alphabet="ab[]|#`~ \n\t>-<\\", max_size=80)))
def test_find_never_raises_and_links_are_delimited(text):
    links = find_wikilinks(text)
    previous_end = 0
    for link in links:
        chunk = text[link.offset : link.end]
        assert chunk.startswith("[[") and chunk.endswith("]]")
        assert link.offset >= previous_end
        assert link.target and link.target == link.target.strip()
        previous_end = link.end
    assert replace_wikilinks(text, lambda l: text[l.offset : l.end]) == text


_MD = MarkdownIt("commonmark")
_CODE_ELEMENT = re.compile(r"<code([^>]*>.*?)</code>", re.DOTALL)


def _oracle(text: str) -> list[int]:
    """Offsets of the links markdown-it itself leaves outside code.

    Every candidate's delimiters are replaced by unique letter/digit sentinels
    (brackets never change where code is, in the inputs generated here: no
    link destinations); a candidate is a link iff neither sentinel lands in a
    <code> element (its attributes included: a fence's info string is code)
    and it is rendered at all.
    """
    cands = [m for m in wl._LINK_RE.finditer(text) if m.group(1).strip()]
    parts, pos = [], 0
    for i, m in enumerate(cands):
        parts += [
            text[pos : m.start()],
            f"Q{i}Q",
            text[m.start() + 2 : m.end() - 2],
            f"Z{i}Z",
        ]
        pos = m.end()
    parts.append(text[pos:])
    html = _MD.render("".join(parts))
    code = "".join(_CODE_ELEMENT.findall(html))
    return [
        m.start() for i, m in enumerate(cands) if f"Q{i}Q" not in code and f"Z{i}Z" not in code and f"Q{i}Q" in html
    ]


# Line-structured documents hit block constructs (nested containers, fences
# behind indentation, HTML blocks) far more often than random pieces do.
_line = st.tuples(
    st.sampled_from(["", " ", "  ", "   ", "    ", "     ", "      ", "        ", "\t"]),
    st.sampled_from(["", "", "- ", "* ", "1. ", "> ", ">     ", "-     "]),
    st.sampled_from(
        [
            "",
            "[[a]]",
            "text [[b|c]]",
            "```",
            "````",
            "~~~",
            "``` x`y",
            "`x` [[a]]",
            "<div>",
            "# h",
            "---",
            "`open [[a]]",
            "close` [[b]]",
            "a `` b",
            "para",
            "<b>`</b> [[a]]",
        ]
    ),
).map("".join)
_line_documents = st.lists(_line, max_size=12).map("\n".join)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(_markdownish, _line_documents))
def test_agrees_with_markdown_it(text):
    assert [link.offset for link in find_wikilinks(text)] == _oracle(text)

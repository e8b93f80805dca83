"""Tests for flopkb.links.wikilinks: link grammar, code exclusion, source positions."""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from flopkb.links import wikilinks as wl
from flopkb.links.wikilinks import (
    LineIndex,
    WikiLink,
    find_wikilinks,
    replace_wikilinks,
    source_position,
)


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


# --------------------------------------------------------------------------
# LineIndex against YAML marks

_MARK_DOCS = [
    "a: 1\nb: |\n  x\n  y\nc: 3\n",
    "a: 1\r\nb: |\r\n  x\r\n  y\r\nc: 3\r\n",
    "\ufeffa: 1\nb: héé\nc: 😀 3\n",
    "\ufeffa: 1\r\nb: >\r\n  x\r\n\r\n  y\r\nc: [1, 2]\r\n",
    "a: 1\rb: 2\r",
    "a: 1\x85b: 2\n",
    "a: x\u2028  y\nb: 2\n",
]


def _nodes(node):
    yield node
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield from _nodes(k)
            yield from _nodes(v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            yield from _nodes(v)


@pytest.mark.parametrize("text", _MARK_DOCS)
@pytest.mark.parametrize("loader, bom_in_index", [(yaml.CSafeLoader, False), (yaml.SafeLoader, True)])
def test_line_index_matches_yaml_marks(text, loader, bom_in_index):
    index = LineIndex(text, bom_in_index=bom_in_index)
    for node in _nodes(yaml.compose(text, Loader=loader)):
        for mark in (node.start_mark, node.end_mark):
            assert index.position(mark.index) == (mark.line + 1, mark.column + 1)


def test_csafeloader_mark_index_skips_the_bom():
    # libyaml drops the BOM before counting; the pure-Python loader counts it.
    text = "\ufeffkey: value\n"
    c_node = yaml.compose(text, Loader=yaml.CSafeLoader).value[0][1]
    py_node = yaml.compose(text, Loader=yaml.SafeLoader).value[0][1]
    assert c_node.start_mark.index == 5 and py_node.start_mark.index == 6
    assert LineIndex(text).text[c_node.start_mark.index :].startswith("value")
    assert LineIndex(text, bom_in_index=True).text[py_node.start_mark.index :].startswith("value")


def test_csafeloader_mark_index_counts_code_points_and_crlf_as_two():
    text = "k: 😀é\r\nv: [[x]]\r\n"
    node = yaml.compose(text, Loader=yaml.CSafeLoader).value[1][1]
    assert text[node.start_mark.index : node.end_mark.index] == "[[x]]"


# --------------------------------------------------------------------------
# source_position against real YAML documents


def _find(node, path):
    for key in path:
        if isinstance(key, int):
            node = node.value[key]
        else:
            node = next(v for k, v in node.value if k.value == key)
    return node


def positions(text, path=("body",), loader=yaml.CSafeLoader, bom_in_index=False):
    node = _find(yaml.compose(text, Loader=loader), path)
    assert isinstance(node, yaml.ScalarNode)
    index = LineIndex(text, bom_in_index=bom_in_index)
    out = []
    for link in find_wikilinks(node.value):
        pos = source_position(
            index,
            node.start_mark.index,
            node.end_mark.index,
            node.style,
            node.value,
            link.offset,
        )
        # the same through the plain-text entry point
        assert pos == source_position(
            text,
            node.start_mark.index,
            node.end_mark.index,
            node.style,
            node.value,
            link.offset,
            bom_in_index=bom_in_index,
        )
        out.append(pos)
    return out


def _at(text: str, line: int, col: int) -> str:
    """The text at a 1-based (line, col), BOM excluded."""
    return text.lstrip("\ufeff").splitlines()[line - 1][col - 1 :]


def test_plain_scalar():
    text = "id: x\nbody: see [[a]] and [[b|B]]\n"
    assert positions(text) == [(2, 11), (2, 21)]
    assert _at(text, 2, 21).startswith("[[b|B]]")


def test_plain_multiline_scalar():
    text = "id: x\nbody: first [[a]]\n  second line [[b]]\n  [[c]] third\nnext: 1\n"
    assert positions(text) == [(2, 13), (3, 15), (4, 3)]


def test_single_quoted_scalar():
    text = "body: 'it''s [[a]]\n  and [[b]]'\n"
    assert positions(text) == [(1, 14), (2, 7)]


def test_double_quoted_scalar():
    text = 'body: "say \\"hi\\" [[a]]\n  then [[b]]"\n'
    assert positions(text) == [(1, 19), (2, 8)]


def test_double_quoted_escape_creating_brackets_falls_back_to_scalar_start():
    text = 'id: x\nbody: "\\x5b[a]] and [[b]]"\n'
    assert yaml.compose(text, Loader=yaml.CSafeLoader).value[1][1].value == "[[a]] and [[b]]"
    assert positions(text) == [(2, 7), (2, 7)]


def test_literal_block_with_header_comment_and_code():
    text = (
        "id: x\n"
        "body: |  # a comment [[not-a-link]]\n"
        "  first [[a]]\n"
        "\n"
        "  ```\n"
        "  [[in-code]]\n"
        "  ```\n"
        "  last [[b#anc]]\n"
        "next: 1\n"
    )
    assert positions(text) == [(3, 9), (8, 8)]


def test_folded_block():
    text = "body: >\n  folded [[a]]\n  continues [[b]]\n\n  new para [[c]]\nx: 1\n"
    node = _find(yaml.compose(text, Loader=yaml.CSafeLoader), ("body",))
    assert node.value == "folded [[a]] continues [[b]]\nnew para [[c]]\n"
    assert positions(text) == [(2, 10), (3, 13), (5, 12)]


def test_folded_block_brackets_across_a_fold():
    # "[" at a line end and "[" at the next line start fold to "[ [": no link,
    # and the count of "[[" stays aligned for the link after it.
    text = "body: >-\n  a [\n  [b]] then [[c]]\n"
    assert positions(text) == [(3, 13)]


@pytest.mark.parametrize("indicator", ["|-", "|+", ">-", ">+", "|2-", ">2"])
def test_chomping_and_indentation_indicators(indicator):
    text = f"a: 1\nbody: {indicator}\n  x [[a]]\n  y [[b]]\n\nc: 1\n"
    assert positions(text) == [(3, 5), (4, 5)]


def test_indentation_indicator_with_more_indented_first_line():
    text = "body: |2\n    indented [[a]]\n  [[b]] flush\n"
    node = _find(yaml.compose(text, Loader=yaml.CSafeLoader), ("body",))
    assert node.value == "  indented [[a]]\n[[b]] flush\n"
    assert positions(text) == [(2, 14), (3, 3)]


def test_nested_block_scalar():
    text = "formulas:\n  - id: f\n    notes: >-\n      see [[a]]\n      and [[b]]\n"
    assert positions(text, path=("formulas", 0, "notes")) == [(4, 11), (5, 11)]


def test_tag_and_anchor_before_scalar():
    text = "body: &x !!str see [[a]]\nother: !!str | # [[c]]\n  [[d]]\n"
    assert positions(text) == [(1, 20)]
    assert positions(text, path=("other",)) == [(3, 3)]


def test_flow_mapping():
    text = '{id: x, body: "see [[a]]"}\n'
    assert positions(text) == [(1, 20)]


def test_non_ascii_columns_count_characters():
    text = 'body: "héé — [[a]] 😀 [[b]]"\n'
    assert positions(text) == [(1, 14), (1, 22)]


def test_overlapping_brackets():
    text = 'body: "x [[[a]]] [[b]]"\n'
    assert positions(text) == [(1, 11), (1, 18)]


def test_crlf_text():
    text = "id: x\r\nbody: |\r\n  first [[a]]\r\n\r\n  last [[b]]\r\nplain: one [[c]]\r\n  two [[d]]\r\n"
    assert positions(text) == [(3, 9), (5, 8)]
    assert positions(text, path=("plain",)) == [(6, 12), (7, 7)]


def test_bom_text():
    text = "\ufeffbody: see [[a]] and\n  [[b]]\nnext: |\n  [[c]]\n"
    assert positions(text) == [(1, 11), (2, 3)]
    assert positions(text, path=("next",)) == [(4, 3)]
    assert _at(text, 1, 11).startswith("[[a]]")
    # the pure-Python loader counts the BOM in its index: same answer
    assert positions(text, loader=yaml.SafeLoader, bom_in_index=True) == [
        (1, 11),
        (2, 3),
    ]


def test_bom_and_crlf_text():
    text = "\ufeffid: x\r\nbody: >\r\n  one [[a]]\r\n  two [[b]]\r\n"
    assert positions(text) == [(3, 7), (4, 7)]


def test_offset_that_is_not_a_link_falls_back_to_scalar_start():
    text = "id: x\nbody: see [[a]]\n"
    node = _find(yaml.compose(text, Loader=yaml.CSafeLoader), ("body",))
    assert source_position(text, node.start_mark.index, node.end_mark.index, None, node.value, 0) == (2, 7)


def test_comments_after_the_scalar_are_not_counted():
    text = "body: see [[a]]  # [[c]]\nblock: |\n  a [[x]]\n# note [[y]]\n  # [[z]]\nnext: 1\n"
    assert positions(text) == [(1, 11)]
    assert positions(text, path=("block",)) == [(3, 5)]


@pytest.mark.parametrize("loader, bom_in_index", [(yaml.CSafeLoader, False), (yaml.SafeLoader, True)])
def test_both_loaders_agree(loader, bom_in_index):
    text = "\ufeffid: x\r\nbody: |-\r\n  one [[a]]\r\n  two `[[no]]` [[b]]\r\nq: 'x [[c]]'\r\n"
    assert positions(text, loader=loader, bom_in_index=bom_in_index) == [
        (3, 7),
        (4, 16),
    ]
    assert positions(text, path=("q",), loader=loader, bom_in_index=bom_in_index) == [(5, 7)]

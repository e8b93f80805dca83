"""flopkb.load.positions: lines as git counts them, and offsets inside scalars mapped to the file in one pass."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from flopkb.links.prose import parse as parse_prose
from flopkb.load import source as source_module
from flopkb.load.positions import LINK_START, NON_BLANK, LineIndex
from flopkb.load.source import Source, parse


@pytest.fixture(params=["libyaml", "pure-python"], autouse=True)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with libyaml and with the pure-Python parser PyYAML falls back to without it."""
    if request.param == "pure-python":
        monkeypatch.setattr(source_module, "_Loader", source_module._loader_class(libyaml=False, bounded=False))
        monkeypatch.setattr(source_module, "_FastLoader", None)
    return str(request.param)


def _parsed(text: str) -> Source:
    source, problems = parse(text.removeprefix("\ufeff"), "f.yaml")  # as decode() hands it over
    assert source is not None and not problems, problems
    return source


def positions(text: str, path: tuple[str | int, ...] = ("body",)) -> list[tuple[int, int]]:
    """Where each link of the scalar at `path` stands, as `check` reports it."""
    source = _parsed(text)
    value = source.data
    for part in path:
        value = value[part]
    scalar = source.scalar_map(path, value, LINK_START)
    assert scalar is not None
    return [scalar.position(link.offset) for link in parse_prose(value).links]


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
    assert _parsed(text).data["body"] == "folded [[a]] continues [[b]]\nnew para [[c]]\n"
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
    assert _parsed(text).data["body"] == "  indented [[a]]\n[[b]] flush\n"
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


def test_bom_and_crlf_text():
    text = "\ufeffid: x\r\nbody: >\r\n  one [[a]]\r\n  two [[b]]\r\n"
    assert positions(text) == [(3, 7), (4, 7)]


def test_comments_after_the_scalar_are_not_counted():
    text = "body: see [[a]]  # [[c]]\nblock: |\n  a [[x]]\n# note [[y]]\n  # [[z]]\nnext: 1\n"
    assert positions(text) == [(1, 11)]
    assert positions(text, path=("block",)) == [(3, 5)]


# --------------------------------------------------------------------------
# Lines as git counts them


@pytest.mark.parametrize("not_a_break", ["\r", "\x85", "\u2028", "\u2029"])
def test_only_line_feeds_end_lines(not_a_break: str) -> None:
    text = f"a: 'one{not_a_break}two'\nb: 2\n"
    source = _parsed(text)
    assert source.position(("b",)) == (2, 4)
    assert source.position(("b",), key=True) == (2, 1)


def test_crlf_is_one_break_and_its_cr_ends_the_line() -> None:
    index = LineIndex("a\r\nbc\r\n")
    assert [index.position(i) for i in range(6)] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
    assert index.offset(2, 2) == 4


@pytest.mark.parametrize(
    ("text", "end"), [("a: 1\nb: x\n", (2, 5)), ("a: 1\nb: x", (2, 5)), ("a\r\n", (1, 2)), ("", (1, 1))]
)
def test_the_end_of_the_text_is_inside_its_last_line(text: str, end: tuple[int, int]) -> None:
    assert LineIndex(text).inside(len(text)) == end


_LINE = st.text(st.sampled_from("ab é:-#'\"[]{}|>"), max_size=12)


@given(st.lists(st.tuples(st.sampled_from(["k1", "k2", "k3", "k4"]), _LINE), min_size=1, max_size=6), st.booleans())
def test_without_other_breaks_positions_are_libyaml_marks(fields: list[tuple[str, str]], crlf: bool) -> None:
    newline = "\r\n" if crlf else "\n"
    text = "".join(f"{key}: {value}{newline}" for key, value in dict(fields).items())
    try:
        root = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return
    index = LineIndex(text)
    stack = [root]
    while stack:
        node = stack.pop()
        for mark in (node.start_mark, node.end_mark):
            assert index.position(mark.index) == (mark.line + 1, mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


# --------------------------------------------------------------------------
# One pass per scalar


def test_one_map_per_scalar_however_many_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    from flopkb.load import positions as positions_module

    built = []
    original = positions_module.ScalarMap.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(args[-2][:10])
        original(self, *args, **kwargs)

    monkeypatch.setattr(positions_module.ScalarMap, "__init__", counting)
    text = "body: see " + " ".join(f"[[t{i}]]" for i in range(2000)) + "\n"
    found = positions(text)
    assert found == [(1, 1 + text.index(f"[[t{i}]]")) for i in range(2000)]
    assert len(built) == 1


def test_expressions_are_aligned_on_non_blank_characters() -> None:
    text = "f:\n  expr: >-\n    a +\n    b * c\n"
    source = _parsed(text)
    value = source.data["f"]["expr"]
    scalar = source.scalar_map(("f", "expr"), value, NON_BLANK)
    assert scalar is not None
    assert [scalar.position(value.index(name)) for name in "abc"] == [(3, 5), (4, 5), (4, 9)]
    assert scalar.position(len(value)) == (4, 10)  # past the end: just after the last character

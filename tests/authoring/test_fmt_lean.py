"""`fmt` of many small values: formatted once and for all with every comment kept, a text already formatted not
checked again, ruamel.yaml's components made lean (`roundtrip._LEAN`; that they write what ruamel.yaml's own write is
held by `test_fmt_roundtrip`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from ruamel.yaml.nodes import ScalarNode
from test_fmt_roundtrip import GENERATED, HEAD, PATH, formatting, small_values

from cost import calls
from flopkb.authoring import fmt, roundtrip
from flopkb.authoring.comments import comment_texts
from flopkb.load import source
from flopkb.load.source import compose


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_values())
def test_small_values_format_once_and_for_all_with_every_comment(text: str) -> None:
    formatted, refusal, problems = formatting(text)
    assert formatted is not None, (refusal, problems)
    assert comment_texts(formatted, compose(formatted)) == comment_texts(text, compose(text))  # type: ignore[arg-type]
    assert formatting(formatted) == (formatted, None, [])


def test_each_text_is_composed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text's node tree (PyYAML's composer, in Python for a record of many values: 0.4 s a megabyte) is made once
    for each text: the original, ruamel.yaml's dump, and the formatted text when it is new (checked to hold the same
    data and comments); a text already formatted holds its own and is not checked again."""
    composed: list[str] = []

    def counted(text: str, loader: type | None = None) -> Any:
        composed.append(text)
        return compose(text, loader)

    monkeypatch.setattr(source, "compose", counted)
    monkeypatch.setattr(fmt, "compose", counted)
    messy = GENERATED["commented tags"].replace("kind: fact\n", "") + "kind: fact\n"
    formatted = fmt.format_text(messy, PATH)
    assert isinstance(formatted, str) and formatted != messy
    bare = roundtrip.dump(roundtrip.load(formatted))
    assert sorted(composed) == sorted([messy, bare, formatted])
    composed.clear()
    assert fmt.format_text(formatted, PATH) == formatted
    assert sorted(composed) == sorted([formatted, bare])


SMALL = HEAD + "extra:\n" + "".join(f"  - [{index}, {index}.5, 'a{index}', ~]\n" for index in range(150))


def test_the_lean_components_do_a_fifth_less_work() -> None:
    """Python calls of ruamel.yaml's load and dump of 600 small values: with the lean components, under four fifths
    of what its own components make (0.72 with ruamel.yaml 0.19.1, 0.77 with 0.18.0, the lowest version
    pyproject.toml allows; without the composer 0.85, without the serializer 0.81)."""
    work = lambda: roundtrip.dump(roundtrip.load(SMALL))  # noqa: E731
    work()  # the resolver's table of expressions made
    lean = calls(work)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(roundtrip, "_LEAN", {})
        own = calls(work)
    assert lean < 4 / 5 * own


def test_a_tag_is_decoded_once_not_once_a_node() -> None:
    """ruamel.yaml makes a `Tag` for each node it represents or resolves, and decodes each one's suffix character by
    character when it is compared: a fifth of a dump."""
    represented = roundtrip._LeanRepresenter().represent_data([f"a{index}" for index in range(10)] + [1, 2])
    assert len({id(node.ctag) for node in represented.value}) == 2  # one for the strings, one for the numbers
    resolver = roundtrip._LeanResolver()
    assert {id(resolver.resolve(ScalarNode, value, (True, False))) for value in ("1", "2", "30")} == {
        id(roundtrip._tag("tag:yaml.org,2002:int"))
    }

"""'Did you mean': two letters typed in the wrong order are one slip, and the name they come from is offered first."""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from flopkb.report.hints import closest
from kbfixture import compile_kb, write_kb

IDS = st.text(alphabet="abcdefgh0123456789-", min_size=3, max_size=30)


@given(IDS, st.data(), st.lists(IDS, max_size=20))
def test_an_id_with_two_neighbours_swapped_is_offered_first(
    original: str, data: st.DataObject, others: list[str]
) -> None:
    at = data.draw(st.integers(0, len(original) - 2))
    typed = original[:at] + original[at + 1] + original[at] + original[at + 2 :]
    assume(typed != original)
    cut = data.draw(st.integers(0, len(typed) - 1))
    shorter = typed[:cut] + typed[cut + 1 :]  # one letter fewer: as near by plain edit distance, nearer by Indel's
    choices = [name for name in [shorter, *others] if name not in (typed, original)]
    # another name one transposition away, made of the same letters, would tie with it
    assume(not any(OSA.distance(typed, name) <= 1 and sorted(name) == sorted(typed) for name in choices))
    assert closest(typed, [*choices, original])[0] == original
    assert closest(typed, [original, *choices])[0] == original


def test_a_measurement_anchor_with_two_digits_swapped_is_offered_the_one_meant(tmp_path: Path) -> None:
    measurements = "".join(
        f"  - {{id: gain-bs{size}, quantity: q, basis: measured, where: setup, value: 2}}\n" for size in (4, 16, 64)
    )
    source = "id: sources/s\nkind: source\ntitle: T\nmeasurements:\n" + measurements
    flop = "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: See [[sources/s#gain-bs46]].\n"
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": flop, "records/sources/s.yaml": source}))
    [diagnostic] = [d for d in kb.diagnostics if d.code == "dangling-anchor"]
    assert (diagnostic.line, diagnostic.column) == (4, 18)
    assert diagnostic.message.endswith("sources/s has no measurement 'gain-bs46'")
    assert diagnostic.hint == "did you mean gain-bs64 or gain-bs4?"

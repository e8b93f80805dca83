"""Fuzzing `flopkb fmt` (the formatter an author's editor runs on save, and the pre-commit hook on a pull request's
files): the project's records mutated as `test_fuzz.py` mutates them.

Every input must give an outcome, never an exception: the formatted text, the problems that keep it from having one,
or a refusal in words. A formatted text is canonical: formatting it again changes nothing.
"""

from __future__ import annotations

import os

import pytest
from harness import REPOSITORY, record_files
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mutations import FAMILIES, Mutation, mutated

from flopkb.authoring.fmt import format_bytes

EXAMPLES = int(os.environ.get("FLOPKB_FUZZ_EXAMPLES", "120")) // 2
ORIGINALS = {rel: (REPOSITORY / rel).read_bytes() for rel in record_files(REPOSITORY)}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_mutated_records_are_formatted_or_refused_in_words_and_formatting_is_idempotent(family: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(rel=st.sampled_from(sorted(ORIGINALS)), mutations=st.lists(FAMILIES[family], min_size=1, max_size=3))
    def formatted(rel: str, mutations: list[Mutation]) -> None:
        outcome = format_bytes(mutated(ORIGINALS[rel], mutations), rel)
        assert outcome.text is None or not (outcome.problems or outcome.refusal), outcome
        if outcome.text is not None:
            again = format_bytes(outcome.text.encode("utf-8"), rel)
            assert (again.text, again.problems, again.refusal) == (outcome.text, [], None)

    formatted()

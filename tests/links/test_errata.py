"""Errata (`erratum-quote-missing`), the `placeholder` draft warning, and what a record's evidence says (its
standing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from flopkb.cli import main
from flopkb.links.debt import DISAGREES, DRAFT, HAS_ERRATA, NO_SOURCES, SOURCED, UNVERIFIED_FIGURES
from flopkb.links.errata import quote_pattern
from flopkb.load.placeholders import TEMPLATES, placeholder_sentences
from kbfixture import accelerator, compile_kb, located, write_kb

IGNORE = ("orphan",)
SOURCE = "id: sources/paper\nkind: source\ntitle: A paper\nurl: https://example.org/paper\n"
FLOP = """\
id: flops/f
kind: flop
category: memory-bandwidth
description: |
  Speculation raises arithmetic intensity
  from 1 to k on both passes.
sources: [sources/paper]
"""


def kb_with(tmp_path: Path, flop: str, **more: str):
    files = {"records/sources/paper.yaml": SOURCE, "records/flops/f.yaml": flop, **more}
    return compile_kb(write_kb(tmp_path, files))


def erratum(quote: str, field: str = "description", basis: str = "derived", extra: str = "") -> str:
    return (
        f"errata:\n  - field: {field}\n    quote: {quote}\n    correction: Only the verify pass gains.{extra}\n"
        f"    basis: {basis}\n"
    )


def test_an_erratum_whose_words_stand_in_its_field_is_kept_and_found_across_a_line_break(tmp_path: Path) -> None:
    kb = kb_with(tmp_path, FLOP + erratum("arithmetic intensity from 1 to k"))
    assert located(kb, ignore=IGNORE) == []
    [item] = kb.evidence.errata
    assert (item.record, item.number, item.in_field, item.found) == ("flops/f", 1, "description", True)
    assert kb.evidence.standing("flops/f") == HAS_ERRATA


def test_a_quote_that_is_not_in_its_field_is_an_error_at_the_quote(tmp_path: Path) -> None:
    kb = kb_with(tmp_path, FLOP + erratum("from 1 to k on one pass"))
    assert located(kb, ignore=IGNORE) == [("erratum-quote-missing", "records/flops/f.yaml", 10, 12)]
    [message] = [d.message for d in kb.diagnostics if d.code == "erratum-quote-missing"]
    assert "'from 1 to k on one pass'" in message and "description" in message


def test_a_quote_of_another_field_is_missing_too(tmp_path: Path) -> None:
    flop = FLOP + "notes: Other words.\n"
    wrong = kb_with(tmp_path / "a", flop + erratum("Other words", "description"))
    assert [code for code, *_ in located(wrong, ignore=IGNORE)] == ["erratum-quote-missing"]
    assert located(kb_with(tmp_path / "b", flop + erratum("Other words", "notes")), ignore=IGNORE) == []


def test_a_field_that_is_no_text_of_the_record_is_invalid(tmp_path: Path) -> None:
    assert located(kb_with(tmp_path, FLOP + erratum("x", "scales_with[3].effect")), ignore=IGNORE) == [
        ("invalid-value", "records/flops/f.yaml", 9, 12)
    ]


def test_a_required_field_that_is_no_text_is_invalid_for_an_erratum(tmp_path: Path) -> None:
    hw = accelerator("hw/a", memory_bandwidth="4 TB/s") + erratum("four TB/s", "specs")
    found = [(code, path) for code, path, *_ in located(kb_with(tmp_path, FLOP, **{"records/hw/a.yaml": hw}))]
    assert ("invalid-value", "records/hw/a.yaml") in found, "specs is required, but no text: nothing else tells"


def test_a_cited_correction_needs_sources_and_its_links_are_checked(tmp_path: Path) -> None:
    text = FLOP + erratum("on both passes", basis="cited", extra=" See [[sources/nowhere]].")
    assert sorted(code for code, *_ in located(kb_with(tmp_path, text), ignore=IGNORE)) == [
        "dangling-link",
        "missing-source",
    ]


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40), st.data())
def test_every_slice_of_a_text_is_found_by_its_quote_pattern(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    if quote.split():
        assert quote_pattern(quote).search(text) is not None


# Standings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flop", "standing"),
    [
        (FLOP, SOURCED),
        (FLOP.replace("sources: [sources/paper]\n", ""), NO_SOURCES),
        (FLOP + erratum("on both passes"), HAS_ERRATA),
        (
            FLOP + "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: E.\n    basis: unverified\n"
            "    values_for: [hw/a]\n",
            UNVERIFIED_FIGURES,
        ),
        (FLOP.replace("Speculation raises", "Replace this sentence with the fact. Speculation raises"), DRAFT),
    ],
)
def test_a_record_s_standing_is_the_worst_thing_its_evidence_says(tmp_path: Path, flop: str, standing: str) -> None:
    hw = accelerator("hw/a", memory_bandwidth="1 TB/s")
    kb = kb_with(tmp_path, flop, **{"records/hw/a.yaml": hw})
    assert kb.evidence.standing("flops/f") == standing


def test_a_formula_that_disagrees_with_a_measurement_is_not_sourced(tmp_path: Path) -> None:
    source = SOURCE + (
        "measurements:\n  - id: m\n    quantity: q\n    value: 2\n    basis: measured\n    where: Table 1\n"
    )
    flop = FLOP + "formulas:\n  - id: g\n    expr: '1'\n    expect:\n      - measured: sources/paper#m\n"
    kb = kb_with(tmp_path, flop, **{"records/sources/paper.yaml": source})
    assert kb.evidence.standing("flops/f") == DISAGREES
    assert kb.evidence.standing("sources/paper") == SOURCED


@pytest.mark.parametrize("kind", ["flop", "fact", "engine", "accelerator"])
def test_a_freshly_scaffolded_record_is_a_draft_and_strict_fails_on_it(tmp_path: Path, kind: str) -> None:
    root = write_kb(tmp_path, {"records/sources/paper.yaml": SOURCE})
    runner = CliRunner()
    created = runner.invoke(main, ["new", kind, f"drafts/{kind}-one", "--root", str(root)])
    assert created.exit_code == 0, created.output
    kb = compile_kb(root)
    assert kb.evidence.standing(f"drafts/{kind}-one") == DRAFT
    drafts = 2 if kind == "accelerator" else 1  # its vendor's sentence, and its empty specs
    assert [code for code, *_ in located(kb, ignore=IGNORE)] == ["placeholder"] * drafts
    assert runner.invoke(main, ["check", "--root", str(root)]).exit_code == 0
    assert runner.invoke(main, ["check", "--strict", "--root", str(root)]).exit_code == 1


def test_the_placeholder_sentences_are_the_templates_own() -> None:
    sentences = placeholder_sentences()
    assert "Replace this sentence with the fact." in sentences
    assert "A way to avoid or reduce the cost." in sentences  # from a template's commented example
    templates = " ".join(" ".join(path.read_text().split()) for path in TEMPLATES.glob("*.yaml.j2"))
    assert all(sentence in templates for sentence in sentences)


def test_a_record_that_quotes_a_template_sentence_in_code_is_still_a_draft_only_where_it_stands(tmp_path: Path) -> None:
    kb = kb_with(tmp_path, FLOP + "notes: The template says `Replace this sentence with the fact.`\n")
    [(code, _, line, _)] = located(kb, ignore=IGNORE)
    assert (code, line) == ("placeholder", 8)


@pytest.mark.parametrize(
    ("notes", "where"),
    [
        ("notes: |\n  Our own words first.\n  Replace this sentence with the fact.\n", (10, 3)),
        ("notes: >-\n  Ours, then Replace this\n  sentence with the fact.\n", (9, 14)),
        ("notes: 'Ours. Replace this sentence with the fact.'\n", (8, 15)),
    ],
)
def test_a_placeholder_is_told_where_its_sentence_starts(tmp_path: Path, notes: str, where: tuple[int, int]) -> None:
    kb = kb_with(tmp_path, FLOP + notes)
    [(code, _, line, column)] = located(kb, ignore=IGNORE)
    assert (code, line, column) == ("placeholder", *where)

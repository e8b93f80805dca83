"""A list item left out by validation (a required part wrong) is told once, where it is: a link to it from its own
record or another is not told to dangle as well, nor is the record told it is a draft for specs all left out.

What a left-out item tells as written (its links, its expression's syntax) is told in the same run, and what needs it
in the model (its claims judged) once it is fixed: docs/cli.md says so, and the tests below hold it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbfixture import H100, compile_kb, write_kb

FLOP = "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: d\n"
SOURCE = "id: src/q\nkind: source\ntitle: Q\nmeasurements:\n"
MEASUREMENT = "  - id: m\n    quantity: q\n    value: 6\n    basis: bogus\n    where: T1\n"
BASIS = ("unknown-term", 8, 12, "'bogus' is not a term of 'basis' in schema/vocabulary.yaml")
BOTH = ("invalid-value", 6, 5, "formulas[0]: a formula has exactly one of 'expr' and 'ref'")
TOLD = {
    "a measurement left out, linked and claimed from another record": (
        {
            "records/src/q.yaml": SOURCE + MEASUREMENT,
            "records/flops/x.yaml": FLOP + "notes: see [[src/q#m]]\nformulas:\n  - id: f\n    expr: 2 * 3\n"
            "    expect:\n      - measured: src/q#m\n",
        },
        [("records/src/q.yaml", *BASIS)],
    ),
    "a measurement left out, linked from its own record": (
        {"records/src/q.yaml": SOURCE + MEASUREMENT + "notes: see [[src/q#m]]\n"},
        [("records/src/q.yaml", *BASIS)],
    ),
    "a formula left out, linked and borrowed from another record": (
        {
            "records/flops/x.yaml": FLOP + "formulas:\n  - id: f\n    expr: 2 * 3\n    ref: flops/y#g\n",
            "records/flops/y.yaml": FLOP.replace("flops/x", "flops/y") + "notes: see [[flops/x#f]]\nformulas:\n"
            "  - id: g\n    ref: flops/x#f\n",
        },
        [("records/flops/x.yaml", *BOTH)],
    ),
    "an accelerator whose every spec is left out": (
        {
            "records/hw/h100.yaml": "id: hw/h100\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth:\n"
            "    value: 3.35 TB/s\n    basis: bogus\n"
        },
        [("records/hw/h100.yaml", "unknown-term", 7, 12, BASIS[3])],
    ),
}


def _told(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int, int, str]]:
    kb = compile_kb(write_kb(tmp_path, {"records/hw/h100.yaml": H100, **files}))
    return [(d.path, d.code, d.line, d.column, d.message) for d in kb.diagnostics if d.code != "orphan"]


@pytest.mark.parametrize(("files", "told"), TOLD.values(), ids=TOLD.keys())
def test_an_item_left_out_is_told_once_and_nothing_follows_from_it(
    tmp_path: Path, files: dict[str, str], told: list[tuple[str, str, int, int, str]]
) -> None:
    assert _told(tmp_path, files) == told


def test_a_link_to_an_item_that_is_not_there_still_dangles(tmp_path: Path) -> None:
    files = {"records/src/q.yaml": SOURCE + MEASUREMENT + "notes: see [[src/q#n]]\n"}
    assert [code for _, code, *_ in _told(tmp_path, files)] == ["unknown-term", "dangling-anchor"]


def test_a_left_out_item_s_links_are_told_with_it_and_what_needs_the_model_waits_for_its_fix(tmp_path: Path) -> None:
    claim = "      - value: 6\n        measured: src/q#m\n        where: {nope: 1}\n        hardware: hw/nowhere\n"
    files = {"records/flops/x.yaml": FLOP + "formulas:\n  - id: f\n    expr: 2 * 3\n    expect:\n" + claim}
    assert [told[1:] for told in _told(tmp_path, files)] == [
        ("invalid-value", 9, 9, "formulas[0].expect[0]: a claim has exactly one of 'value' and 'measured'"),
        ("dangling-ref", 10, 19, "formulas[0].expect[0].measured: 'src/q#m' resolves to no record"),
        ("dangling-ref", 12, 19, "formulas[0].expect[0].hardware: 'hw/nowhere' resolves to no record"),
    ]  # not that `where` names no input of the formula: the claim is judged against its formula once it is whole


def test_a_part_of_a_left_out_item_that_the_schema_told_wrong_is_told_that_alone(tmp_path: Path) -> None:
    formula = "  - id: '42'\n    expr: 2 * hw.memory_bandwidth\n    expect:\n      - value: 6\n"
    files = {"records/flops/x.yaml": FLOP + "formulas:\n" + formula + "        hardware: ' hw/h100'\n"}
    assert [told[1:4] for told in _told(tmp_path, files)] == [("invalid-value", 6, 9), ("invalid-value", 10, 19)]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("mnop"), st.booleans()), min_size=1, max_size=4, unique_by=lambda item: item[0]),
    st.sets(st.sampled_from("mnopq"), min_size=1),
)
def test_a_link_dangles_exactly_when_no_item_of_the_file_has_its_id(
    items: list[tuple[str, bool]], linked: set[str]
) -> None:
    """Measurements, each whole or left out (its basis no term), and links to some ids: those that no measurement
    of the file has, whole or left out, dangle; no other does."""
    measurements = "".join(
        f"  - {{id: {name}, quantity: q, value: 6, basis: {'measured' if whole else 'bogus'}, where: T1}}\n"
        for name, whole in items
    )
    notes = "notes: see " + " ".join(f"[[src/q#{name}]]" for name in sorted(linked)) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        told = _told(Path(folder), {"records/src/q.yaml": SOURCE + measurements + notes})
    dangling = {message.split("'")[-2] for _, code, _, _, message in told if code == "dangling-anchor"}
    assert dangling == linked - {name for name, _ in items}
    assert sum(code == "unknown-term" for _, code, *_ in told) == sum(not whole for _, whole in items)


BAD_ID = ("invalid-value", 6, 9, "formulas[0].id: 'Bad Name' is not a formula id ([a-z][a-z0-9_-]*)")
ID_TOLD = {
    "a formula's id, and its expression": (
        "  - id: Bad Name\n    expr: 2 *\n",
        [BAD_ID, ("formula-syntax", 7, 11, "expr: invalid syntax")],
    ),
    "a formula's id, and its claim": (
        "  - id: Bad Name\n    expr: 2 * 3\n    expect:\n      - value: 7\n",
        [BAD_ID, ("claim-mismatch", 9, 16, "expect[0] states 7, computes 6 (off by 17%, tolerance 1%)")],
    ),
    # Not renamed where the name is taken, or would be twice: left out, told once each, no duplicate told; what its
    # expression tells as written is told with it.
    "a formula's id, the name taken": (
        "  - id: Bad Name\n    expr: 2 *\n  - id: bad_name\n    expr: '1'\n",
        [BAD_ID, ("formula-syntax", 7, 11, "expr: invalid syntax")],
    ),
    "two formulas' ids, one name": (
        "  - id: Bad Name\n    expr: 2 *\n  - id: BAD NAME\n    expr: '1'\n",
        [
            BAD_ID,
            ("formula-syntax", 7, 11, "expr: invalid syntax"),
            ("invalid-value", 8, 9, "formulas[1].id: 'BAD NAME' is not a formula id ([a-z][a-z0-9_-]*)"),
        ],
    ),
}


@pytest.mark.parametrize(("formulas", "told"), ID_TOLD.values(), ids=ID_TOLD.keys())
def test_an_item_whose_id_the_hint_renames_is_checked_as_renamed(
    tmp_path: Path, formulas: str, told: list[tuple[str, int, int, str]]
) -> None:
    found = _told(tmp_path, {"records/flops/x.yaml": FLOP + "formulas:\n" + formulas})
    assert [(code, line, column, message) for _, code, line, column, message in found] == told


def test_a_measurement_whose_id_the_hint_renames_is_checked_as_renamed(tmp_path: Path) -> None:
    measurement = "  - id: M One\n    quantity: q\n    value: 6 furlongs\n    basis: measured\n    where: T1\n"
    found = _told(tmp_path, {"records/src/q.yaml": SOURCE + measurement})
    assert [(code, line, column, message) for _, code, line, column, message in found] == [
        ("invalid-value", 5, 9, "measurements[0].id: 'M One' is not a measurement id ([a-z][a-z0-9_-]*)"),
        ("invalid-value", 7, 12, "measurements[0].value: unknown unit 'furlongs'"),
    ]


BODIES = (
    "    expr: 2 *\n",
    "    expr: 2 * 3\n",
    "    expr: x\n",
    "    ref: flops/nowhere#f\n",
    "    expr: 2 * 3\n    title: [T]\n",
)
CLAIMS = ("", "    expect:\n      - value: 7\n", "    expect:\n      - value: 6\n        rel_tol: lots\n")


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(BODIES), st.sampled_from(CLAIMS))
def test_a_wrong_id_adds_its_own_problem_to_what_the_renamed_item_tells(body: str, claims: str) -> None:
    told = []
    for name in ("Bad Name", "bad_name"):
        with tempfile.TemporaryDirectory() as folder:
            text = FLOP + f"formulas:\n  - id: {name}\n" + body + claims
            told.append(set(_told(Path(folder), {"records/flops/x.yaml": text})))
    assert told[0] - told[1] == {("records/flops/x.yaml", *BAD_ID)}
    assert told[1] <= told[0]


ROW = (
    "  - parameter: memory_bandwidth\n    effect: It moves{prose}.\n    basis: {basis}\n"
    "    values_for: [hw/h100{ref}]\n"
)
ERRATUM = "  - field: description\n    quote: d\n    correction: It is e{prose}.\n    basis: {basis}\n"
MEASURED = (
    "  - id: m{index}\n    quantity: q\n    value: {value}\n    basis: {basis}\n    where: T1\n"
    "    conditions: {{setting: 'on H100{prose}'}}\n"
)
FORMULA = "  - id: {basis}\n    expr: '{expr}'\n    hardware: [hw/h100{ref}]\n"
ITEMS = {
    "a row": (FLOP + "hardware_parameters:\n", ROW, ("bogus", "derived"), ("prose", "ref")),
    "an erratum": (FLOP + "errata:\n", ERRATUM, ("bogus", "derived"), ("prose",)),
    "a measurement": (
        "id: src/q\nkind: source\ntitle: Q\nmeasurements:\n",
        MEASURED,
        ("bogus", "measured"),
        ("prose",),
    ),
    "a formula": (FLOP + "formulas:\n", FORMULA, ("'42'", "f{index}"), ("ref",)),
}
"""Records of a list of items: the head of the record, an item (its basis, or a formula's id; the links it may
carry), what breaks the item in the schema and what fixes it, and where it may carry a link."""
DANGLING = {"prose": " with [[flops/nowhere]]", "ref": ", hw/nope"}
"""A dangling link an item carries, in its prose or as a ref."""


UNREADABLE = {"expr": ("2 * 3", "2 *"), "value": ("6 ms", "6 furlongs")}
"""A formula's expression, a measurement's value: one that reads, one that does not."""


def _item(template: str, basis: str, index: int, links: dict[str, str], unreadable: bool) -> str:
    written = {name: values[unreadable] for name, values in UNREADABLE.items()}
    return template.format(
        basis=basis.format(index=index), index=index, **written, **{**dict.fromkeys(DANGLING, ""), **links}
    )


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(sorted(ITEMS)), st.integers(0, 2), st.integers(0, 1), st.booleans())
def test_a_left_out_item_s_links_and_values_are_told_with_its_schema_problem_and_its_fix_adds_none(
    data: st.DataObject, name: str, before: int, after: int, unreadable: bool
) -> None:
    """A list's item broken in the schema, among whole ones, carrying a dangling link (in its prose, or a ref; a
    formula's expression or a measurement's value may not read either): one run tells its schema problem, the link
    and what does not read, at their places in the file; once the schema problem is fixed, the next run tells the
    rest as it was, and nothing more."""
    head, template, (broken, fixed), places = ITEMS[name]
    links = data.draw(st.sets(st.sampled_from(places), min_size=1))
    whole = [_item(template, fixed, index, {}, False) for index in range(before + 1 + after)]
    told = []
    for basis in (broken, fixed):
        carrying = _item(template, basis, before, {link: DANGLING[link] for link in links}, unreadable)
        rel = "records/src/q.yaml" if template is MEASURED else "records/flops/x.yaml"
        with tempfile.TemporaryDirectory() as folder:
            text = head + "".join([*whole[:before], carrying, *whole[before + 1 :]])
            told.append(set(_told(Path(folder), {rel: text})))
    broken_told, fixed_told = told
    assert fixed_told <= broken_told  # nothing new once fixed
    schema = broken_told - fixed_told
    assert len(schema) == 1 and next(iter(schema))[1] in ("unknown-term", "invalid-value")  # the schema problem alone
    dangling = {code for _, code, *_ in fixed_told if code.startswith("dangling")}
    assert dangling == {"dangling-link" if link == "prose" else "dangling-ref" for link in links}
    assert any(code == "formula-syntax" for _, code, *_ in fixed_told) == (template is FORMULA and unreadable)
    assert any(message.endswith("unknown unit 'furlongs'") for *_, message in fixed_told) == (
        template is MEASURED and unreadable
    )

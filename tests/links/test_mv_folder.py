"""`flopkb mv OLD/ NEW`: every record of a folder moved in one move, each as `flopkb mv` moves a record."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from flopkb.cli import main
from flopkb.config import load_config
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.mv import MoveError, move
from kbfixture import compile_kb, located, write_kb
from random_kb import initial

RIDGE = """\
id: facts/roof/ridge
kind: fact
title: Ridge point
statement: Past the ridge, [[facts/roof/deeper/peak]] holds; below it, [[peak|the bound]] does not.
"""

PEAK = """\
id: facts/roof/peak
kind: fact
aliases: [facts/summit]
statement: The peak, reached past [[ridge]] and at [[roof/ridge]].
"""

USER = """\
id: flops/user
kind: flop
category: arithmetic-intensity
description: See [[facts/roof/ridge]], [[roof/peak#x|the peak]] and [[facts/summit]].
"""

FILES = {
    "records/facts/roof/ridge.yaml": RIDGE,
    "records/facts/roof/deeper/peak.yaml": PEAK.replace("facts/roof/peak", "facts/roof/deeper/peak"),
    "records/flops/user.yaml": USER.replace("roof/peak#x", "deeper/peak"),
}


def mv(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["mv", "--root", str(root), *args])
    return result.exit_code, result.output


def landings(kb: KnowledgeBase) -> list[tuple[str, str, str | None]]:
    """Where every link of the base is written (the record and field) and the record it lands on."""
    return sorted(
        ((link.record, str(link.field), link.resolved) for group in kb.links.values() for link in group), key=str
    )


@pytest.mark.parametrize("given", ["facts/roof/", "facts/roof", "records/facts/roof"])
def test_a_folder_moves_every_record_in_it_and_every_link_lands_where_it_did(tmp_path: Path, given: str) -> None:
    root = write_kb(tmp_path, FILES)
    before = landings(compile_kb(root))
    status, output = mv(root, given, "facts/roofline")
    assert status == 0, output
    assert output.split("\n")[:2] == [
        "moved records/facts/roof/deeper/peak.yaml -> records/facts/roofline/deeper/peak.yaml",
        "moved records/facts/roof/ridge.yaml -> records/facts/roofline/ridge.yaml",
    ]
    assert not (root / "records/facts/roof").exists()
    kb = compile_kb(root)
    assert located(kb, ignore={"orphan", "placeholder"}) == []

    def moved(record_id: str | None) -> str | None:
        return record_id.replace("facts/roof/", "facts/roofline/") if record_id else record_id

    assert landings(kb) == sorted(((moved(record), field, moved(to)) for record, field, to in before), key=str)
    ridge = (root / "records/facts/roofline/ridge.yaml").read_text(encoding="utf-8")
    assert ridge == RIDGE.replace("id: facts/roof/ridge", "id: facts/roofline/ridge").replace(
        "title: Ridge point\n", "title: Ridge point\naliases: [facts/roof/ridge]\n"
    ).replace("[[facts/roof/deeper/peak]]", "[[facts/roofline/deeper/peak]]")
    assert (root / "records/flops/user.yaml").read_text(encoding="utf-8") == USER.replace(
        "[[facts/roof/ridge]]", "[[facts/roofline/ridge]]"
    ).replace("roof/peak#x", "deeper/peak").replace(  # a suffix still unique once all moved is left alone
        "[[facts/summit]]",
        "[[facts/roofline/deeper/peak]]",  # an alias, as `flopkb mv` of the record rewrites it
    )


def test_a_folder_dry_run_lists_every_move_and_writes_nothing(tmp_path: Path) -> None:
    root = write_kb(tmp_path, FILES)
    status, output = mv(root, "--dry-run", "facts/roof/", "facts/roofline")
    assert status == 0, output
    assert output == (
        "would move records/facts/roof/deeper/peak.yaml -> records/facts/roofline/deeper/peak.yaml\n"
        "would move records/facts/roof/ridge.yaml -> records/facts/roofline/ridge.yaml\n"
        "  records/facts/roofline/deeper/peak.yaml: 1 link rewritten\n"
        "  records/facts/roofline/ridge.yaml: 1 link rewritten\n"
        "  records/flops/user.yaml: 2 links rewritten\n"
        "  records/facts/roofline/deeper/peak.yaml: 'facts/roof/deeper/peak' added to aliases\n"
        "  records/facts/roofline/ridge.yaml: 'facts/roof/ridge' added to aliases\n"
    )
    assert {path.relative_to(root).as_posix() for path in (root / "records").rglob("*.yaml")} == set(FILES)


@pytest.mark.parametrize(
    ("old", "new", "extra", "message"),
    [
        (
            "facts/roof/",
            "facts/roofline",
            {"records/facts/roofline/ridge.yaml": RIDGE.replace("facts/roof/ridge", "facts/roofline/ridge")},
            "Error: facts/roof/ridge cannot move to facts/roofline/ridge: 'facts/roofline/ridge' is already the id of"
            " records/facts/roofline/ridge.yaml",
        ),
        (
            "facts/roof/",
            "facts/other",
            {"records/flops/user.yaml": USER.replace("kind: flop\n", "kind: flop\naliases: [facts/other/ridge]\n")},
            "Error: facts/roof/ridge cannot move to facts/other/ridge: 'facts/other/ridge' is an alias of flops/user",
        ),
        ("facts/roof/", "facts/roof/inner", {}, "Error: cannot move the folder facts/roof/ into itself"),
        (
            "facts/empty/",
            "facts/full",
            {"records/facts/empty/README.md": "notes\n"},
            "records/facts/empty/ holds no record",
        ),
        ("facts/roof/", "Facts/Roof", {}, "'Facts/Roof' is not a valid id"),
    ],
)
def test_a_folder_move_is_refused_whole_where_mv_would_refuse_one_of_its_records(
    tmp_path: Path, old: str, new: str, extra: dict[str, str], message: str
) -> None:
    root = write_kb(tmp_path, {**FILES, **extra})
    status, output = mv(root, old, new)
    assert status == 2 and message in output, output
    for rel, text in {**FILES, **extra}.items():
        assert (root / rel).read_text(encoding="utf-8") == text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), new=st.sampled_from(["gpu", "hw2/nv", "accelerators/hw", "src"]))
def test_a_folder_move_keeps_every_link_landing_on_the_same_record_or_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory, seed: int, new: str
) -> None:
    """On a random base (aliases, suffix links, broken files): the move of hw/ is made, and every link lands on the
    same record as before under its new id; or it is refused, and no file changed. Not where two records claim one
    id or alias (`duplicate-id`, an error): which one it names then follows the order of their files' paths, which
    the move changes."""
    root = write_kb(tmp_path_factory.mktemp("kb"), initial(random.Random(seed)))
    files = {path: path.read_bytes() for path in (root / "records").rglob("*") if path.is_file()}
    kb = compile_kb(root)
    assume(all(diagnostic.code != "duplicate-id" for diagnostic in kb.diagnostics))
    before = landings(kb)
    try:
        plan = move(load_config(root), "hw/", new)
    except MoveError:
        assert {path: path.read_bytes() for path in (root / "records").rglob("*") if path.is_file()} == files
        return
    assert plan.moved

    def moved(record_id: str | None) -> str | None:
        return f"{new}/{record_id[3:]}" if record_id is not None and record_id.startswith("hw/") else record_id

    assert landings(compile_kb(root)) == sorted(
        ((moved(record), field, moved(to)) for record, field, to in before), key=str
    )

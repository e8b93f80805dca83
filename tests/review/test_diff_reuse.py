"""The head side of a diff from the base side, when a commit edits records' prose alone (`flopkb.review.reuse`).

Through random sequences of prose edits (words added to a description, lines added above everything else, a link
written again, emphasis, a description given to an accelerator whose specs then move down, a notes block in a
source), sometimes with other edits beside them: the head side made from the base side equals the head compiled by
itself, from nothing, in every diagnostic, every record's evidence, formula results, edges and dependency key, and
orphans; the whole report equals the report of two sides compiled apart; and the reuse is taken whenever the edits
are prose alone.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from gitrepo import commit, git, init, replace_in
from test_diff_properties import _apart, random_repo

from flopkb.config import load_config
from flopkb.formulas import context
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.debt import DebtItem
from flopkb.links.memo import dependency_key
from flopkb.review import sides
from flopkb.review.compare import compare
from flopkb.review.git import Git, Revision
from flopkb.review.sides import compiled_sides
from kbfixture import compile_kb, write_kb
from random_kb import edit


def prose_edit(rng: random.Random, root: Path) -> bool:
    """One random edit of a record file's prose; False when it may change more than prose (a link to a record the
    file did not link to)."""
    files = sorted(path for path in (root / "records").rglob("*.yaml"))
    path = rng.choice(files)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    written = re.findall(r"\[\[([^\]#|]+)", text)
    action = rng.random()
    alone = True
    if "vendor: V\n" in text and "description" not in text and action < 0.6:  # an accelerator: its specs move down
        text = text.replace("vendor: V\n", "vendor: V\ndescription: |\n  Fast.\n  Wide.\n", 1)
    elif action < 0.3 and re.search(r"^(description|statement): ", text, re.MULTILINE):
        again = f" See [[{written[0]}]] again." if written else ""
        words = rng.choice([" Also this.", " It costs k*T per step.", again])
        text = re.sub(r"^((?:description|statement): .*)$", lambda m: m.group(1) + words, text, count=1, flags=re.M)
    elif action < 0.7 and len(lines) > 2 and not re.search(r"^notes:", text, re.MULTILINE):
        others = [file.relative_to(root / "records").with_suffix("").as_posix() for file in files]
        target = rng.choice([*written, None]) if rng.random() < 0.8 else rng.choice(others)
        alone = target is None or target in written
        block = "notes: |\n  Counted by hand.\n" + (f"  See [[{target}]].\n" if target else "") + "  More words.\n"
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith("kind:")), 1)
        text = "".join([*lines[:at], block, *lines[at:]])
    elif action < 0.85 and "effect: It moves." in text:
        moved = rng.choice(["effect: It moves, a lot.", "effect: |\n      It moves.\n      More.\n"])
        text = text.replace("effect: It moves.", moved, 1)
    else:
        text = text.replace("notes: |\n", "notes: |\n  A first line.\n", 1)
    path.write_text(text, encoding="utf-8")
    return alone


def assert_same_side(reused: KnowledgeBase, alone: KnowledgeBase, where: str) -> None:
    assert reused.entries.keys() == alone.entries.keys(), where
    assert reused.diagnostics == alone.diagnostics, where
    assert reused.edges == alone.edges, where
    assert reused.graph is not None and alone.graph is not None
    assert reused.graph.orphans() == alone.graph.orphans(), where
    assert reused.evidence is not None and alone.evidence is not None
    assert list(map(_placed, reused.evidence.debt)) == list(map(_placed, alone.evidence.debt)), where
    assert reused.evidence.dependents == alone.evidence.dependents, where
    assert list(map(_placed, reused.evidence.dependents)) == list(map(_placed, alone.evidence.dependents)), where
    for record_id in alone.entries:
        mine, theirs = reused.evidence.of(record_id), alone.evidence.of(record_id)
        assert mine == theirs, f"{where}: {record_id}"
        assert [_placed(item) for item in mine.own] == [_placed(item) for item in theirs.own], f"{where}: {record_id}"
        assert reused.evidence.standing(record_id) == alone.evidence.standing(record_id), f"{where}: {record_id}"
        assert dependency_key(reused, record_id) == dependency_key(alone, record_id), f"{where}: {record_id}"
        assert reused.entries[record_id].digest == alone.entries[record_id].digest, f"{where}: {record_id}"
    assert list(reused.formulas) == list(alone.formulas), where
    for record_id in alone.formulas:
        assert reused.formulas[record_id] == alone.formulas[record_id], f"{where}: {record_id}"


def _placed(item: DebtItem) -> tuple[object, ...]:
    """An unverified figure with its place in its file (which a `DebtItem` does not compare by)."""
    return item, item.file, item.line, item.column


@pytest.fixture
def reused(monkeypatch: pytest.MonkeyPatch) -> list[KnowledgeBase | None]:
    """What each diff's `second_side` gave: the head side from the base side, or None."""
    found: list[KnowledgeBase | None] = []
    second_side = sides.second_side

    def spied(*args: Any) -> KnowledgeBase | None:
        found.append(second_side(*args))
        return found[-1]

    monkeypatch.setattr(sides, "second_side", spied)
    return found


@pytest.mark.parametrize("seed", range(16))
def test_the_head_from_the_base_equals_the_head_alone(
    tmp_path: Path, seed: int, reused: list[KnowledgeBase | None]
) -> None:
    root = tmp_path / "kb"
    rng = random_repo(root, seed)
    config = load_config(root)
    taken = 0
    for step in range(6):
        before = git(root, "rev-parse", "HEAD").strip()
        alone = all([prose_edit(rng, root) for _ in range(rng.randint(1, 3))])
        if rng.random() < 0.2:
            edit(rng, root)
            alone = False
        after = commit(root, f"prose {step}")
        git_ = Git(root)
        comparison = git_.compare(f"{before}..{after}", {})
        where = f"seed {seed}, step {step}"
        reused[:] = [None]  # unless second_side is called
        with compiled_sides(config, git_, comparison) as (base, head):
            shared = compare(base, head, comparison).to_json()
            with _apart(config, git_, comparison.base) as old, _apart(config, git_, comparison.head) as new:
                assert shared == compare(old, new, comparison).to_json(), where
                if reused[-1] is not None:
                    taken += 1
                    assert_same_side(base.kb, old.kb, f"{where}, base")
                    assert_same_side(head.kb, new.kb, f"{where}, head")
        if alone and reused[-1] is None:
            assert _borrows_from_a_cycle(base.kb, root, before, after) or _some_broken(root, before, after), where
    assert taken, f"seed {seed}: the reuse was never taken"


def _borrows_from_a_cycle(kb: KnowledgeBase, root: Path, before: str, after: str) -> bool:
    """Whether a record the commit changed has no dependency key: it borrows from a cycle of formula refs."""
    changed = set(git(root, "diff", "--name-only", before, after).split())
    return any(dependency_key(kb, entry.id) is None for entry in kb.entries.values() if entry.path in changed)


def _some_broken(root: Path, before: str, after: str) -> bool:
    """Whether some file the commit changed is not a valid record on one of its sides (then nothing is reused)."""
    changed = git(root, "diff", "--name-only", before, after).split()
    for sha in (before, after):
        with _apart(load_config(root), Git(root), Revision(sha, sha)) as side:
            paths = {entry.path: entry for entry in side.kb.entries.values()}
            if any(rel not in paths or paths[rel].record is None for rel in changed):
                return True
    return False


def _both(root: Path, before: str, after: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reports of the sides compiled together and apart."""
    config, git_ = load_config(root), Git(root)
    comparison = git_.compare(f"{before}..{after}", {})
    with compiled_sides(config, git_, comparison) as (base, head):
        shared = compare(base, head, comparison).to_json()
    with _apart(config, git_, comparison.base) as base, _apart(config, git_, comparison.head) as head:
        return shared, compare(base, head, comparison).to_json()


ACCELERATOR = (
    "id: hw/a1\nkind: accelerator\nvendor: V\nspecs:\n  memory_bandwidth: {value: 3 TB/s, basis: unverified}\n"
)
"""An accelerator whose one spec is unverified."""
SOURCE = "id: src/s\nkind: source\ntitle: S\nurl: https://example.com\n"


def _flop(name: str, extra: str = "") -> str:
    return (
        f"id: flops/{name}\nkind: flop\ncategory: memory-bandwidth\ndescription: About [[hw/a1]].\n"
        "hardware_parameters:\n  - parameter: memory_bandwidth\n    effect: It moves.\n    basis: cited\n"
        f"    values_for: [hw/a1]\n    sources: [src/s]\n{extra}"
    )


def _fact(name: str, ref: str) -> str:
    statement = f"statement: See [[{ref.partition('#')[0]}]].\n"
    return f"id: facts/{name}\nkind: fact\n{statement}formulas:\n  - id: x\n    ref: {ref}\n"


def _repository(root: Path, files: dict[str, str]) -> str:
    write_kb(init(root), files)
    return commit(root, "a base")


def test_the_figures_an_edited_accelerator_moves_down_keep_the_count_of_their_users(
    tmp_path: Path, reused: list[KnowledgeBase | None]
) -> None:
    """Its `unverified-basis` warning stands at the spec's new line, and counts every record resting on the spec,
    not only those the edited record's checks read."""
    root = tmp_path / "kb"
    files = {"records/hw/a1.yaml": ACCELERATOR, "records/src/s.yaml": SOURCE}
    files.update({f"records/flops/p{n}.yaml": _flop(f"p{n}") for n in range(4)})
    before = _repository(root, files)
    replace_in(root / "records/hw/a1.yaml", "vendor: V\n", "vendor: V\ndescription: |\n  Fast.\n  Wide.\n")
    shared, apart = _both(root, before, commit(root, "a description"))
    assert shared == apart and reused[0] is not None
    (warning,) = [d for d in reused[0].diagnostics if d.code == "unverified-basis"]
    assert warning.line == 8 and str(warning.hint).endswith("; 4 other records rest on this figure")


def test_a_record_that_borrows_a_formula_is_checked_with_what_that_formula_computes_with(
    tmp_path: Path, reused: list[KnowledgeBase | None]
) -> None:
    """The edited record's inherited debt and values come through the formula it borrows, from an accelerator it
    does not link to itself."""
    root = tmp_path / "kb"
    own = 'formulas:\n  - id: own\n    expr: "hw.memory_bandwidth * 2 s"\n    unit: TB\n    hardware: [hw/a1]\n'
    files = {"records/hw/a1.yaml": ACCELERATOR, "records/src/s.yaml": SOURCE, "records/flops/p0.yaml": _flop("p0", own)}
    files["records/facts/f.yaml"] = _fact("f", "flops/p0#own")
    before = _repository(root, files)
    replace_in(root / "records/facts/f.yaml", "statement: See", "statement: |\n  Reworded.\n  See")
    shared, apart = _both(root, before, commit(root, "reworded"))
    head = reused[0]
    assert shared == apart and head is not None and head.evidence is not None
    assert head.evidence.of("facts/f").status == "inherited-debt"
    assert [result.id for result in head.formulas["facts/f"]] == ["x"]


def test_a_base_with_a_cycle_of_formula_refs_is_compiled_side_by_side(
    tmp_path: Path, reused: list[KnowledgeBase | None]
) -> None:
    """Which formula of a cycle reports it depends on which record was evaluated first: here a record outside the
    cycle that borrows from it, which the edited record's checks do not read."""
    root = tmp_path / "kb"
    borrows = {"a": "c", "b": "c", "c": "b"}  # b and c form the cycle; a comes first
    files = {f"records/facts/{name}.yaml": _fact(name, f"facts/{ref}#x") for name, ref in borrows.items()}
    before = _repository(root, files)
    replace_in(root / "records/facts/b.yaml", "statement: See", "statement: Now see")
    shared, apart = _both(root, before, commit(root, "reworded"))
    assert shared == apart and reused == [None]


def test_a_prose_link_to_a_record_no_other_linked_to_is_more_than_prose(
    tmp_path: Path, reused: list[KnowledgeBase | None]
) -> None:
    root = tmp_path / "kb"
    files = {"records/hw/a1.yaml": ACCELERATOR, "records/src/s.yaml": SOURCE, "records/flops/p0.yaml": _flop("p0")}
    files["records/flops/p1.yaml"] = _flop("p1")
    before = _repository(root, files)
    replace_in(root / "records/flops/p0.yaml", "About [[hw/a1]].", "About [[hw/a1]] and [[flops/p1]].")
    shared, apart = _both(root, before, commit(root, "a link"))
    assert shared == apart and reused == []
    assert [(d["path"], d["code"]) for d in shared["diagnostics"]["fixed"]] == [("records/flops/p1.yaml", "orphan")]


def test_a_record_outside_a_cycle_of_formula_refs_is_checked_from_the_base(
    tmp_path: Path, reused: list[KnowledgeBase | None]
) -> None:
    root = tmp_path / "kb"
    borrows = {"b": "c", "c": "b"}
    files = {f"records/facts/{name}.yaml": _fact(name, f"facts/{ref}#x") for name, ref in borrows.items()}
    files.update(
        {"records/hw/a1.yaml": ACCELERATOR, "records/src/s.yaml": SOURCE, "records/flops/p0.yaml": _flop("p0")}
    )
    before = _repository(root, files)
    replace_in(root / "records/flops/p0.yaml", "About [[hw/a1]].", "|\n  About [[hw/a1]],\n  reworded.")
    shared, apart = _both(root, before, commit(root, "reworded"))
    assert shared == apart and reused[0] is not None


def test_a_base_over_its_limit_of_values_is_compiled_side_by_side(
    tmp_path: Path, reused: list[KnowledgeBase | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which records the base's limit of values refuses depends on the records evaluated before them."""
    monkeypatch.setattr(context, "BASE_VALUE_LIMIT", 10)
    root = tmp_path / "kb"
    sweep = 'formulas:\n  - id: own\n    expr: "B * 2"\n    unit: "1"\n    inputs: {B: [1, 2, 3, 4]}\n'
    files = {f"records/flops/p{n}.yaml": _flop(f"p{n}", sweep) for n in range(3)}
    files.update({"records/hw/a1.yaml": ACCELERATOR, "records/src/s.yaml": SOURCE})
    before = _repository(root, files)
    replace_in(root / "records/flops/p2.yaml", "About [[hw/a1]].", "About [[hw/a1]], reworded.")
    shared, apart = _both(root, before, commit(root, "reworded"))
    assert shared == apart and reused == [None]
    refused = [d.path for d in compile_kb(root).diagnostics if "values in all" in d.message]
    assert refused == ["records/flops/p2.yaml"]

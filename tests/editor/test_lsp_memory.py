"""The server keeps the base of its latest check, not one per keystroke: a base a newer check replaces is released
and freed at once, without the full collections that took seconds at 10,000 records."""

from __future__ import annotations

import gc
from pathlib import Path

from flopkb.config import load_config
from flopkb.editor.checked import Buffer
from flopkb.editor.checker import Checker
from flopkb.kb.knowledge_base import KnowledgeBase
from kbfixture import H100, write_kb


def bases_alive(root: Path) -> int:
    """The bases of the knowledge base at `root` the process holds (other tests' servers run in it too)."""
    gc.unfreeze()  # the stages freeze what they allocated, out of `get_objects`' view: counted too
    return sum(isinstance(thing, KnowledgeBase) and thing.config.root == root for thing in gc.get_objects())


def type_a_character(checker: Checker, version: int) -> int:
    """The version of the buffer the check after typing checked (no reference to that check is kept)."""
    typed = H100 + "#" * version + "\n"
    checked = checker.wait(checker.update({"records/hw/h100.yaml": Buffer(typed, version)}))
    assert checked is not None
    return checked.buffers["records/hw/h100.yaml"].version


def test_the_bases_of_earlier_checks_are_freed_without_a_collection(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {"records/hw/h100.yaml": H100})
    config = load_config(root)
    gc.collect()
    gc.disable()  # what is freed is freed by reference counting alone
    checker = Checker(config)
    checker.attach("utf-16", lambda checked: None)
    try:
        checker.wait(checker.update({}))
        alive = []
        for version in range(1, 12):
            assert type_a_character(checker, version) == version
            alive.append(bases_alive(config.root))
        # the latest, and while the edited buffer's check runs, the base it reads and its own
        assert min(alive) >= 1 and max(alive) <= 3, alive
    finally:
        checker.stop()
        gc.enable()

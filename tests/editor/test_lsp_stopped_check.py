"""A full check whose stages a newer edit stopped is never handed out, even when an undo then makes its buffers the
newest: its base would have none of the stages' diagnostics, nor their results (links, resolver, evidence)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import flopkb.pipeline.compile
import flopkb.pipeline.stages
from flopkb.config import Config, load_config
from flopkb.editor.checked import Buffer
from flopkb.editor.checker import Checker
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.report.diagnostics import Diagnostic
from kbfixture import H100, write_kb

REL = "records/facts/f.yaml"
TEXT = "id: facts/f\nkind: fact\nstatement: On [[hw/h100]] and [[hw/nowhere]].\n"
EDITED = TEXT.replace("On", "Also on")
FULL_CHECK = "flopkb-check"


def test_a_check_stopped_by_an_edit_is_not_handed_out_when_an_undo_makes_its_buffers_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_kb(tmp_path, {"records/hw/h100.yaml": H100, REL: TEXT})
    checker = Checker(load_config(root))
    checker.attach("utf-16", lambda checked: None)
    paused, go_on = threading.Event(), threading.Event()
    armed = threading.Event()

    def pause(kb: KnowledgeBase) -> list[Diagnostic]:  # the full check's first stage waits for the edit
        if armed.is_set() and threading.current_thread().name == FULL_CHECK:
            paused.set()
            go_on.wait(60)
        return []

    stamp = flopkb.pipeline.compile.stamp_severities

    def undo_then_stamp(found: list[Diagnostic], config: Config) -> list[Diagnostic]:
        if armed.is_set() and threading.current_thread().name == FULL_CHECK:
            armed.clear()
            checker.update({REL: Buffer(EDITED, 3)})  # the edit undone, as the stopped check ends
        return stamp(found, config)

    monkeypatch.setattr(flopkb.pipeline.stages, "CHECK_STAGES", (pause, *flopkb.pipeline.stages.CHECK_STAGES))
    monkeypatch.setattr(flopkb.pipeline.compile, "stamp_severities", undo_then_stamp)
    try:
        first = checker.wait(timeout=60)
        assert first is not None and first.kb is not None
        assert "dangling-link" in {diagnostic.code for diagnostic in first.kb.diagnostics}
        armed.set()
        checker.update({REL: Buffer(EDITED, 1)})
        assert paused.wait(60)
        checker.update({REL: Buffer(TEXT, 2)})
        go_on.set()
        latest = checker.wait(3, timeout=60)
        assert latest is not None and latest.kb is not None
        assert [item.message for item in latest.diagnostics.get(REL, [])] == [
            item.message for item in first.diagnostics[REL]
        ]
        assert latest.kb.resolver is not None
    finally:
        go_on.set()
        checker.stop()
        checker.join(10)

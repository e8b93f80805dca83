"""An id has at most 200 characters: a longer one is reported, and `new` refuses it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from flopkb.cli import main
from flopkb.load.models import MAX_ID_LENGTH
from kbfixture import compile_kb, write_kb

RECORD = "id: {record_id}\nkind: flop\ncategory: arithmetic-intensity\ndescription: D.\n"


def test_an_over_long_id_is_reported(tmp_path: Path) -> None:
    longest = "flops/" + "a" * (MAX_ID_LENGTH - len("flops/"))
    for record_id, reported in ((longest, False), (longest + "b", True)):
        root = write_kb(
            tmp_path / str(len(record_id)),
            {f"records/{record_id}.yaml": RECORD.format(record_id=record_id)},
        )
        messages = [d.message for d in compile_kb(root).diagnostics if d.code == "invalid-id"]
        assert any(f"an id has at most {MAX_ID_LENGTH} characters" in message for message in messages) == reported


def test_new_refuses_an_over_long_id(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {})
    result = CliRunner().invoke(main, ["new", "--root", str(root), "flop", "flops/" + "a" * MAX_ID_LENGTH])
    assert result.exit_code == 2 and f"an id has at most {MAX_ID_LENGTH} characters" in result.output
    assert list((root / "records").rglob("*.yaml")) == []

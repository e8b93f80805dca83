"""`--strict` fails on warnings, never on a base that has none."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from flopkb.cli import main
from kbfixture import write_kb

LINKED = "id: flops/{name}\nkind: flop\ncategory: arithmetic-intensity\ndescription: See [[flops/{other}]].\n"


def test_strict_passes_a_base_without_warnings(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {
            "records/flops/a.yaml": LINKED.format(name="a", other="b"),
            "records/flops/b.yaml": LINKED.format(name="b", other="a"),
        },
    )
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--strict"])
    assert result.exit_code == 0, result.output
    assert result.output.endswith("no problems\n")

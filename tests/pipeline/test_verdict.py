"""The last check's diagnostics, stored for the language server's start (`flopkb.pipeline.verdict`): written by
`flopkb check`, used only while every file it read is as it was, never when damaged or foreign."""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flopkb.pipeline.stats
from flopkb.cli import main
from flopkb.config import Config, load_config
from flopkb.links.journal import JOURNAL_NAME
from flopkb.pipeline.cache import FileCache
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.pipeline.verdict import VERDICT_NAME, store, stored
from flopkb.report.hints import Suggestion
from flopkb.sealed import seal
from kbfixture import H100, write_kb

FILES = {
    "records/hw/h100.yaml": H100,
    "records/flops/dangling.yaml": "id: flops/dangling\nkind: flop\ncategory: arithmetic-intensity\n"
    "description: Links to [[flops/nowhere]].\n",
    "records/flops/unclosed.yaml": "id: flops/unclosed\nkind: flop\ndescription: [unclosed\n",
}


@pytest.fixture(autouse=True)
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stat is old enough to be trusted (the load cache waits two seconds after a file changed)."""
    monkeypatch.setattr(flopkb.pipeline.stats, "RACY_SECONDS", -3600)


def check(root: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--root", str(root)])
    assert result.exit_code in (0, 1), result.output


def cold(config: Config) -> list[dict[str, object]]:
    return [d.to_dict() for d in compile_knowledge_base(config, CHECK_STAGES).diagnostics]


def held(config: Config) -> list[dict[str, object]] | None:
    found = stored(config)
    return None if found is None else [d.to_dict() for d in found]


def verdict_path(config: Config) -> Path:
    assert config.cache_path is not None
    return config.cache_path / "check" / VERDICT_NAME


@pytest.fixture
def checked(tmp_path: Path) -> Config:
    """A base checked twice: the first check stores no file that did not parse (its load cache keeps none)."""
    root = write_kb(tmp_path / "kb", FILES)
    check(root)
    check(root)
    return load_config(root)


def test_check_stores_its_diagnostics_and_they_hold_while_nothing_changed(checked: Config) -> None:
    assert held(checked) == cold(checked) != []


def test_a_stored_did_you_mean_keeps_the_text_it_replaces(tmp_path: Path) -> None:
    """The server's quick fixes on its start, from the stored diagnostics, replace what the check's would."""
    text = "id: flops/typo\nkind: flop\ncategory: arithmetic intensity\ndescription: d\n"
    root = write_kb(tmp_path / "kb", {"records/hw/h100.yaml": H100, "records/flops/typo.yaml": text})
    check(root)
    found = stored(load_config(root))
    assert found is not None
    hints = [d.hint for d in found if d.code == "unknown-term"]
    assert hints == ["write it as one name: arithmetic-intensity"] and isinstance(hints[0], Suggestion)
    assert (hints[0].written, hints[0].offered, hints[0].before) == (
        "arithmetic intensity",
        ("arithmetic-intensity",),
        "",
    )


def test_the_first_check_of_a_base_that_parses_stores_them(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {name: text for name, text in FILES.items() if "unclosed" not in name})
    check(root)
    config = load_config(root)
    assert held(config) == cold(config) != []


def edit(root: Path) -> None:
    (root / "records/flops/dangling.yaml").write_text(FILES["records/flops/dangling.yaml"].replace("nowhere", "x"))


def touch(root: Path) -> None:
    os.utime(root / "records/hw/h100.yaml", ns=(1, 1))


def add(root: Path) -> None:
    (root / "records/flops/new.yaml").write_text("id: flops/new\nkind: flop\n")


def remove(root: Path) -> None:
    (root / "records/flops/dangling.yaml").unlink()


def vocabulary(root: Path) -> None:
    path = root / "schema/vocabulary.yaml"
    path.write_text(path.read_text() + "\n")


def severity(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.flopkb.severity]\ndangling-link = "warning"\n')


def unfinished_move(root: Path) -> None:
    (root / JOURNAL_NAME).write_text("{}")


@pytest.mark.parametrize(
    "change", [edit, touch, add, remove, vocabulary, severity, unfinished_move], ids=lambda change: change.__name__
)
def test_what_changed_since_the_check_makes_them_absent(checked: Config, change: Callable[[Path], None]) -> None:
    change(checked.root)
    assert stored(load_config(checked.root)) is None


def unchanged(root: Path) -> None:
    pass


@pytest.mark.parametrize("change", [unchanged, edit, touch, add, remove], ids=lambda change: change.__name__)
def test_what_changed_between_the_check_and_the_store_makes_them_absent(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    """The store lists the stat each file was read under by the check (its load cache's), without a stat of the disk
    of its own: what changed between the check's reading and the store is told when they are used."""
    root = write_kb(tmp_path / "kb", {name: text for name, text in FILES.items() if "unclosed" not in name})
    config = load_config(root)
    cache = FileCache(config, answer_first=True)
    began = time.time_ns()
    kb = compile_knowledge_base(config, CHECK_STAGES, cache)
    change(root)
    cache.save(then=functools.partial(store, config, cache, kb.diagnostics, began))
    assert verdict_path(config).exists()
    assert held(load_config(root)) == (cold(config) if change is unchanged else None)


def test_a_check_after_the_change_stores_them_again(checked: Config) -> None:
    edit(checked.root)
    check(checked.root)
    assert held(checked) == cold(checked)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_flipped_bytes_anywhere_make_them_absent(checked: Config, data: st.DataObject) -> None:
    path = verdict_path(checked)
    pristine = path.read_bytes()
    raw = bytearray(pristine)
    for offset in data.draw(st.sets(st.integers(0, len(raw) - 1), min_size=1, max_size=3), label="offsets"):
        raw[offset] ^= data.draw(st.integers(1, 255), label="mask")
    path.write_bytes(bytes(raw))
    try:
        assert stored(checked) is None
    finally:
        path.write_bytes(pristine)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"[]",
        json.dumps({"format": 1}).encode(),
        b"\xff not json",
    ],
)
def test_a_sealed_file_of_another_format_is_absent(checked: Config, content: bytes) -> None:
    verdict_path(checked).write_bytes(seal(b"flopkb-verdict", content))
    assert stored(checked) is None


def test_a_sealed_file_whose_diagnostics_are_of_another_format_is_absent(checked: Config) -> None:
    path = verdict_path(checked)
    data = json.loads(path.read_bytes()[32:])
    data["diagnostics"] = [["records/hw/h100.yaml", 1, 1, "dangling-link", "m", None, "fatal"]]
    path.write_bytes(seal(b"flopkb-verdict", json.dumps(data).encode()))
    assert stored(checked) is None


def test_a_foreign_file_is_absent(checked: Config) -> None:
    """One not sealed by this user's flopkb: committed with a cache folder, or another user's."""
    path = verdict_path(checked)
    path.write_bytes(bytes(32) + path.read_bytes()[32:])
    assert stored(checked) is None


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder"])
def test_one_that_is_no_file_is_absent_without_a_hang(checked: Config, kind: str) -> None:
    path = verdict_path(checked)
    path.unlink()
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    assert stored(checked) is None

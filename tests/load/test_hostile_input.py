"""Each class of hostile or careless input that once broke flopkb (issue 11): a diagnostic at its real place."""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from flopkb.load import source as source_module
from flopkb.load.files import Unreadable, read_bytes
from flopkb.load.source import parse
from kbfixture import VOCABULARY, compile_kb, write_kb

RECORD = "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: d\n"
X = "records/flops/x.yaml"
NESTED = '[tool.flopkb]\nrecords = "kb/records"\nschema = "kb/schema"\n'


def found(root: Path, path: str = X) -> list[tuple[str, int, int]]:
    kb = compile_kb(root)
    return [(d.code, d.line, d.column) for d in kb.diagnostics if d.path == path and d.code != "orphan"]


@pytest.fixture(params=["libyaml", "pure-python", "guarded-libyaml"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml's own composer, PyYAML's pure-Python parser (no libyaml), and libyaml before 0.2.6 (no nesting bound)."""
    if request.param != "libyaml":
        libyaml = request.param == "guarded-libyaml"
        monkeypatch.setattr(source_module, "_Loader", source_module._loader_class(libyaml=libyaml, bounded=False))
        monkeypatch.setattr(source_module, "_FastLoader", None)


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize(
    ("value", "column"),
    [
        ("!!int a", 8),
        ("!!float abc", 8),
        ("!!bool 2024", 8),
        ("!!float ''", 8),
        ("!!str [a]", 8),
        ("!!str {a: 1}", 8),
        ("!!set {a}", 8),
        ("!!binary aGk=", 8),
        ("1" * 4301, 8),
        ("-1_" + "2" * 5000, 8),
        ("1:" * 3000 + "1", 8),
    ],
)
def test_a_tag_or_number_that_cannot_be_read_is_an_invalid_value(tmp_path: Path, value: str, column: int) -> None:
    assert found(write_kb(tmp_path, {X: RECORD + f"notes: {value}\n"})) == [("invalid-value", 5, column)]


@pytest.mark.usefixtures("loader")
def test_a_tag_on_a_key(tmp_path: Path) -> None:
    assert found(write_kb(tmp_path, {X: RECORD + "!!int a: 1\n"})) == [("invalid-value", 5, 1)]


@pytest.mark.parametrize("kind", ["{a: 1}", "[flop]", "1"])
def test_a_kind_that_is_no_text(tmp_path: Path, kind: str) -> None:
    assert found(write_kb(tmp_path, {X: f"id: flops/x\nkind: {kind}\ndescription: '[[flops/y]]'\n"})) == [
        ("invalid-value", 2, 7)
    ]


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize("char", ["\x00", "\x80", "\ufffe", "\x1b"])
def test_a_refused_character_is_reported_where_it_stands(tmp_path: Path, char: str) -> None:
    assert found(write_kb(tmp_path, {X: RECORD + f"notes: ab{char}\n"})) == [("yaml-syntax", 5, 10)]


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\r"])
def test_breaks_editors_do_not_count_do_not_move_later_diagnostics(tmp_path: Path, separator: str) -> None:
    text = f"id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: 'a{separator}b'\nbogus: 1\n"
    assert found(write_kb(tmp_path, {X: text})) == [("unknown-field", 5, 1)]


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize("end", ["", "\n", "\r\n"])
def test_a_syntax_error_at_the_end_is_on_the_last_line(tmp_path: Path, end: str) -> None:
    text = RECORD + "notes: [unclosed" + end
    [(code, line, _)] = found(write_kb(tmp_path, {X: text}))
    assert (code, line) == ("yaml-syntax", 5)


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize(
    "text",
    [
        RECORD + "# " + "[" * 80 + "\n",
        RECORD + "notes: ranges " + "[0, 1) " * 80 + "\n",
        RECORD + "notes: '" + "{" * 80 + "'\n",
        RECORD + "notes: |\n  " + "[" * 80 + "\n",
    ],
)
def test_brackets_in_text_are_no_nesting(tmp_path: Path, text: str) -> None:
    assert found(write_kb(tmp_path, {X: text})) == []


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize(
    "nested", ["[" * 65 + "]" * 65, "[" * 5000 + "]" * 5000, "{a: " * 200 + "}" * 200, "\n" + "- " * 3000 + "x"]
)
def test_nesting_deeper_than_the_limit_is_refused(tmp_path: Path, nested: str) -> None:
    [(code, line, _)] = found(write_kb(tmp_path, {X: RECORD + "notes: " + nested + "\n"}))
    assert (code, line) == ("not-a-record", 5 + nested.startswith("\n"))


def test_nesting_at_the_limit_is_taken() -> None:
    source, problems = parse("a: " + "[" * 63 + "]" * 63 + "\n", "f.yaml")
    assert source is not None and not problems


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {})
    (root / "records/flops").mkdir()
    os.mkfifo(root / X)
    result: list[list[tuple[str, int, int]]] = []
    worker = threading.Thread(target=lambda: result.append(found(root)), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():  # unblock the reader before failing, so that the test run ends
        os.close(os.open(root / X, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("check blocked on a FIFO")
    assert result == [[("not-a-record", 1, 1)]]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_symlink_to_an_endless_device_is_refused(tmp_path: Path, device: str) -> None:
    root = write_kb(tmp_path, {})
    (root / "records/flops").mkdir()
    (root / X).symlink_to(device)
    assert found(root) == [("not-a-record", 1, 1)]


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets here")
def test_a_socket_is_refused(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {})
    (root / "records/flops").mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(root / X))
        assert found(root) == [("not-a-record", 1, 1)]


def test_a_file_over_the_limit_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {X: RECORD + "notes: " + "x" * (3 << 20) + "\n"})
    assert found(root) == [("not-a-record", 1, 1)]


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_folder_is_reported(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {X: RECORD, "records/locked/y.yaml": RECORD})
    (root / "records/locked").chmod(0)
    try:
        assert found(root, "records/locked") == [("not-a-record", 1, 1)]
    finally:
        (root / "records/locked").chmod(0o755)


def test_an_unreadable_folder_is_reported_as_root_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_kb(tmp_path, {X: RECORD, "records/locked/y.yaml": RECORD})
    walk = os.walk

    def failing(top: str, onerror=None, **kwargs):  # type: ignore[no-untyped-def]
        for folder, folders, names in walk(top, onerror=onerror, **kwargs):
            if folder.endswith("locked"):
                onerror(PermissionError(13, "Permission denied", folder))
                continue
            yield folder, folders, names

    monkeypatch.setattr(os, "walk", failing)
    assert found(root, "records/locked") == [("not-a-record", 1, 1)]


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses names that are not UTF-8")
def test_a_name_that_is_not_utf8_is_reported_escaped(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {X: RECORD})
    with open(os.path.join(os.fsencode(root / "records/flops"), b"bad\xff.yaml"), "wb") as stream:
        stream.write(RECORD.encode())
    kb = compile_kb(root)
    [problem] = [d for d in kb.diagnostics if d.code == "encoding"]
    assert problem.path == "records/flops/bad\\xff.yaml"
    assert problem.message == "the file's name is not UTF-8"
    assert problem.hint == "rename the file: its name's bytes that are not UTF-8 are shown as \\x escapes"
    problem.path.encode("utf-8")


def test_a_missing_vocabulary_is_not_an_encoding_problem(tmp_path: Path) -> None:
    root = write_kb(tmp_path, {X: RECORD})
    (root / "schema/vocabulary.yaml").unlink()
    kb = compile_kb(root)
    assert [(d.code, d.path, d.line) for d in kb.diagnostics] == [("not-a-record", "schema/vocabulary.yaml", 1)]
    assert "no record was validated" in kb.diagnostics[0].message


def test_flopkb_works_where_pyyaml_has_no_libyaml(tmp_path: Path) -> None:
    import json
    import subprocess

    root = write_kb(tmp_path, {X: RECORD + "bogus: [[[1]]]\n"})
    script = (
        "import sys; sys.modules['yaml._yaml'] = None\n"  # what PyYAML built without libyaml sees
        "import yaml; assert not yaml.__with_libyaml__ and not hasattr(yaml, 'CSafeLoader')\n"
        "from flopkb.cli import main; main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "check", "--root", str(root), "--no-cache", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert [(d["code"], d["line"]) for d in json.loads(done.stdout)["diagnostics"]] == [
        ("orphan", 1),
        ("unknown-field", 5),
    ]


SECRET = "password: SECRETPW\nkind: SECRETKIND\n"  # stands for a file of the CI machine


def messages(root: Path, path: str = X) -> list[tuple[str, int, int, str]]:
    kb = compile_kb(root)
    assert not any("SECRET" in f"{d.message} {d.hint}" for d in kb.diagnostics)
    return [(d.code, d.line, d.column, d.message) for d in kb.diagnostics if d.path == path]


@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_a_record_that_is_a_symlink_out_of_the_base_is_refused_unread(tmp_path: Path, relative: bool) -> None:
    root = write_kb(tmp_path / "kb", {})
    (tmp_path / "y.yml").write_text(SECRET)
    (root / "records/flops").mkdir()
    (root / X).symlink_to("../../../y.yml" if relative else tmp_path / "y.yml")  # committed by a pull request
    message = "a symlink that leads out of records/ is not a record file; copy the file in"
    assert messages(root) == [("not-a-record", 1, 1, message)]


def test_a_record_that_is_a_symlink_into_git_is_refused_unread(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {})
    (root / ".git").mkdir()
    (root / ".git/config").write_text(SECRET)  # where actions/checkout keeps the token
    (root / "records/flops").mkdir()
    (root / X).symlink_to("../../.git/config")
    assert messages(root) == [("not-a-record", 1, 1, "a symlink into .git is not a record file")]


def test_a_record_that_is_a_symlink_out_of_a_nested_records_folder_is_refused_unread(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    files = {"kb/schema/vocabulary.yaml": VOCABULARY, "kb/.npmrc": SECRET, "pyproject.toml": NESTED}
    write_kb(root, files, vocabulary=None)
    (root / "kb/records/flops").mkdir(parents=True)
    (root / "kb/records/flops/x.yaml").symlink_to("../../.npmrc")  # in kb/, beside the records folder
    message = "a symlink that leads out of kb/records/ is not a record file; copy the file in"
    assert messages(root, "kb/records/flops/x.yaml") == [("not-a-record", 1, 1, message)]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="no /proc here")
def test_a_file_of_proc_is_refused(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {})
    (root / "records/flops").mkdir()
    (root / X).symlink_to("/proc/self/environ")
    assert messages(root) == [
        ("not-a-record", 1, 1, "a symlink that leads out of records/ is not a record file; copy the file in")
    ]
    with pytest.raises(Unreadable, match=r"^a file the system makes up as it is read \(/proc\) is not a record file"):
        read_bytes("/proc/self/environ")  # read without `within`: refused all the same


def test_a_record_that_is_a_symlink_to_another_file_of_records_is_read(tmp_path: Path) -> None:
    root = write_kb(tmp_path / "kb", {"records/shared/x.txt": RECORD})
    (root / "records/flops").mkdir()
    (root / X).symlink_to("../shared/x.txt")
    assert [code for code, *_ in messages(root)] == ["orphan"]  # read and validated: a record that none links to


@pytest.mark.parametrize("secret", [".npmrc", "gha-creds.json", "schema/key.yaml"])
def test_a_record_that_is_a_symlink_to_a_file_of_the_base_outside_records_is_refused_unread(
    tmp_path: Path, secret: str
) -> None:
    root = write_kb(tmp_path / "kb", {secret: SECRET})  # what a CI step wrote into the checkout
    (root / "records/flops").mkdir()
    (root / X).symlink_to(f"../../{secret}")
    message = "a symlink that leads out of records/ is not a record file; copy the file in"
    assert messages(root) == [("not-a-record", 1, 1, message)]

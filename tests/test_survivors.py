"""Bugs that once slipped through the tests of their area (issue 21, item 11), each now caught where a user sees it:
a column, a path filter, a shadowed id, a lost comment, an event handler, an unwatched template, a tolerance.

Each was planted in the code and this test seen failing (tests/mutation/mutants.py plants them again on demand).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flopkb.authoring.fmt import format_text
from flopkb.cli import main
from flopkb.config import load_config
from flopkb.site.sanitize import ALLOWED_TAGS, clean_html
from kbfixture import compile_kb, write_kb

FLOP = "id: flops/{name}\nkind: flop\ncategory: arithmetic-intensity\ndescription: {text}\n"


def diagnostics(root: Path, *paths: str) -> list[tuple[str, str, int, int]]:
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json", *paths])
    return [(d["code"], d["path"], d["line"], d["column"]) for d in json.loads(result.output)["diagnostics"]]


def test_a_column_counts_characters_not_bytes(tmp_path: Path) -> None:
    text = "Café — naïve 日本 😀 see [[flops/nowhere]]."
    root = write_kb(tmp_path, {"records/flops/a.yaml": FLOP.format(name="a", text=text)})
    column = len("description: ") + text.index("[[") + 1
    assert ("dangling-link", "records/flops/a.yaml", 4, column) in diagnostics(root)


def test_an_expression_offset_counts_characters_not_bytes(tmp_path: Path) -> None:
    record = (
        "id: facts/f\nkind: fact\ntitle: F\nstatement: S.\nformulas:\n"
        '  - id: f\n    expr: "déjà_vu @ x"\n    inputs: {x: 1}\n'
    )
    root = write_kb(tmp_path, {"records/facts/f.yaml": record})
    found = [d for d in diagnostics(root) if d[0] == "formula-syntax"]
    assert found == [("formula-syntax", "records/facts/f.yaml", 7, len('    expr: "déjà_vu ') + 1)]  # at the @


def test_an_alias_may_not_shadow_another_records_id(tmp_path: Path) -> None:
    shadow = FLOP.format(name="b", text="B, see [[flops/a]].") + "aliases: [flops/a]\n"
    root = write_kb(
        tmp_path,
        {"records/flops/a.yaml": FLOP.format(name="a", text="A, see [[flops/b]]."), "records/flops/b.yaml": shadow},
    )
    kb = compile_kb(root)
    found = [(d.code, d.path, d.line, d.column) for d in kb.diagnostics if d.code == "duplicate-id"]
    assert found == [("duplicate-id", "records/flops/b.yaml", 5, 11)]


def test_a_path_filter_is_a_folder_not_a_prefix_of_its_name(tmp_path: Path) -> None:
    root = write_kb(
        tmp_path,
        {
            "records/flops/a.yaml": FLOP.format(name="a", text="See [[flops/nowhere]]."),
            "records/flopsy/b.yaml": FLOP.format(name="b", text="See [[flops/elsewhere]].").replace(
                "flops/b", "flopsy/b"
            ),
        },
    )
    shown = {path for _, path, _, _ in diagnostics(root, str(root / "records/flops"))}
    assert shown == {"records/flops/a.yaml"}


@pytest.mark.parametrize(
    "record",
    [
        "id: flops/a  # first\nkind: flop  # second\ncategory: arithmetic-intensity\ndescription: D.\n"
        "tags: [a,  # third\n  b]  # fourth\n",
        "kind: flop  # one\nid: flops/a  # two\ncategory: arithmetic-intensity  # three\ndescription: D.  # four\n",
    ],
)
def test_fmt_keeps_every_end_of_line_comment(record: str) -> None:
    formatted = format_text(record, "records/flops/a.yaml")
    assert isinstance(formatted, str)
    words = ("first", "second", "third", "fourth") if "first" in record else ("one", "two", "three", "four")
    assert [word for word in words if f"# {word}" in formatted] == list(words)


EVENTS = ("onclick", "onmouseover", "onerror", "onload", "onfocus", "onanimationstart", "ontoggle")


@pytest.mark.parametrize("tag", sorted(ALLOWED_TAGS))
def test_no_allowed_element_keeps_an_event_handler(tag: str) -> None:
    attributes = " ".join(f'{event}="alert(1)"' for event in EVENTS)
    cleaned = clean_html(f"<table><tr><td><{tag} {attributes}>x</{tag}></td></tr></table>").lower()
    assert not [event for event in EVENTS if event in cleaned]


def test_serve_watches_the_bases_own_templates(tmp_path: Path) -> None:
    from flopkb.site.publishing.serve import Server

    root = write_kb(tmp_path, {"records/flops/a.yaml": FLOP.format(name="a", text="A.")})
    for folder in ("site/assets", "site/overrides", "site/templates"):
        (root / folder).mkdir(parents=True)
    server = Server(load_config(root), port=0, use_cache=False)
    watched = server.watched()
    assert any((root / "site/templates").resolve().is_relative_to(folder) for folder in watched)


def test_claim_tolerances_are_shown_as_the_record_gives_them(project_site: object) -> None:
    html = project_site.html("records/facts/vendor-spec-sheet-conventions.html")  # type: ignore[attr-defined]
    assert "(tolerance 2 %)" in html and "(tolerance 5 %)" in html
    assert "(tolerance 1 %)" in project_site.html("records/facts/ridge-point.html")  # type: ignore[attr-defined]

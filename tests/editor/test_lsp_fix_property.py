"""Property: a misspelling of anything written in the project's records (a term, a link, a field, a unit, a
function, a URL's scheme left out) whose diagnostic hints "did you mean" has a quick fix, and the quick fix applied
leaves no diagnostic at that place and none the record did not have."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from lsp_session import ThreadedSession, open_file, record_files, settled, text_edits
from repo import REPO

_TOKEN = re.compile(r"https?://[^\s\]\[,'\"|]+|[A-Za-z][\w./-]{2,}[A-Za-z0-9]")
_DATA_LINE = re.compile(r"^\s*(?:- )?[A-Za-z_]+:(?: |$)(.*)$", re.MULTILINE)
_LINK = re.compile(r"\[\[([^\[\]]+)\]\]")


def places(text: str) -> list[tuple[int, int]]:
    """Where a token an author could misspell is written: in a line of data (a key and a short value, a flow list, an
    expression; not a line of prose) and in every [[link]]."""
    found = set()
    for line in _DATA_LINE.finditer(text):
        if line.group(1).count(" ") <= 3 or line.group(1).startswith(("[", "{")) or "expr:" in line.group(0):
            found.update(token.span() for token in _TOKEN.finditer(text, line.start(), line.end()))
    for link in _LINK.finditer(text):
        found.update(token.span() for token in _TOKEN.finditer(text, link.start(1), link.end(1)))
    return sorted(found)


@st.composite
def misspelt(draw: st.DrawFn, word: str) -> str:
    """`word` as an author mistypes it: a letter dropped, doubled or swapped with the next, the words of a name
    written apart, a URL's scheme left out."""
    if word.startswith(("http://", "https://")) and draw(st.booleans()):
        return word.split("://", 1)[1]
    if "-" in word and draw(st.booleans()):
        return word.replace("-", " ", 1)
    at = draw(st.integers(1, len(word) - 2))
    how = draw(st.sampled_from(["drop", "double", "swap"]))
    if how == "drop":
        return word[:at] + word[at + 1 :]
    if how == "double":
        return word[: at + 1] + word[at:]
    return word[:at] + word[at + 1] + word[at] + word[at + 2 :]


@dataclass
class Base:
    session: ThreadedSession
    root: Path
    texts: dict[str, str]
    versions: dict[str, int]

    def __repr__(self) -> str:
        return f"Base({self.root})"

    def write(self, rel: str, text: str) -> list[types.Diagnostic]:
        """The buffer of `rel` holding `text` (one whole-buffer edit); its diagnostics once checked."""
        self.versions[rel] += 1
        uri = (self.root / rel).as_uri()
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[rel]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
        self.session.call(self.session.lsp.text_document_did_change, params)
        return self.session.run(settled(self.session.lsp, uri))

    def fixes(self, rel: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=(self.root / rel).as_uri()),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
        found = self.session.run(self.session.lsp.text_document_code_action_async(params)) or []
        return [action for action in found if isinstance(action, types.CodeAction)]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Base]:
    root = tmp_path_factory.mktemp("records")
    for folder in ("records", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copy(REPO / "pyproject.toml", root)
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in record_files(root)}
    session = ThreadedSession(root)
    try:
        for rel, text in texts.items():
            session.call(open_file, session.lsp, root, rel, text)
        yield Base(session, root, texts, dict.fromkeys(texts, 1))
    finally:
        session.close()


def offset(text: str, position: types.Position) -> int:
    """The offset in `text` of `position`, its character counted in UTF-16 code units."""
    start = sum(len(line) + 1 for line in text.split("\n")[: position.line])
    units = 0
    for index, character in enumerate(text[start:]):
        if units >= position.character:
            return start + index
        units += len(character.encode("utf-16-le")) // 2
    return len(text)


def _told(diagnostics: list[types.Diagnostic]) -> set[tuple[str, str]]:
    return {(str(item.code), item.message) for item in diagnostics}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_quick_fix_of_a_misspelling_leaves_no_diagnostic_there_and_none_new(base: Base, data: st.DataObject) -> None:
    rel = data.draw(st.sampled_from(sorted(base.texts)))
    original = base.texts[rel]
    start, end = data.draw(st.sampled_from(places(original)))
    typo = data.draw(misspelt(original[start:end]))
    text = original[:start] + typo + original[end:]
    before = _told(base.write(rel, original))
    try:
        new = [item for item in base.write(rel, text) if (str(item.code), item.message) not in before]
        hinted = [item for item in new if "\nhint: did you mean " in item.message]
        assert all(item.data for item in hinted), f"a did-you-mean without a quick fix: {hinted}"
        fixable = [item for item in new if item.data]
        if not fixable:
            return
        diagnostic = fixable[0]
        actions = base.fixes(rel, diagnostic)
        assert actions
        _, (edit,) = text_edits(actions[0], (base.root / rel).as_uri())
        replaced = offset(text, edit.range.start), offset(text, edit.range.end)
        fixed = text[: replaced[0]] + edit.new_text + text[replaced[1] :]
        after = base.write(rel, fixed)
        there = (diagnostic.code, diagnostic.range.start)
        assert not [item for item in after if (item.code, item.range.start) == there], fixed
        if replaced[0] < start + len(typo) and start < replaced[1]:
            # a fix of the misspelling itself undoes it (one elsewhere, as of a use of a misspelt name, follows it)
            assert _told(after) <= before, f"{actions[0].title}:\n{fixed}"
    finally:
        base.write(rel, original)


DILUTION = "records/flops/sd-batch-dilution-problem.yaml"
ROOFLINE = "records/flops/sd-speedup-vs-batch-roofline.yaml"
SOURCES = "sources: [medusa-2024, eagle3-2025]"
EXPR = "expr: max(p_target * bytes_per_param"


@pytest.mark.parametrize(
    ("rel", "old", "typo", "title", "written"),
    [
        (
            DILUTION,
            "category: arithmetic-intensity",
            "category: arithmetic intensity",
            "Write 'arithmetic-intensity' for 'arithmetic intensity'",
            "category: arithmetic-intensity\n",
        ),
        (
            DILUTION,
            SOURCES,
            "sources: [medusa-2024, eagle3-2025, github.com/foo/bar#readme]",
            "Write 'https://github.com/foo/bar#readme' for 'github.com/foo/bar#readme'",
            "sources: [medusa-2024, eagle3-2025, https://github.com/foo/bar#readme]\n",
        ),
        (
            DILUTION,
            SOURCES,
            'sources: [medusa-2024, eagle3-2025, "example.com:8080/x"]',
            "Write 'https://example.com:8080/x' for 'example.com:8080/x'",
            'sources: [medusa-2024, eagle3-2025, "https://example.com:8080/x"]\n',
        ),
        (
            "records/facts/fct-spec-decoding-cost-model-break-even.yaml",
            "([[sd-speedup-vs-batch-roofline#speedup-vs-batch]])",
            "([[sd-speedup-vs-batch-roofline#speedup]])",
            "Write 'speedup-vs-batch' for 'speedup'",
            "([[sd-speedup-vs-batch-roofline#speedup-vs-batch]])",
        ),
        (ROOFLINE, 'unit: "token/s"', 'unit: "tokn/s"', "Write 'token' for 'tokn'", 'unit: "token/s"\n'),
        (ROOFLINE, EXPR, "expr: maxx(p_target * bytes_per_param", "Write 'max' for 'maxx'", "expr: max(p_target"),
    ],
)
def test_the_quick_fix_replaces_the_whole_text_its_hint_is_about(
    base: Base, rel: str, old: str, typo: str, title: str, written: str
) -> None:
    """A value of several words, a URL with its #fragment or port, an anchor its target's id holds, a unit's name, a
    function's name: the quick fix writes the offered name in place of exactly the text the hint is about, and leaves
    no new diagnostic."""
    original = base.texts[rel]
    text = original.replace(old, typo, 1)
    before = _told(base.write(rel, original))
    try:
        new = [item for item in base.write(rel, text) if (str(item.code), item.message) not in before]
        assert new and new[0].data, new
        actions = base.fixes(rel, new[0])
        assert [action.title for action in actions] == [title]
        _, (edit,) = text_edits(actions[0], (base.root / rel).as_uri())
        fixed = text[: offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end) :]
        assert written in fixed
        assert _told(base.write(rel, fixed)) <= before
    finally:
        base.write(rel, original)


def test_a_name_not_written_as_it_reads_gets_no_fix_rather_than_one_elsewhere(base: Base) -> None:
    """`"fl\x6fpp"` reads `flopp`: the text at the diagnostic's place is not the word its hint replaces, and the same
    word further down (in prose) is not what the diagnostic is about."""
    original = base.texts[DILUTION]
    text = original.replace("kind: flop\n", 'kind: "fl\\x6fpp"\n', 1) + "tags: [flopp]\n"
    try:
        (kind,) = [item for item in base.write(DILUTION, text) if item.range.start.line == 1]
        assert "did you mean flop?" in kind.message
        assert base.fixes(DILUTION, kind) == []
    finally:
        base.write(DILUTION, original)

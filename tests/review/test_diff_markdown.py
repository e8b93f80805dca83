"""`flopkb diff --format markdown` as a reviewer reads it: rendered to HTML, as GitHub renders a comment.

flopkb's own markup (the spec parameter of an edit, as code) renders as markup; text from records inside and around it
stays text: no image, no link, no mention, no cell of its own.
"""

from __future__ import annotations

import re
from html import unescape

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rendered import GFM, Seen

from flopkb.review.markdown import cell, cell_with_code, editor_text, render_markdown
from flopkb.review.model import Cause, Commit, DiagnosticChange, DiagnosticLine, Report, SpecEdit

HOSTILE = "![x](http://evil.example/p.png) [a](b) @team `tick` a|b <b>bold</b> *em* ~~s~~ \\"


def _shown(text: str) -> str:
    """Record text as the reader sees it: blanks and line breaks as one space, a word joiner after each `@`."""
    return " ".join(text.replace("@", "@\u2060").split())


def _report(spec: SpecEdit, what: str) -> Report:
    causes = (
        Cause(f"spec:{spec.accelerator}:{spec.parameter}", spec.accelerator, "", None, 1, ("facts/read",), 1, spec),
        Cause("record:facts/read", "facts/read", what, None, 1, ("facts/read",), 0),
    )
    return Report(base=Commit("main", "0" * 40), head=Commit("work tree", None), causes=causes)


def test_hostile_record_text_in_an_edit_s_row_stays_text() -> None:
    seen = Seen(GFM.render(render_markdown(_report(SpecEdit(HOSTILE, HOSTILE, HOSTILE, HOSTILE), HOSTILE))))
    assert not {"img", "a", "b", "em", "del"} & set(seen.tags)
    assert [len(row) for row in seen.rows] == [4, 4, 4]
    assert seen.code == [_shown(HOSTILE)], "the parameter is the one code span, and shows every character"
    assert seen.rows[1][1].startswith(f"{_shown(HOSTILE)} of {_shown(HOSTILE)}: {_shown(HOSTILE)} → ")
    assert seen.rows[2][1] == f"{_shown(HOSTILE)} → 1 value in 1 record"


_TEXT = st.text(st.sampled_from("#+-=*_`~[]()!<>&|\\@:.) 1\t\r\na") | st.characters(blacklist_characters="\x00"))


@settings(max_examples=200, deadline=None)
@example(SpecEdit("`", "a|b", "[a](b)", "![x](y)"), "@team")
@example(SpecEdit("</code>", "- x", "#1", "``"), "|")
@given(st.builds(SpecEdit, _TEXT, _TEXT, _TEXT, _TEXT), _TEXT)
def test_any_record_text_keeps_the_table_and_adds_no_image_or_link(spec: SpecEdit, what: str) -> None:
    seen = Seen(GFM.render(render_markdown(_report(spec, what))))
    assert set(seen.tags) <= {"h3", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "code"}, seen.tags
    assert [len(row) for row in seen.rows] == [4, 4, 4]
    assert [" ".join(code.split()) for code in seen.code] == [_shown(spec.parameter)]
    before, after = (_shown(side or "(none)") for side in (spec.before, spec.after))
    line = f"{_shown(spec.parameter)} of {_shown(spec.accelerator)}: {before} → {after} → 1 value in 1 record"
    line += " not edited itself"
    assert " ".join(seen.rows[1][1].split()) == " ".join(line.split())


def _diagnostics_report(message: str) -> Report:
    new = DiagnosticLine("records/facts/read.yaml", 12, 5, "error", "claim-mismatch", message)
    return Report(
        base=Commit("main", "0" * 40),
        head=Commit("work tree", None),
        new_diagnostics=(new,),
        changed_diagnostics=(DiagnosticChange(new, new),),
    )


def _detail_items(seen_html: str) -> list[str]:
    """The text of each detail line (`<li>`) as a reader sees it, blanks as one space."""
    items = re.findall(r"<li>(.*?)</li>", seen_html, re.DOTALL)
    return [" ".join(unescape(re.sub(r"</?code>", "", item)).split()) for item in items]


def test_a_message_s_code_spans_render_as_code_and_the_record_text_in_them_as_text() -> None:
    message = f"unknown input `{HOSTILE}` in `<script>alert(1)</script>`; see `flopkb eval facts/read` *not em*"
    html = GFM.render(render_markdown(_diagnostics_report(message)))
    seen = Seen(html)
    assert not {"img", "a", "b", "em", "del", "script"} & set(seen.tags), html
    tick = HOSTILE.index("`tick`")  # the record's own backticks pair with the message's, as CommonMark pairs them
    code = [HOSTILE[:tick], HOSTILE[tick + 6 :], "<script>alert(1)</script>", "flopkb eval facts/read"]
    assert seen.code == [_shown(part) for part in code] * 3  # new; changed, and what it was
    spans = f"{_shown(code[0])}tick{_shown(code[1])}"  # a code's outer blanks are dropped, as `cell` drops them
    shown = f"unknown input {spans} in {code[2]}; see {code[3]} *not em*"
    items = _detail_items(html)
    assert items[0] == f"+ records/facts/read.yaml:12:5: error claim-mismatch: {shown}"
    assert items[-1] == f"was: {shown}"


CODE_SPANS = MarkdownIt("zero").enable("backticks")
"""CommonMark's code spans and nothing else: which backticks pair, as the reference parser pairs them."""


@settings(max_examples=300, deadline=None)
@example("a `` `b` `` c")
@example("`![x](y)` ``")
@example("``` ` </code><img src=x> `")
@given(_TEXT)
def test_any_message_shows_its_code_spans_as_commonmark_pairs_them_every_other_character_and_no_markup(
    message: str,
) -> None:
    html = GFM.render(render_markdown(_diagnostics_report(message)))
    seen = Seen(html)
    assert set(seen.tags) <= {"h3", "p", "strong", "details", "summary", "ul", "li", "code"}, html
    spans = [_shown(code) for code in Seen(CODE_SPANS.renderInline(message)).code]
    assert [" ".join(code.split()) for code in seen.code] == spans * 3
    item = "".join(_detail_items(html)[0].split()).replace("`", "")
    assert item.endswith("".join(_shown(message).split()).replace("`", "")), item


_AUTOLINKED = re.compile(r"://|www\.", re.IGNORECASE)
"""What GitHub's autolinks (and an editor's) read as a link's start in the markdown as written: `scheme://`, `www.`."""


@example("see https://evil.example/phish and WWW.evil.example")
@example("`<https://evil.example>` ftp://x")
@given(
    st.lists(st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from(["://", "www.", "`"])).map(
        "".join
    )
)
def test_record_text_starts_no_link_where_github_or_an_editor_makes_links_of_text(text: str) -> None:
    """A URL in record text (an id, a message, a name quoted in backticks) is shown, never linked: in the comment's
    text and code, and in a hover."""
    for shown in (cell(text), cell_with_code(text)):
        assert not _AUTOLINKED.search(shown), shown  # `:` and `.` as references: `&#58;`
    escapes_read = re.sub(r"\\[\s\S]", lambda escape: "\0" if escape[0][1] in ":." else "\1", editor_text(text))
    assert not _AUTOLINKED.search(escapes_read), editor_text(text)  # escaped with a backslash: `\:`

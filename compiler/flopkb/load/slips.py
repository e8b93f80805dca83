"""The YAML slips authors make most, told in their words where libyaml's message names only the parser's state.

libyaml says where parsing stopped ("while scanning a simple key could not
find expected ':'"), which is often lines after the slip (a quote left open
swallows the lines below it). Each slip here is a guess with a repair: the
repair is applied to the text, and the guess is told only when the repaired
text parses, with the repaired line read as written (a key indented into the
block scalar above it would parse, as text of the block). So a message names
a slip whose repair makes the file parse; where no guess holds (or a file has
two slips), libyaml's message stands. The repairs are never written: the hint
says what to change.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from flopkb.report.cut import cut

_LEAD = r"[ ]*(?:- )?"
"""What comes before a key on its line: its indentation in spaces, and the dash of a list's item."""
_NAME = r"[A-Za-z_][\w-]*"
"""A key as records write them."""
_KEY_THEN_WORDS = re.compile(rf"(?P<indent>{_LEAD})(?P<key>{_NAME})[ ]+(?P<rest>[^\s:#].*)")
_PLAIN_VALUE = re.compile(rf"(?P<lead>{_LEAD}{_NAME}:[ ]+)(?P<value>[^\s\"'\[{{|>&*!#].*)")
_NO_SPACE_AFTER_COLON = re.compile(rf"(?P<lead>{_LEAD}(?P<key>{_NAME}):)(?P<rest>[^\s:/].*)")
_NO_SPACE_AFTER_DASH = re.compile(r"(?P<lead>[ ]*-)(?P<rest>[A-Za-z_\"'\[{].*)")
_SINGLE_QUOTED = re.compile(rf"(?P<lead>{_LEAD}(?:{_NAME}:[ ]+)?)'(?P<inner>.*)'(?P<after>[ ]*(?:#.*)?)")
_COMMENT = re.compile(r"\s#")
_KEY = re.compile(rf"\s*{_NAME}:(?:\s|$)")
_ITEM_KEY = re.compile(rf"[ ]*- [ ]*(?P<key>{_NAME}):(?:\s|$)")
_ITEM = re.compile(r"[ ]*- ")
_OPENS = re.compile(rf"{_LEAD}(?:{_NAME}:)?[ ]*(?:[|>][-+0-9]*)?")
"""A line that opens a block (matched whole, its comment cut): a key with no value on its line or with a block
scalar's indicator (`|`, `>-`), an item's dash with either or alone."""
_KEY_OR_ITEM = re.compile(rf"\s*(?:- |{_NAME}:(?:\s|$))")
_QUOTED_VALUE = re.compile(rf"(?P<lead>\s*(?:- )?(?:{_NAME}:[ ]+)?)(?P<quote>[\"'])")
_FLOW_VALUE = re.compile(rf"(?P<lead>\s*(?:- )?{_NAME}:[ ]+)(?P<open>[\[{{])")
_CLOSING = {"[": "]", "{": "}"}
_SHOWN = 80
"""The longest line a hint quotes whole."""
_LOOK_BACK = 30
"""How many lines above where parsing stopped a slip is looked for."""
_MAX_GUESSES = 32
"""Guesses tried at the most, each a parse of the text: a broken buffer in an editor is checked again at every
keystroke. Over every line of the project's records slipped one way at a time (`benchmarks/bench_slips.py`), 32 tell
all that 60 do: a slipped record's parse took 2.8 ms at the median, 0.10 s at worst (the largest record, 28 KB;
0.42 s on a loaded machine)."""
_LARGEST = 100_000
"""A larger text is not parsed again guess after guess: libyaml's message stands."""


class Slip(NamedTuple):
    """What to tell instead of libyaml's message: where the slip is (1-based), what it is, and how to fix it."""

    line: int
    column: int
    message: str
    hint: str


def explained(text: str, line: int, holds: Callable[[str, int, bool], bool], opened: int | None = None) -> Slip | None:
    """The slip that made libyaml stop at `line` (1-based), or None when no guess holds. `holds(repaired, at, as_text)`:
    whether a repaired text parses with its line `at` read as the repair means it: no key there that no record could
    have (words with spaces: a wrapped line of text read as a key), and, unless the line may be text (`as_text`), not
    swallowed into a scalar that starts above it (a key indented into the block of text above it). `opened`: the line
    where what libyaml was reading began (a quoted value), looked at too however far above."""
    lines = text.split("\n")
    if not 0 < line <= len(lines) or len(text) > _LARGEST:
        return None
    for guess in itertools.islice(_guesses(lines, line, opened), _MAX_GUESSES):
        repaired = lines.copy()
        repaired[guess.at - 1] = guess.repaired
        for other, text_there in guess.also:
            repaired[other - 1] = text_there
        as_text = guess.text or _KEY_OR_ITEM.match(guess.repaired) is None  # text may go into its block; a key not
        if holds("\n".join(repaired), guess.at, as_text):
            return guess.slip
    return None


class _Guess(NamedTuple):
    at: int
    """The line the repair is about: read as the repair means it (`holds`)."""
    repaired: str
    slip: Slip
    also: tuple[tuple[int, str], ...] = ()
    """Other lines the repair changes, with their new text (where a wrapped value's quotes open and close)."""
    text: bool = False
    """Whether the repair means the line to be text, even one that reads like a key (a wrapped value's)."""


def _guesses(lines: list[str], line: int, opened: int | None) -> Iterator[_Guess]:
    """The slips that could have stopped parsing at `line`, nearest first: libyaml often stops a line or more after
    the slip (after a key without its ':', at the end of a quoted value left open). First the line where parsing
    stopped, or the one above it (a block's first line, whose next stopped libyaml), set one space off a level open
    around it: one space off is a slip, not a wrapped line of text. A line indented unlike its two neighbours, which
    agree, was pulled out of (or pushed into) its block. A key or an item set off over its own lines below (the first
    of a mapping or a list, whose siblings stopped libyaml), the line where parsing stopped set further off a level,
    and a line whose neighbours disagree (it may just end a block) come last, after `key value` where `key: value`
    was meant, say."""
    numbers = list(range(line, max(0, line - _LOOK_BACK), -1))
    if opened is not None and 0 < opened < line - _LOOK_BACK:
        numbers.append(opened)
    window = [
        (number, lines[number - 1])
        for number in numbers
        if lines[number - 1].strip() and not _comment(lines[number - 1])
    ]
    for number, here in window[:2]:
        yield from _indented_as_a_level(lines, number, here, one_off=True)
    for number, here in window:
        yield from _indented_unlike(lines, number, here, neighbours_agree=True)
        yield from _written_slips(number, here)
        yield from _colon_in_wrapped_value(lines, number, here)
    for number, here in window[1:]:
        yield from _set_over_its_lines_below(lines, number, here)
    yield from _indented_as_a_level(lines, line, lines[line - 1], one_off=False)
    for number, here in window:
        if number != line:
            yield from _indented_unlike(lines, number, here, neighbours_agree=False)
    for number in range(line - _LOOK_BACK, 0, -1):  # a quote left open swallows any number of lines below it
        if number != opened:
            yield from _open_quote(number, lines[number - 1])


def _indented_unlike(lines: list[str], number: int, here: str, *, neighbours_agree: bool) -> Iterator[_Guess]:
    """A line indented unlike each of its neighbours, indented as one of them: only where the two agree, or only
    where they do not (a line with one neighbour counts as the latter)."""
    indent = _indent(here)
    neighbours = ((_next_line(lines, number, -1), "above"), (_next_line(lines, number, 1), "below"))
    known = [(neighbour, where) for neighbour, where in neighbours if neighbour is not None]
    if not known or any(_indent(neighbour) == indent for neighbour, _ in known):
        return
    agree = len(known) == 2 and _indent(known[0][0]) == _indent(known[1][0])
    if agree != neighbours_agree:
        return
    deepest = _deepest(here, neighbours[1][0])
    for neighbour, where in known[:1] if agree else known:
        wanted = _indent(neighbour)
        if deepest is not None and wanted > deepest:
            continue
        message = f"line {number} is indented by {_spaces(indent)}, the line {where} by {wanted}"
        hint = f"indent it by {_spaces(wanted)}, as the line {where}"
        yield _Guess(number, " " * wanted + here.lstrip(" "), Slip(number, 1, message, hint))


class _Level(NamedTuple):
    """A depth a line may have been meant at, and what is there."""

    depth: int
    what: str
    """Where that depth is, as a message names it: `the key on line 5 by 4`."""
    like: str
    """The same, as a hint likens the line to it: `as line 5`."""


def _indented_as_a_level(lines: list[str], number: int, here: str, *, one_off: bool) -> Iterator[_Guess]:
    """A line indented as a level open around it (`_levels`), the nearer line first: only the depths one space off
    (`one_off`), or only the others. A line that opens a block stays above the lines below it that are deeper: they
    are its block. An odd depth is no level: records are indented by two spaces, as `fmt` writes them, so a line at
    an odd depth is set off itself (and may be the slip)."""
    if not here.strip():
        return
    indent = _indent(here)
    tried = {indent}
    deepest = _deepest(here, _next_line(lines, number, 1))
    for level in _levels(lines, number, here):
        if level.depth in tried or level.depth % 2 or (abs(level.depth - indent) == 1) != one_off:
            continue
        if deepest is None or level.depth <= deepest:
            tried.add(level.depth)
            yield _guess_at(number, here, level)


def _guess_at(number: int, here: str, level: _Level) -> _Guess:
    message = f"line {number} is indented by {_spaces(_indent(here))}, {level.what}"
    hint = f"indent it by {_spaces(level.depth)}, {level.like}"
    return _Guess(number, " " * level.depth + here.lstrip(" "), Slip(number, 1, message, hint))


def _deepest(here: str, below: str | None) -> int | None:
    """How deep a line that opens a block (`key:`, `key: |`, `- |`) may be set, where the line below it is deeper:
    less deep than that line (a list too is indented under its key, as `fmt` writes it); None where no block
    follows."""
    if below is None or _indent(below) <= _indent(here) or _OPENS.fullmatch(_without_comment(here)) is None:
        return None
    return _indent(below) - 1


def _levels(lines: list[str], number: int, here: str) -> Iterator[_Level]:
    """The levels around line `number`: its neighbours' depths (and the key of an item above), each key or item
    that encloses it, and where it stands over its own lines below. The neighbours come first: where a line is
    indented as the line below and as a key far above, the neighbour is named."""
    enclosing = list(_enclosing(lines, number))
    if enclosing:
        yield from _levels_of(enclosing[0][1], "the line above")
    below = _next_line(lines, number, 1)
    if below is not None:
        yield _Level(_indent(below), f"the line below by {_indent(below)}", "as the line below")
    for other, line in enclosing[1:]:
        yield from _levels_of(line, f"line {other}")
    if below is not None:
        yield from _over_its_lines_below(here, below)


def _over_its_lines_below(here: str, below: str) -> Iterator[_Level]:
    """Where a line stands over the deeper lines below it that are its own: an item 2 less than its lines (what
    follows its '- ' lines up with them), a key that opens a block 2 less than the block (as `fmt` indents one)."""
    depth = _indent(below)
    if depth < 2:
        return
    if _ITEM.match(here) is not None and _ITEM.match(below) is None:
        hint = "so that what follows '- ' lines up with the line below"
        yield _Level(depth - 2, f"the line below by {depth}", hint)
    elif _deepest(here, below) is not None:
        yield _Level(depth - 2, f"the line below by {depth}", "2 less than the block below it")


def _set_over_its_lines_below(lines: list[str], number: int, here: str) -> Iterator[_Guess]:
    """A line that opens a block, or an item, set over its lines below (`_over_its_lines_below`): the first key of a
    mapping, or item of a list, set off, whose siblings below stopped libyaml."""
    below = _next_line(lines, number, 1)
    for level in _over_its_lines_below(here, below) if below is not None else ():
        if level.depth != _indent(here) and level.depth % 2 == 0:
            yield _guess_at(number, here, level)


def _enclosing(lines: list[str], number: int) -> Iterator[tuple[int, str]]:
    """The line above line `number`, then each line above indented less than all those below it (the keys and items
    that enclose it), with their numbers."""
    floor: int | None = None
    for other in range(number - 1, max(0, number - _LOOK_BACK), -1):
        line = lines[other - 1]
        if line.strip() and not _comment(line) and (floor is None or _indent(line) < floor):
            floor = _indent(line)
            yield other, line
            if floor == 0:
                return


def _levels_of(line: str, place: str) -> Iterator[_Level]:
    """The levels that `line`, at `place`, opens: its depth, and an item's key (`- where: …` opens a level at the
    column of `where`)."""
    item = _ITEM_KEY.match(line)
    if item is not None:
        key, depth = item["key"], item.start("key")
        yield _Level(depth, f"the key '{key}' on {place} by {depth}", f"as '{key}' on {place}")
    yield _Level(_indent(line), f"{_what_is_on(line, place)} by {_indent(line)}", f"as {place}")


def _what_is_on(line: str, place: str) -> str:
    """`line` at `place` as a message names it: `the line above`, `the key on line 5`, `the item on line 2`."""
    if place == "the line above":
        return place
    if _ITEM.match(line) is not None:
        return f"the item on {place}"
    return f"the key on {place}" if _KEY.match(line) is not None else place


def _written_slips(number: int, here: str) -> Iterator[_Guess]:
    """A ':' missing after a key, a ': ' in a value not quoted, a quote or a bracket left open, on line `number`."""
    missing_colon = _KEY_THEN_WORDS.fullmatch(here)
    if missing_colon is not None:
        key, rest = missing_colon["key"], missing_colon["rest"]
        rest = rest.rstrip() if rest[0] in "\"'" else _without_comment(rest)  # a '#' in quotes is no comment
        fixed = f"{missing_colon['indent']}{key}: {rest}"
        place = missing_colon.start("key") + 1
        yield _Guess(number, fixed, Slip(number, place, f"a ':' is missing after '{key}'", f"write {_shown(fixed)}"))
    colon_in_value = _PLAIN_VALUE.fullmatch(here)
    value = _without_comment(colon_in_value["value"]) if colon_in_value is not None else ""
    if colon_in_value is not None and ": " in value:
        fixed = f"{colon_in_value['lead']}{json.dumps(value, ensure_ascii=False)}"
        message = "': ' inside a value that is not quoted starts a key of its own"
        place = colon_in_value.start("value") + 1
        yield _Guess(number, fixed, Slip(number, place, message, f"quote the value: {_shown(fixed)}"))
    yield from _missing_spaces(number, here)
    yield from _open_quote(number, here)
    yield from _apostrophe_in_single_quotes(number, here)
    flow = _FLOW_VALUE.match(here)
    if flow is not None:
        closing = _CLOSING[flow["open"]]
        what = "list" if closing == "]" else "mapping"
        message = f"the {what} that '{flow['open']}' opens on line {number} is not closed"
        hint = f"end it with '{closing}' (or a ',' is missing between its items)"
        yield _Guess(number, here.rstrip() + closing, Slip(number, flow.start("open") + 1, message, hint))


def _colon_in_wrapped_value(lines: list[str], number: int, here: str) -> Iterator[_Guess]:
    """A ': ' in a line that carries on a plain value begun on a key's line above (`summary: a long` then `  text
    that goes on: here`): the whole value quoted, from after its key to its last line. A double-quoted value folds
    its lines as a plain one does, so it reads the same; only a value with no '"' or '\\' in it is quoted."""
    if ": " not in _without_comment(here):
        return
    indent = _indent(here)
    for above in range(number - 1, max(0, number - _LOOK_BACK), -1):
        line = lines[above - 1]
        if not line.strip() or _indent(line) >= indent:
            continue
        begun = _PLAIN_VALUE.fullmatch(line)
        key_column = len(begun["lead"]) - len(begun["lead"].lstrip(" -")) if begun is not None else indent
        if begun is None or indent <= key_column:  # a line no deeper than the key is the mapping's, not the value's
            return
        last = number
        while last < len(lines) and lines[last].strip() and _indent(lines[last]) > key_column:
            last += 1
        value = _without_comment(begun["value"])
        carried = [_without_comment(lines[index - 1]) for index in range(above + 1, last + 1)]
        if any('"' in text or "\\" in text or not text.strip() for text in [value, *carried]):
            return
        message = "': ' inside a value that is not quoted starts a key of its own"
        shown = _shown(f'{begun["lead"].strip()} "{value} …"')
        hint = f"quote the value, from line {above} to line {last}: {shown}"
        changes = ((above, f'{begun["lead"]}"{value}'), (last, f'{carried[-1]}"'))
        repaired = changes[1][1] if last == number else here
        yield _Guess(number, repaired, Slip(number, indent + 1, message, hint), also=changes, text=True)
        return


def _missing_spaces(number: int, here: str) -> Iterator[_Guess]:
    """`key:value` where `key: value` was meant, and `-item` where `- item` was."""
    colon = _NO_SPACE_AFTER_COLON.fullmatch(here)
    if colon is not None:
        fixed = f"{colon['lead']} {colon['rest']}"
        message = f"a space is missing after '{colon['key']}:'"
        yield _Guess(number, fixed, Slip(number, colon.end("lead") + 1, message, f"write {_shown(fixed)}"))
    dash = _NO_SPACE_AFTER_DASH.fullmatch(here)
    if dash is not None:
        fixed = f"{dash['lead']} {dash['rest']}"
        message = "a space is missing after '-', which starts an item of a list"
        yield _Guess(number, fixed, Slip(number, dash.end("lead"), message, f"write {_shown(fixed)}"))


def _apostrophe_in_single_quotes(number: int, here: str) -> Iterator[_Guess]:
    """A value quoted with ' that holds a ' of its own (`title: 'the model's cost'`): YAML ends the value there; a
    ' inside is written twice."""
    quoted = _SINGLE_QUOTED.fullmatch(here)
    if quoted is None or "'" not in quoted["inner"] or "''" in quoted["inner"]:
        return
    fixed = f"{quoted['lead']}'{quoted['inner'].replace(chr(39), chr(39) * 2)}'{quoted['after']}"
    message = "a ' inside a value quoted with ' ends the value there"
    hint = f"write each ' inside it twice: {_shown(fixed)}, or quote the value with \" instead"
    yield _Guess(number, fixed, Slip(number, quoted.start("inner") + quoted["inner"].index("'") + 1, message, hint))


def _without_comment(text: str) -> str:
    """`text` up to a comment (a '#' after white space), without trailing white space, as YAML reads a plain value."""
    comment = _COMMENT.search(text)
    return (text[: comment.start()] if comment is not None else text).rstrip()


def _open_quote(number: int, here: str) -> Iterator[_Guess]:
    quoted = _QUOTED_VALUE.match(here)
    if quoted is not None and not _closes(here, quoted.end("quote"), quoted["quote"]):
        quote = quoted["quote"]
        message = f"the value on line {number} opens a quote ({quote}) that does not close on that line"
        place = quoted.start("quote") + 1
        yield _Guess(number, here.rstrip() + quote, Slip(number, place, message, f"end the value with {quote}"))


def _next_line(lines: list[str], number: int, step: int) -> str | None:
    """The nearest line above (`step` -1) or below (1) line `number` that holds more than a comment."""
    index = number - 1 + step
    while 0 <= index < len(lines):
        if lines[index].strip() and not _comment(lines[index]):
            return lines[index]
        index += step
    return None


def _spaces(count: int) -> str:
    return "1 space" if count == 1 else f"{count} spaces"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _closes(line: str, start: int, quote: str) -> bool:
    """Whether the quoted value that starts at `start` (after its quote) ends on `line`."""
    index = start
    while index < len(line):
        character = line[index]
        if quote == '"' and character == "\\":
            index += 2
            continue
        if character == quote:
            if quote == "'" and line[index + 1 : index + 2] == "'":
                index += 2
                continue
            return True
        index += 1
    return False


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _shown(line: str) -> str:
    """A repaired line as a hint quotes it: without its indentation, cut when long."""
    shown = line.strip()
    return f"`{cut(shown, _SHOWN)}`"

"""The sentences of the `flopkb new` templates that an author must replace, read from the templates themselves.

A scaffolded record holds sentences such as "Replace this sentence with the
fact."; while it does, it is a draft (`placeholder`). The sentences are not
listed here: they are the prose values of the templates
(`flopkb/authoring/templates/new/*.yaml.j2`), both the fields the template
writes and those of its commented example, so a template edited tomorrow is
detected tomorrow. The templates are read as YAML with their `{{ ... }}`
expressions blanked out; nothing in them is rendered or run.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from flopkb.load.models import MODELS, markers

TEMPLATES = Path(__file__).parent.parent / "authoring" / "templates" / "new"
_EXPRESSION = re.compile(r"\{\{.*?\}\}")
_EXAMPLE_LINE = re.compile(r"# (?=[ a-z_-])")
_PLAIN_FIELDS = frozenset({"vendor"})
"""Fields that are not markdown but whose template value is a sentence to replace."""


@functools.cache
def prose_fields() -> frozenset[str]:
    """The names of every markdown field of every kind, nested rows included."""
    return frozenset(_PLAIN_FIELDS).union(*(markdown_fields(model) for model in MODELS.values()))


@functools.cache
def markdown_fields(model: type) -> frozenset[str]:
    """The names of the markdown fields of `model` (a record kind's), nested rows included."""
    names: set[str] = set()
    seen: set[type] = set()

    def visit(model: type) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():  # type: ignore[attr-defined]
            is_markdown, _ = markers(info.metadata)
            if is_markdown or _markdown_items(info.annotation):
                names.add(name)
            for inner in _models_in(info.annotation):
                visit(inner)

    visit(model)
    return frozenset(names)


def _markdown_items(annotation: Any) -> bool:
    """A list of markdown strings (`workarounds`)."""
    return any(markers(list(getattr(arg, "__metadata__", ())))[0] for arg in getattr(annotation, "__args__", ()))


def _models_in(annotation: Any) -> Iterator[type]:
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        yield annotation
    for arg in getattr(annotation, "__args__", ()):
        yield from _models_in(arg)


@functools.cache
def placeholder_sentences(folder: Path = TEMPLATES) -> tuple[str, ...]:
    """Every prose value of every template of `folder`, longest first."""
    found: set[str] = set()
    for path in sorted(folder.glob("*.yaml.j2")):
        text = _EXPRESSION.sub("x", path.read_text(encoding="utf-8"))
        example = "\n".join(_EXAMPLE_LINE.sub("", line, count=1) for line in text.splitlines() if line.startswith("# "))
        for part in (text, example):
            try:
                data = yaml.load(part, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except yaml.YAMLError:
                continue
            found.update(_prose_values(data, None))
    return tuple(sorted(found, key=lambda sentence: (-len(sentence), sentence)))


def _prose_values(data: Any, key: str | None) -> Iterator[str]:
    if isinstance(data, dict):
        for name, value in data.items():
            yield from _prose_values(value, str(name))
    elif isinstance(data, list):
        for item in data:
            yield from _prose_values(item, key)
    elif isinstance(data, str) and key in prose_fields() and data.strip():
        yield " ".join(data.split())


@functools.cache
def _sentence_pattern() -> re.Pattern[str]:
    """Any template sentence, its words separated by any run of blanks: one search per text, in C."""
    words = (r"\s+".join(re.escape(word) for word in sentence.split()) for sentence in placeholder_sentences())
    return re.compile("|".join(words) or r"(?!)")


@functools.cache
def _words() -> tuple[tuple[str, ...], ...]:
    """Each sentence's words, longest first: a text that lacks one of them cannot hold the sentence."""
    return tuple(tuple(sorted(set(sentence.split()), key=len, reverse=True)) for sentence in placeholder_sentences())


class Placeholder(NamedTuple):
    """A template sentence still in a record's text."""

    path: tuple[str | int, ...]
    """Where the text is in the record's data."""
    text: str
    sentence: str
    offset: int
    """Where the sentence starts in the text."""


def placeholders_in(data: Any) -> list[Placeholder]:
    """Every template sentence that a text of a record's data still holds."""
    found: list[Placeholder] = []
    pattern = _sentence_pattern()
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if may_hold_placeholders(value) and (match := pattern.search(value)) is not None:
                found.append(Placeholder(path, value, " ".join(match.group().split()), match.start()))
        elif isinstance(value, dict):
            stack.extend(((*path, str(name)), item) for name, item in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in enumerate(value))
    return found


def may_hold_placeholders(text: str) -> bool:
    """False when `text` lacks a word of every sentence: most records' files, ruled out by plain `in` (C speed)."""
    return any(all(word in text for word in words) for words in _words())

"""One check of the language server: the buffers it checked, the base it compiled, its diagnostics in the client's
positions (`flopkb.editor.checker` makes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flopkb.config import Config
from flopkb.load.files import Unreadable, decode

if TYPE_CHECKING:
    from lsprotocol import types

    from flopkb.kb.entry import Entry
    from flopkb.kb.knowledge_base import KnowledgeBase


@dataclass(frozen=True)
class Buffer:
    """An open document: its text and the client's version of it."""

    text: str
    version: int


@dataclass
class Checked:
    """One finished check."""

    config: Config
    generation: int
    buffers: dict[str, Buffer]
    """The buffers it checked, by root-relative path."""
    kb: KnowledgeBase | None
    """The compiled base (None when the check failed, and for the check of an edited buffer first)."""
    diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    """Every file's diagnostics, by root-relative path, in the client's positions."""
    texts: dict[str, str] = field(default_factory=dict)
    """The text each file's diagnostics were placed in."""
    files: frozenset[str] | None = None
    """The files whose diagnostics it tells: None for every file (a full check); the edited file for the check of an
    edited buffer first."""
    related: bool = True
    """Whether its diagnostics have their related places: not yet in the first check's first hand-out, nor in the
    stored diagnostics handed out before it."""
    began: int = 0
    """When it began (`time.time_ns`)."""
    stopped: bool = False
    """Whether newer buffers stopped its stages: never handed out, even when an undo makes its buffers the newest."""

    entries_by_path: dict[str, Entry] = field(default_factory=dict)

    def entry_at(self, rel: str) -> Entry | None:
        if not self.entries_by_path and self.kb is not None:
            self.entries_by_path = {entry.path: entry for entry in self.kb.entries.values()}
        return self.entries_by_path.get(rel)

    def text_of(self, rel: str) -> str:
        """The text of a file as this check read it: its buffer, its loaded source, or the file."""
        text = self.texts.get(rel)
        if text is None:
            entry = self.entry_at(rel)
            if rel in self.buffers:
                text = self.buffers[rel].text
            elif entry is not None and entry.source is not None:
                text = entry.source.text
            else:
                text = disk_text(self.config, rel)
            self.texts[rel] = text
        return text


def disk_text(config: Config, rel: str) -> str:
    """The text of a file that is not a loaded record (the vocabulary, a file that failed): empty if unreadable."""
    try:
        decoded = decode(config.files.read(rel), rel)
    except Unreadable:
        return ""
    return decoded if isinstance(decoded, str) else ""

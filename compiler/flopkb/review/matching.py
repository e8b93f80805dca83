"""Which record of the head is which record of the base: by id, or by the alias `flopkb mv` leaves (the old id)."""

from __future__ import annotations

from flopkb.kb.knowledge_base import KnowledgeBase


class Matching:
    """Which record of the head is which of the base: by id, or by the alias a rename left."""

    def __init__(self, base: KnowledgeBase, head: KnowledgeBase) -> None:
        self.base, self.head = base, head
        gone = base.entries.keys() - head.entries.keys()
        self.renamed: dict[str, str] = {}
        for record_id, entry in head.entries.items():
            if record_id in base.entries:
                continue
            for alias in entry.summary.aliases:
                if alias in gone and alias not in self.renamed:
                    self.renamed[alias] = record_id
                    break
        self.old_of = {new: old for old, new in self.renamed.items()}
        self._added = sorted(record_id for record_id in head.entries if self.old(record_id) not in base.entries)
        self._removed = sorted(record_id for record_id in base.entries if self.new(record_id) not in head.entries)
        self._edited = sorted(
            record_id
            for record_id, entry in head.entries.items()
            if (before := base.entries.get(self.old(record_id))) is not None
            and (entry.digest is None or before.digest != entry.digest)
        )

    def new(self, base_id: str) -> str:
        return self.renamed.get(base_id, base_id)

    def old(self, head_id: str) -> str:
        return self.old_of.get(head_id, head_id)

    def added(self) -> list[str]:
        return self._added

    def removed(self) -> list[str]:
        return self._removed

    def edited(self) -> list[str]:
        """Head ids whose base record exists and whose bytes differ (renamed ones included)."""
        return self._edited

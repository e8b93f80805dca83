"""Open buffers over the files on disk: an `EntryLoader` that loads an editor's unsaved text in place of its file.

Every file without an open buffer goes through the load cache
(`flopkb.pipeline.cache.FileCache`), so only what changed is loaded again;
a buffer is read, parsed and validated as its file would be (the same size
limit, decoding, parser and validation), and its entry carries the digest
of its bytes, so that the stages' dependency keys (`flopkb.links.memo`) see
the edit. A buffer for a file not on disk yet (a new record) is loaded too,
in its place in path order.
"""

from __future__ import annotations

from collections.abc import Mapping

from flopkb.config import Config
from flopkb.kb.entry import Entry
from flopkb.load.files import Unreadable, refuse_oversize
from flopkb.load.source import Source, decode, parse
from flopkb.load.vocabulary import Vocabulary
from flopkb.pipeline.cache import FileCache, content_digest
from flopkb.pipeline.compile import RECORD_SUFFIXES, validate_entry
from flopkb.report.diagnostics import Diagnostic, internal_error, make


class BufferLoader:
    """Loads `buffers` (root-relative path -> text) in place of their files, and every other file through `cache`."""

    def __init__(self, cache: FileCache, buffers: Mapping[str, str]) -> None:
        self.cache = cache
        self.buffers = buffers

    def __call__(
        self, config: Config, files: list[str], vocabulary: Vocabulary | None
    ) -> list[tuple[Entry, list[Diagnostic]]]:
        records = config.records.rstrip("/") + "/"
        opened = {rel for rel in self.buffers if rel.startswith(records) and rel.endswith(RECORD_SUFFIXES)}
        on_disk = iter(self.cache(config, [rel for rel in files if rel not in opened], vocabulary))
        loaded = []
        for rel in sorted(set(files) | opened):
            if rel in opened:
                loaded.append(load_buffer(config, rel, self.buffers[rel], vocabulary))
            else:
                loaded.append(next(on_disk))
        return loaded


def load_buffer(config: Config, rel: str, text: str, vocabulary: Vocabulary | None) -> tuple[Entry, list[Diagnostic]]:
    """The entry of an unsaved buffer at `rel`, as `flopkb check` would load the same bytes from the file."""
    raw = text.encode("utf-8", errors="surrogatepass")
    source, diagnostics = _parse_buffer(rel, raw)
    entry, diagnostics = validate_entry(config, rel, source, diagnostics, vocabulary)
    entry.digest = content_digest(raw)
    return entry, diagnostics


def _parse_buffer(rel: str, raw: bytes) -> tuple[Source | None, list[Diagnostic]]:
    try:
        refuse_oversize(raw)
        decoded = decode(raw, rel)
        if isinstance(decoded, Diagnostic):
            return None, [decoded]
        return parse(decoded, rel)
    except Unreadable as problem:
        return None, [make("not-a-record", rel, 1, 1, str(problem))]
    except Exception as error:  # flopkb's bug, reported on the buffer: the server keeps running
        return None, [internal_error(rel, error, "reading the file")]

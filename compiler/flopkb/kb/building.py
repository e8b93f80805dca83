"""Parts built on first use, read from several threads: built once, by the first thread that asks, while the others
wait for it rather than find them half built or build them again.

An editor (`flopkb lsp`) reads one knowledge base from its message loop, its requests' lane and the thread that
checks an edited buffer first (`flopkb.editor`). Every part that is built on first use is built alike: look without
a lock; when it is not built, take the lock, look again, build, and publish it whole (its last assignment is the one
a reader looks at), so that once built it is read without the lock. A part of one base (its links and edges) is built
under the base's lock (`KnowledgeBase.building`), its formula results under their own (`LaterResults`: a record's
hover does not wait for every record's links); a part of one record file, which consecutive
bases share (the model and text the load cache defers, the links as written it keeps), under `FILE_PARTS`. A part
whose second build gives an equal value and counts nothing (a source's positions, the resolver's indexes and caches)
is only published whole, without a lock: two threads may both build it, neither sees it half built, and a long build
(a large file's positions) holds up no other.
"""

from __future__ import annotations

import threading

FILE_PARTS = threading.RLock()
"""Held while a part of one record file is built: one file's model unpickled or text read. Taken for one file at a
time and never around the lock of a base, so that a base's long build (its links) never makes another base's
stages wait long for a file."""

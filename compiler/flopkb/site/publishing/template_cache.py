"""jinja2's compiled templates kept between builds, read back only when this user's flopkb wrote them.

jinja2's own `FileSystemBytecodeCache` unpickles and unmarshals whatever file
it finds under its name: code, run by the next build. This one writes each
file sealed with the user's key (`flopkb.sealed`) and reads one only when its
seal holds, as a regular file of bounded size; any other file is ignored and
the template compiled again (then written over it). Its folder must be a real
folder (`flopkb.sealed.own_folder`): a symlink there turns it off.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from flopkb.atomic import write_atomically
from flopkb.load.files import Unreadable, read_bytes
from flopkb.sealed import NoKey, own_folder, seal, unseal
from flopkb.site.sandbox import Sandbox

MAX_TEMPLATE_BYTES = 1 << 24
_SEAL_PURPOSE = b"flopkb-jinja-sandboxed:" + Sandbox.compiled_with.encode()
"""What the seal is for: code compiled by jinja2's sandbox (`flopkb.site.sandbox`), which differs from a plain
environment's (calls, and the operators the sandbox bounds, go through the sandbox's checks); a file compiled without
them, by an earlier flopkb, is never read back, nor this one by a plain environment."""


def template_folder(cache: Path | None) -> Path | None:
    """The folder of the compiled templates in the base's cache folder `cache`, made; None (no template cache for this
    build) without a cache folder, or when that folder is a symlink or cannot be made."""
    if cache is None:
        return None
    try:
        return own_folder(cache / "templates")
    except OSError:
        return None


class SealedBytecodeCache(jinja2.FileSystemBytecodeCache):
    """A `FileSystemBytecodeCache` in `folder` whose files are sealed with the user's key."""

    def __init__(self, folder: Path) -> None:
        super().__init__(str(folder))

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            raw = read_bytes(self._get_cache_filename(bucket), limit=MAX_TEMPLATE_BYTES)
        except Unreadable:
            return  # missing, or not a file to read: the template is compiled
        content = unseal(_SEAL_PURPOSE, raw)
        if content is not None:
            bucket.bytecode_from_string(bytes(content))

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            sealed = seal(_SEAL_PURPOSE, bucket.bytecode_to_string())
            own_folder(Path(self.directory))
            write_atomically(Path(self._get_cache_filename(bucket)), sealed)
        except (NoKey, OSError):
            return  # the cache is a shortcut: the next build compiles again

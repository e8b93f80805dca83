"""Run `flopkb mv` (argv: root old new kill_at) and SIGKILL it at its `kill_at`-th file-system write.

Every call that changes the file system counts (os.write, os.replace, os.link, os.unlink, os.mkdir, os.rmdir,
os.chmod, os.fsync); the process kills itself right before the one it is told. With kill_at 0 it runs whole
and prints how many such calls it made.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from flopkb.cli import main

root, old, new, kill_at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
calls = 0


def counted(name: str) -> None:
    real = getattr(os, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        global calls
        calls += 1
        if calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    setattr(os, name, call)


for name in ("write", "replace", "link", "unlink", "mkdir", "rmdir", "chmod", "fsync"):
    counted(name)
try:
    main(["mv", "--root", root, old, new], standalone_mode=False)
finally:
    print(f"calls={calls}", file=sys.stderr)

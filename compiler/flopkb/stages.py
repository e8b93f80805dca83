"""The checking stages that `flopkb check` runs after loading, in order."""

from __future__ import annotations

from flopkb.pipeline import Stage

CHECK_STAGES: tuple[Stage, ...] = ()

"""The checking stages that `flopkb check` runs after loading, in order."""

from __future__ import annotations

from flopkb.pipeline import Stage
from flopkb.resolve import check_links

LINK_STAGES: tuple[Stage, ...] = (check_links,)
"""Links extracted and resolved, and checked (`kb.links`, `kb.resolver`)."""

CHECK_STAGES: tuple[Stage, ...] = (*LINK_STAGES,)

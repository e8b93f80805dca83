"""The checking stages that `flopkb check` runs after loading, in order."""

from __future__ import annotations

from flopkb.evidence import check_evidence
from flopkb.graph import check_graph
from flopkb.pipeline import Stage
from flopkb.resolve import check_links

LINK_STAGES: tuple[Stage, ...] = (check_links, check_graph, check_evidence)
"""Links extracted and resolved (`kb.links`, `kb.resolver`), the graph and orphans (`kb.graph`), evidence (`kb.evidence`)."""

CHECK_STAGES: tuple[Stage, ...] = (*LINK_STAGES,)

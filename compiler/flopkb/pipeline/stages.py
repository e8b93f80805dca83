"""The checking stages that `flopkb check` runs after loading, in order."""

from __future__ import annotations

from flopkb.formulas.measurements import check_measurements
from flopkb.formulas.specs import check_specs
from flopkb.formulas.stage import check_formulas
from flopkb.kb.knowledge_base import Stage
from flopkb.links.evidence import check_evidence
from flopkb.links.journal import check_unfinished_move
from flopkb.links.orphans import check_graph
from flopkb.links.resolve import check_links
from flopkb.pipeline.left_out import check_left_out

LINK_STAGES: tuple[Stage, ...] = (check_links, check_graph, check_evidence)
"""Links extracted and resolved (`kb.links`, `kb.resolver`), the graph and orphans (`kb.graph`), evidence
(`kb.evidence`)."""

FORMULA_STAGES: tuple[Stage, ...] = (check_specs, check_measurements, check_formulas)
"""Accelerator specs checked against their parameters' dimensions, source measurements read; every formula evaluated
and every claim re-computed (`kb.formulas`)."""

CHECK_STAGES: tuple[Stage, ...] = (check_unfinished_move, *LINK_STAGES, *FORMULA_STAGES, check_left_out)
"""A move left unfinished (`flopkb.links.journal`), then the link and formula stages, then what they tell of the list
items validation left out (`flopkb.pipeline.left_out`)."""

"""Formulas: expressions, units, accelerator specs → evaluations and claims.

Takes the knowledge base with its links resolved. Gives every accelerator's
specs as quantities, every formula parsed (never executed) and evaluated with
units per accelerator and sweep point, every claim re-computed, and the
tables of `flopkb eval`.
"""

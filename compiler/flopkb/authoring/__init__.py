"""Authoring: the tools an author edits records with.

`fmt` (canonical form, comments kept), `new` (a record from a template that
passes `check`), `schema` (JSON Schemas for editor completion) and
`check --watch`. Each takes records as text and gives text or files back.
"""

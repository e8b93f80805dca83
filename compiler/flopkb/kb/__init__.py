"""The compiled knowledge base's types: what the stages fill in.

`Entry` (one record file: id, source, model, what stages derived from it) and
`KnowledgeBase` (every entry, the vocabulary, the diagnostics, and each
stage's typed result). Below every stage, so that each stage can take the
base without importing the stages after it.
"""

"""Pipeline: load every file, then run the checking stages in order.

`compile_knowledge_base` is the one entry point that `check`, `build`,
`serve` and `eval` share; `stages` lists the stages; `cache` keeps, per
file, what loading and the stages derived, so that a run after an edit
redoes only what the edit touches.
"""

"""Site: the compiled knowledge base → markdown pages → mkdocs → `build/site/`.

Takes a knowledge base without errors. Gives a page per record (sanitised
prose, formulas typeset with their evaluated tables and charts, backlinks,
neighbourhood graphs), the index, kind, evidence, compare and graph pages,
then runs mkdocs on them in a folder beside the site and swaps it in.
`serve` rebuilds on every change.
"""

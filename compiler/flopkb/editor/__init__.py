"""The language server, `flopkb lsp`: the compiled base in the editor, as the author types.

Takes the compiled pipeline (loading through the load cache, the stages, the
diagnostics) and gives it to an editor over the Language Server Protocol:
open buffers lay over the files on disk (`flopkb.load.sources.Overlay`), a check runs in a
thread of its own and a newer edit drops the older check (`checker.py`),
diagnostics are converted to the client's position encoding
(`positions.py`, `diagnostics.py`), and `server.py` wires it to pygls.
"""

"""Links: wikilinks and typed refs → resolution → the graph → evidence.

Takes the loaded knowledge base. Gives every link and ref with its exact
position, resolved in the spec's order (exact id, unique last segment,
alias), the networkx link graph with orphans and backlinks, the evidence
status and debt of every record, and `flopkb mv`, which renames a record and
every link to it.
"""

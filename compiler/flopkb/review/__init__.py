"""`flopkb diff`: what a change does to the computed knowledge between two commits (or a commit and the work tree).

Takes two revisions of a git repository; compiles both sides through the pipeline (one load cache, so a blob
parsed for one side is not parsed again for the other), evaluates again only the records whose fingerprint or
dependency key differs, and gives a report (claims, agreement with measurements, values grouped by the edit that
caused them, evidence, diagnostics, records, links, pages) in text, markdown, json or GitHub annotations.
"""

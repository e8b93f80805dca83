"""Load: record files → parsed data with positions → typed records.

Takes the paths of the record files and the vocabulary file. Gives each
file's `Source` (its text, its data, and the line and column of any key or
value on demand), its pydantic `Record` model, and the diagnostics of
reading, parsing and validating it. Knows nothing of other files.
"""

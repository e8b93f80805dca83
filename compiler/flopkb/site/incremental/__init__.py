"""The incremental build: page keys, the state a build leaves for the next, mkdocs for the changed pages only,
and pages built without python-markdown."""

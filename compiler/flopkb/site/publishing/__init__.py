"""Publishing and serving: mkdocs configuration and build, the search index, the 404 page, the swap into
`build/site/`, `flopkb serve`."""

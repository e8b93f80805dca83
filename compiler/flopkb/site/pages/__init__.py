"""The site's pages, one module a page kind, and what they share (`common`: the `Site`, a `Page`, links)."""

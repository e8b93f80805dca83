"""Shared pytest setup: the browser fixtures (`page`, `page_log`, `serve_dir`, `shot`, ...) and the
session-wide built sites (`project_site`, `hostile_site`) for every test module."""

pytest_plugins = ["browser_fixtures", "site_fixtures"]

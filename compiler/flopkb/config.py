"""Settings from `[tool.flopkb]` in the knowledge base's `pyproject.toml`; every one has a default."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flopkb.load.sources import FileSource, WorkTree
from flopkb.report.codes import CODES, Severity
from flopkb.report.diagnostics import INTERNAL_ERROR
from flopkb.report.hints import did_you_mean

SEVERITY_OFF = "off"


class ConfigError(Exception):
    """The configuration cannot be used: the command cannot run (exit 2)."""


@dataclass(frozen=True, slots=True)
class SiteSettings:
    name: str = "flopkb"
    url: str | None = None
    repo_url: str | None = None
    description: str = "A knowledge base of LLM-inference performance records"


@dataclass(frozen=True, slots=True)
class Config:
    root: Path
    records: str = "records"
    schema: str = "schema"
    site_dir: str = "build/site"
    cache_dir: str = "build/cache"
    severity: dict[str, str] = field(default_factory=dict)
    site: SiteSettings = field(default_factory=SiteSettings)
    files: FileSource = None  # type: ignore[assignment]  # the work tree under `root` unless given
    """Where the base's files are read from (`flopkb.load.sources`): the work tree, open buffers over it, a git
    tree."""

    def __post_init__(self) -> None:
        if self.files is None:
            object.__setattr__(self, "files", WorkTree(self.root))

    @property
    def records_path(self) -> Path:
        return self.root / self.records

    @property
    def vocabulary_path(self) -> Path:
        return self.root / self.schema / "vocabulary.yaml"

    def severity_of(self, code: str) -> Severity | None:
        """The severity configured for `code`; None when it is turned off."""
        chosen = self.severity.get(code)
        if chosen == SEVERITY_OFF:
            return None
        return Severity(chosen) if chosen else CODES[code].severity


_PATH_KEYS = ("records", "schema", "site_dir", "cache_dir")
_SITE_KEYS = tuple(SiteSettings.__dataclass_fields__)


def load_config(root: Path) -> Config:
    """Read `root/pyproject.toml` (if any); refuse unknown keys and values with ConfigError."""
    pyproject = root / "pyproject.toml"
    table: dict[str, object] = {}
    if pyproject.is_file():
        try:
            table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("flopkb", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
            raise ConfigError(f"{pyproject}: {error}") from error
    known = (*_PATH_KEYS, "severity", "site")
    for key in table:
        if key not in known:
            raise ConfigError(f"[tool.flopkb] has no setting '{key}'" + _hint(key, known))
    paths: dict[str, Any] = {key: _string(table, key) for key in _PATH_KEYS if key in table}
    return Config(
        root=root, severity=_severities(table.get("severity", {})), site=_site(table.get("site", {})), **paths
    )


def _hint(word: str, choices: tuple[str, ...] | list[str]) -> str:
    hint = did_you_mean(word, choices)
    return f" ({hint})" if hint else ""


def _string(table: dict[str, object], key: str) -> str:
    value = table[key]
    if not isinstance(value, str) or not value:
        raise ConfigError(f"[tool.flopkb] {key} must be a non-empty string")
    return value


def _severities(table: object) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ConfigError('[tool.flopkb.severity] must be a table of code = "error" | "warning" | "off"')
    for code, level in table.items():
        if code not in CODES:
            raise ConfigError(f"[tool.flopkb.severity] names no code '{code}'" + _hint(code, list(CODES)))
        if code == INTERNAL_ERROR:
            raise ConfigError(f"[tool.flopkb.severity] cannot set {code}: it reports a bug in flopkb, not a finding")
        if level not in ("error", "warning", SEVERITY_OFF):
            raise ConfigError(f'[tool.flopkb.severity] {code} must be "error", "warning" or "off", not {level!r}')
    return dict(table)


def _site(table: object) -> SiteSettings:
    if not isinstance(table, dict):
        raise ConfigError("[tool.flopkb.site] must be a table")
    for key, value in table.items():
        if key not in _SITE_KEYS:
            raise ConfigError(f"[tool.flopkb.site] has no setting '{key}'" + _hint(key, _SITE_KEYS))
        if not isinstance(value, str):
            raise ConfigError(f"[tool.flopkb.site] {key} must be a string")
    return SiteSettings(**table)

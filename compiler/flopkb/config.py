"""Settings from `[tool.flopkb]` in the knowledge base's `pyproject.toml`; every one has a default."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from flopkb.load.sources import RECORD_SUFFIXES, FileSource, WorkTree
from flopkb.report.codes import CODES, Severity
from flopkb.report.diagnostics import INTERNAL_ERROR
from flopkb.report.hints import did_you_mean
from flopkb.sealed import base_cache_folder

SEVERITY_OFF = "off"


class ConfigError(Exception):
    """The configuration cannot be used: the command cannot run (exit 2)."""


class OutsideRecords(ValueError):
    """A path given for a record's id is not below the records folder."""


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
    cache_dir: str | None = None
    """None: the user's cache folder (`flopkb.sealed.base_cache_folder`), outside the base."""
    severity: dict[str, str] = field(default_factory=dict)
    site: SiteSettings = field(default_factory=SiteSettings)
    files: FileSource = None  # type: ignore[assignment]  # the work tree under `root` unless given
    """Where the base's files are read from (`flopkb.load.sources`): the work tree, open buffers over it, a git
    tree."""

    def __post_init__(self) -> None:
        if self.files is None:
            object.__setattr__(self, "files", WorkTree(self.root, (self.records, self.schema)))

    @property
    def records_path(self) -> Path:
        return self.root / self.records

    def record_id(self, argument: str) -> str:
        """The id an author means by `argument`: an id (`flops/a`), or a record file's path, with or without its
        extension: from the root (`records/flops/a.yaml`, as a shell completes it there), or from the current folder
        (starting with `./` or `../`, or absolute in the base). `OutsideRecords` when such a path is not below the
        records folder. (`/flops/a`, outside the base, is an id with a slash too many, which the id's check tells.)

        A leading records folder is the folder, not part of the id, unless the base keeps records in a folder of that
        name inside it."""
        text = argument.replace("\\", "/")
        if text.endswith(RECORD_SUFFIXES):
            text = text.rsplit(".", 1)[0]
        relative = text.startswith(("./", "../"))
        if relative or Path(text).is_absolute():
            try:
                path = Path(text).resolve()
            except (OSError, RuntimeError):  # a symlink loop on the way
                raise OutsideRecords(f"{argument} cannot be followed to a file: a symlink loops") from None
            if relative or path.is_relative_to(self.root.resolve()):
                try:
                    return path.relative_to(self.records_path.resolve()).as_posix()
                except ValueError:
                    raise OutsideRecords(f"{argument} is not in {self.records}/, where every record is") from None
        prefix = self.records.rstrip("/") + "/"
        if text.startswith(prefix) and not (self.records_path / prefix).is_dir():
            text = text[len(prefix) :]
        return text

    @property
    def vocabulary_path(self) -> Path:
        return self.root / self.schema / "vocabulary.yaml"

    @property
    def cache_path(self) -> Path | None:
        """Where the caches live (None: nowhere, there is no home folder to keep them in)."""
        return self.root / self.cache_dir if self.cache_dir is not None else base_cache_folder(self.root)

    def severity_of(self, code: str) -> Severity | None:
        """The severity configured for `code`; None when it is turned off."""
        chosen = self.severity.get(code)
        if chosen == SEVERITY_OFF:
            return None
        return Severity(chosen) if chosen else CODES[code].severity


_PATH_KEYS = ("records", "schema", "site_dir", "cache_dir")
_WRITTEN_KEYS = ("site_dir", "cache_dir")
"""Folders that flopkb empties or replaces: they may not hold, or lie in, any folder an author keeps."""
_KEPT = (".git", "docs", "site")
_SITE_KEYS = tuple(SiteSettings.__dataclass_fields__)


def find_base(start: Path) -> Path | None:
    """The knowledge base that `start` lies in, found as git finds its repository: the nearest folder, from `start`
    up, that has a `[tool.flopkb]` table in its pyproject.toml or a `records/` folder.

    One exception: a folder found by its `records/` alone is passed over when `start` lies inside the records folder
    that an outer base's `[tool.flopkb]` names (`records = "kb/records"`, run from `kb/records/flops/`).
    """
    start = start.resolve()
    folders = [start, *start.parents]
    for index, folder in enumerate(folders):
        try:
            configured = _table(folder) is not None
        except ConfigError:  # a pyproject.toml that cannot be read: this folder's if it holds records (load says why)
            configured = False
        if configured:
            return folder
        if (folder / "records").is_dir():
            return next((outer for outer in folders[index + 1 :] if _claims(outer, start)), folder)
    return None


def _claims(outer: Path, start: Path) -> bool:
    """Whether the base at `outer` has a `[tool.flopkb]` table whose records folder holds `start`."""
    try:
        table = _table(outer)
    except ConfigError:
        return False
    if table is None:
        return False
    records = table.get("records", "records")
    return isinstance(records, str) and start.is_relative_to((outer / records).resolve())


def _table(folder: Path) -> dict[str, object] | None:
    """The `[tool.flopkb]` table of `folder/pyproject.toml`; None without one; ConfigError when it cannot be read."""
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
        raise ConfigError(f"{pyproject}: {error}") from error
    table = tool.get("flopkb") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.flopkb] must be a table")
    return table


def load_config(root: Path) -> Config:
    """Read `root/pyproject.toml` (if any); refuse unknown keys and values with ConfigError."""
    table = _table(root) or {}
    known = (*_PATH_KEYS, "severity", "site")
    for key in table:
        if key not in known:
            raise ConfigError(f"[tool.flopkb] has no setting '{key}'" + _hint(key, known))
    paths: dict[str, Any] = {key: _string(table, key) for key in _PATH_KEYS if key in table}
    config = Config(
        root=root, severity=_severities(table.get("severity", {})), site=_site(table.get("site", {})), **paths
    )
    check_paths(config)
    return config


def check_paths(config: Config) -> None:
    """Refuse path settings that leave the base, and written folders that would replace what an author keeps."""
    root = config.root.resolve()
    resolved = {}
    for key in _PATH_KEYS:
        value = getattr(config, key)
        if value is None:
            continue
        if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute() or PureWindowsPath(value).drive:
            raise ConfigError(f"[tool.flopkb] {key} = {value!r} is absolute: give a path inside the base, e.g. build/x")
        if ".." in PurePosixPath(value.replace("\\", "/")).parts:
            raise ConfigError(f"[tool.flopkb] {key} = {value!r} leaves the base: give a path inside it, without '..'")
        try:
            resolved[key] = path = (root / value).resolve()
        except (RuntimeError, OSError) as error:  # a symlink loop (RuntimeError before Python 3.13)
            raise ConfigError(
                f"[tool.flopkb] {key} = {value!r} leads into a symlink loop: remove the looping link, or choose"
                " another path inside the base"
            ) from error
        if not path.is_relative_to(root):
            raise ConfigError(f"[tool.flopkb] {key} = {value!r} leads out of the base (through a symlink) to {path}")
    kept = {name: root / name for name in _KEPT}
    kept |= {key: resolved[key] for key in ("records", "schema")}
    for key in _WRITTEN_KEYS:
        path = resolved.get(key)
        if path is None:
            continue
        shown = f"[tool.flopkb] {key} = {getattr(config, key)!r}"
        if path == root:
            raise ConfigError(f"{shown} is the base itself: choose a folder of its own, e.g. build/x")
        for folder in kept.values():
            if folder == root:  # records = "." or schema = ".": the base's own check above covers it
                continue
            if path == folder or path.is_relative_to(folder) or folder.is_relative_to(path):
                raise ConfigError(
                    f"{shown} would overwrite {folder.relative_to(root).as_posix()}/: choose a folder of its own,"
                    " e.g. build/x"
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
        if key in _SITE_URL_KEYS and not _WEB_URL.fullmatch(value):
            raise ConfigError(
                f"[tool.flopkb.site] {key} must be an http:// or https:// URL, without quotes, spaces, < or >"
                f" (percent-encode them), not {value!r}"
            )
    return SiteSettings(**table)


# Every page carries these, in attributes and in scripts: only an http(s) URL of URL characters.
_SITE_URL_KEYS = ("url", "repo_url")
_WEB_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9._~!$&()*+,;=:@%/?#\[\]-]*)?", re.IGNORECASE)

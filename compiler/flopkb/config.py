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
    """The configuration cannot be used: the command cannot run (exit 2). `problems`: each thing to fix, a line of
    its own."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


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
    """Read `root/pyproject.toml` (if any); refuse unknown keys and values with ConfigError, naming them all."""
    table = _table(root) or {}
    known = (*_PATH_KEYS, "severity", "site")
    problems = [f"[tool.flopkb] has no setting '{key}'" + _hint(key, known) for key in table if key not in known]
    paths: dict[str, Any] = {key: table[key] for key in _PATH_KEYS if key in table and _string(table, key, problems)}
    severity = _severities(table.get("severity", {}), problems)
    config = Config(root=root, severity=severity, site=_site(table.get("site", {}), problems), **paths)
    problems.extend(_path_problems(config))
    if problems:
        raise ConfigError(*problems)
    return config


def check_paths(config: Config) -> None:
    """Refuse path settings that leave the base, and written folders that would replace what an author keeps."""
    problems = _path_problems(config)
    if problems:
        raise ConfigError(*problems)


def _path_problems(config: Config) -> list[str]:
    """Each path setting that leaves the base, and each written folder that would replace a folder an author keeps."""
    root = config.root.resolve()
    problems: list[str] = []
    resolved = {}
    for key in _PATH_KEYS:
        value = getattr(config, key)
        found = _resolved(root, key, value) if value is not None else None
        if isinstance(found, str):
            problems.append(found)
        elif found is not None:
            resolved[key] = found
    kept = {name: root / name for name in _KEPT}
    kept |= {key: resolved[key] for key in ("records", "schema") if key in resolved}
    for key in _WRITTEN_KEYS:
        written = resolved.get(key)
        problem = _overwrites(root, key, getattr(config, key), written, kept) if written is not None else None
        if problem is not None:
            problems.append(problem)
    return problems


def _resolved(root: Path, key: str, value: str) -> Path | str:
    """The path setting `key` inside the base `root`, or why it is not there."""
    shown = f"[tool.flopkb] {key} = {value!r}"
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute() or PureWindowsPath(value).drive:
        return f"{shown} is absolute: give a path inside the base, e.g. build/x"
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        return f"{shown} leaves the base: give a path inside it, without '..'"
    try:
        path = (root / value).resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13)
        return f"{shown} leads into a symlink loop: remove the looping link, or choose another path inside the base"
    if not path.is_relative_to(root):
        return f"{shown} leads out of the base (through a symlink) to {path}"
    return path


def _overwrites(root: Path, key: str, value: str, path: Path, kept: dict[str, Path]) -> str | None:
    """Why the written folder `path` (setting `key` = `value`) would replace what an author keeps, if it would."""
    shown = f"[tool.flopkb] {key} = {value!r}"
    if path == root:
        return f"{shown} is the base itself: choose a folder of its own, e.g. build/x"
    for folder in kept.values():
        if folder == root:  # records = "." or schema = ".": the base's own check above covers it
            continue
        if path == folder or path.is_relative_to(folder) or folder.is_relative_to(path):
            kept_folder = folder.relative_to(root).as_posix()
            return f"{shown} would overwrite {kept_folder}/: choose a folder of its own, e.g. build/x"
    return None


def _hint(word: str, choices: tuple[str, ...] | list[str]) -> str:
    hint = did_you_mean(word, choices)
    return f" ({hint})" if hint else ""


def _string(table: dict[str, object], key: str, problems: list[str]) -> bool:
    """Whether the setting `key` is a non-empty string (else told in `problems`)."""
    value = table[key]
    if not isinstance(value, str) or not value:
        problems.append(f"[tool.flopkb] {key} must be a non-empty string")
        return False
    return True


def _severities(table: object, problems: list[str]) -> dict[str, str]:
    """The severities of `[tool.flopkb.severity]` that can be used; each other one told in `problems`."""
    if not isinstance(table, dict):
        problems.append('[tool.flopkb.severity] must be a table of code = "error" | "warning" | "off"')
        return {}
    usable = {}
    for code, level in table.items():
        problem = _severity_problem(code, level)
        if problem is None:
            usable[code] = level
        else:
            problems.append(problem)
    return usable


_LEVELS = ("error", "warning", SEVERITY_OFF)


def _severity_problem(code: str, level: object) -> str | None:
    if code not in CODES:
        return f"[tool.flopkb.severity] names no code '{code}'" + _hint(code, list(CODES))
    if code == INTERNAL_ERROR:
        return f"[tool.flopkb.severity] cannot set {code}: it reports a bug in flopkb, not a finding"
    if level not in _LEVELS:
        return f'[tool.flopkb.severity] {code} must be "error", "warning" or "off", not {level!r}' + _hint(
            str(level), _LEVELS
        )
    return None


def _site(table: object, problems: list[str]) -> SiteSettings:
    """The settings of `[tool.flopkb.site]` that can be used; each other one told in `problems`."""
    if not isinstance(table, dict):
        problems.append("[tool.flopkb.site] must be a table")
        return SiteSettings()
    usable = {}
    for key, value in table.items():
        if key not in _SITE_KEYS:
            problems.append(f"[tool.flopkb.site] has no setting '{key}'" + _hint(key, _SITE_KEYS))
        elif not isinstance(value, str):
            problems.append(f"[tool.flopkb.site] {key} must be a string")
        elif key in _SITE_URL_KEYS and not _WEB_URL.fullmatch(value):
            problems.append(
                f"[tool.flopkb.site] {key} must be an http:// or https:// URL, without quotes, spaces, < or >"
                f" (percent-encode them), not {value!r}"
            )
        else:
            usable[key] = value
    return SiteSettings(**usable)


# Every page carries these, in attributes and in scripts: only an http(s) URL of URL characters.
_SITE_URL_KEYS = ("url", "repo_url")
_WEB_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9._~!$&()*+,;=:@%/?#\[\]-]*)?", re.IGNORECASE)

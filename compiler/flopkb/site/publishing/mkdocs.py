"""The mkdocs end of the pipeline: configuration, assets, build.

The renderer writes plain markdown (plus chart SVGs and graph JSON) into a
docs folder; this module turns that folder into the static site:

    from flopkb.site.publishing.mkdocs import build_site
    result = build_site("build/docs", "build/site")

The mkdocs configuration is produced by a Python function, `mkdocs_config()`,
not kept as a hand-written `mkdocs.yml`: docs_dir, site_dir and the theme's
custom_dir are absolute paths that only the caller knows, the nav is decided
by the renderer, and a dict is easy to test. `build_site()` writes the dict out
as `mkdocs.yml` beside the site (default `build/mkdocs.yml`) before building,
so `mkdocs serve -f build/mkdocs.yml` works for anyone poking at the theme.

Presentation lives in the repository's `site/` folder: `site/assets/` (our
script and stylesheet, and the vendored KaTeX and Cytoscape) is copied into
`<docs>/assets/` by `install_assets()`; `site/overrides/` is Material's
custom_dir.

Choices, and why:

- `use_directory_urls: false`: a record `records/flops/x.md` becomes
  `records/flops/x.html`. Links then work from any static host and from the
  file system (no reliance on a server mapping `x/` to `x/index.html`), a
  record's URL is its id plus `.html`, and 10,000 records are 10,000 files,
  not 10,000 folders. (Search still needs http: pagefind fetches its
  index.)
- Records stay out of the nav: Material renders the whole nav into every
  page, so a nav of N records makes the build O(N^2). The nav holds the home
  page and the index pages only; `validation.nav.omitted_files: ignore` keeps
  mkdocs from logging every record as "not included in the nav".
- `theme.font: false` (and an emptied `fonts` block in `site/overrides/`):
  no Google Fonts. Material's `offline` plugin is NOT used: it adds a script
  from unpkg.com as a polyfill, i.e. an outside request.
- Determinism: mkdocs reads SOURCE_DATE_EPOCH for the sitemap's lastmod and
  the gzip header of sitemap.xml.gz; `build_site()` sets it for the length of
  the build (argument, else the environment, else 0), so two builds of the
  same docs are byte-identical.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import yaml
from markupsafe import Markup

from flopkb.atomic import write_atomically
from flopkb.site.publishing.notfound import relative_404
from flopkb.site.publishing.own_files import publishable_files
from flopkb.site.publishing.search import index_site
from flopkb.site.sandbox import raised_in_template, sandboxed, template_failure
from flopkb.site.sanitize import escape

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig

    from flopkb.site.incremental.kept import ChangedOnly, KeptFiles
    from flopkb.site.incremental.partial import Reuse

__all__ = [
    "DEFAULT_NAV",
    "EXTRA_CSS",
    "EXTRA_JAVASCRIPT",
    "SITE_ROOT",
    "BuildResult",
    "build_site",
    "install_assets",
    "mkdocs_config",
    "write_config",
]

#: The repository's `site/` folder (overrides, assets). Pass `site_root=` to
#: use another one, e.g. when flopkb is installed without its repository.
SITE_ROOT = Path(__file__).resolve().parents[4] / "site"

#: Home and index pages only; never records (see the module doc).
DEFAULT_NAV: list[dict[str, Any]] = [
    {"Home": "index.md"},
    {
        "Kinds": [
            {"Flop classes": "kinds/flop.md"},
            {"Facts": "kinds/fact.md"},
            {"Engines": "kinds/engine.md"},
            {"Accelerators": "kinds/accelerator.md"},
            {"Sources": "kinds/source.md"},
        ]
    },
    {"Compare accelerators": "accelerators/compare.md"},
    {"Link graph": "graph.md"},
    {"Evidence": "evidence.md"},
    {"Diagnostic codes": "codes.md"},
]

#: Relative to docs_dir, in load order. KaTeX and Cytoscape come before
#: flopkb.js, which uses both.
EXTRA_CSS = [
    "assets/vendor/katex/katex.min.css",
    "assets/flopkb.css",
]
EXTRA_JAVASCRIPT = [
    "assets/vendor/katex/katex.min.js",
    "assets/vendor/cytoscape/cytoscape.min.js",
    "assets/flopkb.js",
    "assets/flopkb-previews.js",
]

THEME_FEATURES = [
    "navigation.instant",
    "navigation.tabs",
    "navigation.sections",
    "navigation.top",
    "navigation.indexes",
    "content.code.copy",
    "toc.follow",
]

# No md_in_html: flopkb's pages put no markdown inside HTML (their HTML blocks are finished HTML, prose rendered
# and sanitised by flopkb), and md_in_html re-parses every HTML block of every page with its own parser (about a
# sixth of mkdocs' conversion time); the site is byte for byte the same without it.
MARKDOWN_EXTENSIONS: list[Any] = [
    "tables",
    "attr_list",
    "admonition",
    "def_list",
    {"toc": {"permalink": True}},
    {"pymdownx.arithmatex": {"generic": True}},
    "pymdownx.superfences",
    "pymdownx.details",
    {"pymdownx.highlight": {"anchor_linenums": False, "pygments_lang_class": True}},
]

# Files under site/assets that are documentation for us, not part of the site
# (a README.md would otherwise become a page).
_NOT_ASSETS = {".md", ".py", ".sh"}


def trusted_settings(config: MkDocsConfig) -> None:
    """Mark the escaped settings as HTML, so that the theme's `| e` does not escape them twice.

    Material prints `config.site_name` as it is in most places (`<title>`, the
    header) and escaped in others (the logo's `title`); `mkdocs_config` wrote
    them escaped, which is right where they are printed as they are, and this
    keeps them so where they are escaped again.
    """
    for key in ("site_name", "site_description"):
        if isinstance(config[key], str):
            config[key] = Markup(config[key])


def mkdocs_config(
    *,
    docs_dir: str | Path,
    site_dir: str | Path,
    site_name: str = "flopkb",
    site_description: str = "A knowledge base of LLM-inference performance: what costs FLOPs and bytes, and why.",
    site_url: str | None = None,
    nav: Sequence[Any] = DEFAULT_NAV,
    strict: bool = False,
    site_root: str | Path = SITE_ROOT,
    copyright: str | None = "Compiled by flopkb from the knowledge base's records.",
) -> dict[str, Any]:
    """The mkdocs configuration as a plain dict (the content of mkdocs.yml).

    Paths are made absolute. The dict is deterministic for the same
    arguments; callers may add to it (e.g. `extra`) before `write_config`.
    """
    site_root = Path(site_root).resolve()
    cfg: dict[str, Any] = {
        # The theme prints these into every page as they are: HTML-escaped here (see `trusted_settings`).
        "site_name": escape(site_name),
        "site_description": escape(site_description),
    }
    if site_url:
        cfg["site_url"] = site_url
    cfg.update(
        {
            "docs_dir": str(Path(docs_dir).resolve()),
            "site_dir": str(Path(site_dir).resolve()),
            "use_directory_urls": False,
            "strict": strict,
            "theme": {
                "name": "material",
                "custom_dir": str(site_root / "overrides"),
                "language": "en",
                "font": False,
                "icon": {"logo": "material/chip"},
                "features": list(THEME_FEATURES),
                "palette": [
                    {
                        "media": "(prefers-color-scheme: light)",
                        "scheme": "default",
                        "primary": "indigo",
                        "accent": "deep orange",
                        "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"},
                    },
                    {
                        "media": "(prefers-color-scheme: dark)",
                        "scheme": "slate",
                        "primary": "indigo",
                        "accent": "deep orange",
                        "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"},
                    },
                ],
            },
            # No Material search (it sends every reader the whole index): pagefind's, see flopkb.site.publishing.search.
            "plugins": [],
            "markdown_extensions": [dict(e) if isinstance(e, dict) else e for e in MARKDOWN_EXTENSIONS],
            "extra_css": list(EXTRA_CSS),
            "extra_javascript": list(EXTRA_JAVASCRIPT),
            # The site URL's path, which sitemap.xml's URLs start with (site/assets/flopkb-instant.js reads it).
            "extra": {"generator": False, "site_path": site_path(site_url)},
            "nav": list(nav),
            "validation": {
                "nav": {"omitted_files": "ignore", "not_found": "warn", "absolute_links": "info"},
                "links": {
                    "not_found": "warn",
                    "anchors": "warn",
                    "absolute_links": "info",
                    "unrecognized_links": "info",
                },
            },
        }
    )
    if copyright:
        cfg["copyright"] = copyright
    return cfg


def site_path(site_url: str | None) -> str:
    """The path of the site's root on its host, ending in `/` ("/" without a site URL: mkdocs' sitemap then holds
    root-absolute paths)."""
    path = urlsplit(site_url).path if site_url else ""
    return path if path.endswith("/") else path + "/"


def _same_file(a: Path, b: Path) -> bool:
    return b.is_file() and a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def install_assets(docs_dir: str | Path, site_root: str | Path = SITE_ROOT) -> list[str]:
    """Copy `site/assets/**` into `<docs_dir>/assets/**`; return the relative paths.

    Files that are already there with the same bytes are left alone (their
    mtime too, so `flopkb serve` does not see a change). README.md and
    scripts are skipped, and so is every symlink out of `site_root`
    (`flopkb.site.publishing.own_files`).
    """
    src_root = Path(site_root) / "assets"
    dst_root = Path(docs_dir) / "assets"
    done: list[str] = []
    for src in publishable_files(src_root, Path(site_root)):
        if src.suffix in _NOT_ASSETS or src.name.startswith("."):
            continue
        rel = src.relative_to(src_root)
        dst = dst_root / rel
        if not _same_file(src, dst):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
        done.append(f"assets/{rel.as_posix()}")
    return done


def write_config(config: dict[str, Any], path: str | Path) -> Path:
    """Write the config dict as YAML (deterministic: keys in dict order), unless `path` holds it already. A build
    refuses a symlink there first (`publish.site_paths`); a write never follows one anyway (`write_atomically`)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = "# Generated by flopkb.site.publishing.mkdocs.mkdocs_config(); do not edit.\n" + yaml.safe_dump(
        config, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
    )
    data = text.encode()
    if not (p.is_file() and p.read_bytes() == data):
        write_atomically(p, data)
    return p


_TEMPLATE_CACHE: list[Path] = []


def sandbox_theme(template_cache: Path | None) -> None:
    """Render mkdocs' theme (Material, and a base's `site/overrides/`) in flopkb's jinja2 sandbox
    (`flopkb.site.sandbox`), and keep its compiled templates in `template_cache` when given, from one build (and
    process) to the next.

    mkdocs makes a new jinja2 environment, and compiles Material's templates
    again, on every build: most of a small rebuild. Its environment gets a
    bytecode cache (keyed by template name and source checksum, so edits
    recompile), whose files are sealed with the user's key
    (`flopkb.site.publishing.template_cache`). The folder is the one the latest build
    asked for: None turns the cache off until a build gives one again (`serve --no-cache`).
    """
    import jinja2
    import mkdocs.theme

    from flopkb.site.publishing.template_cache import SealedBytecodeCache

    _TEMPLATE_CACHE[:] = [template_cache] if template_cache is not None else []
    original = mkdocs.theme.Theme.get_env
    if getattr(original, "_flopkb_sandboxed", False):
        return
    caches: dict[Path, jinja2.BytecodeCache] = {}

    def get_env(self: Any) -> Any:
        env = sandboxed(original(self))
        if _TEMPLATE_CACHE:
            where = _TEMPLATE_CACHE[0]
            env.bytecode_cache = caches.get(where) or caches.setdefault(where, SealedBytecodeCache(where))
        return env

    get_env._flopkb_sandboxed = True  # type: ignore[attr-defined]
    mkdocs.theme.Theme.get_env = get_env  # type: ignore[method-assign]


@contextlib.contextmanager
def _source_date_epoch(epoch: int | None) -> Iterator[int]:
    """Set SOURCE_DATE_EPOCH for the block (process-wide; restored after)."""
    old = os.environ.get("SOURCE_DATE_EPOCH")
    value = epoch if epoch is not None else int(old) if old else 0
    os.environ["SOURCE_DATE_EPOCH"] = str(value)
    try:
        yield value
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not message.startswith(
            _DIRTY_WARNING
        ):  # a partial build is dirty on purpose (flopkb.site.incremental.partial)
            self.messages.append(message)


_DIRTY_WARNING = "A 'dirty' build is being performed"


@dataclass(frozen=True)
class BuildResult:
    site_dir: Path
    config_file: Path
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    pages: int = 0
    """How many pages mkdocs converted and rendered (the others' HTML was kept)."""
    base: str = ""
    """What every page's HTML depends on besides its markdown (`mkdocs_base`)."""
    prerendered: int = 0
    """How many of the pages built were written without python-markdown (`flopkb.site.incremental.prerendered`)."""


def mkdocs_base(config: dict[str, Any], epoch: int) -> str:
    """The key of what every page's HTML shares: the configuration but its folders, the overrides, versions, date."""
    import material
    import mkdocs

    shared = {key: value for key, value in config.items() if key not in ("docs_dir", "site_dir")}
    key = hashlib.blake2b(digest_size=16)
    key.update(repr((shared, epoch, mkdocs.__version__, getattr(material, "__version__", ""))).encode())
    overrides = Path(config["theme"]["custom_dir"])
    for path in sorted(p for p in overrides.rglob("*") if p.is_file()):
        key.update(str(path.relative_to(overrides)).encode() + b"\0")
        key.update(path.read_bytes())
    return key.hexdigest()


def build_site(
    docs_dir: str | Path,
    site_dir: str | Path,
    *,
    config_file: str | Path | None = None,
    source_date_epoch: int | None = None,
    install: bool = True,
    reuse: Reuse | None = None,
    template_cache: Path | None = None,
    search: bool = True,
    prerendered: bool = True,
    kept: KeptFiles | ChangedOnly | None = None,
    **config_kwargs: Any,
) -> BuildResult:
    """Install assets, write mkdocs.yml, build the site with mkdocs, and index it for search.

    `config_file` defaults to `<parent of site_dir>/mkdocs.yml`. Other keyword
    arguments go to `mkdocs_config()` (site_name, nav, strict, site_url, ...).
    mkdocs' warnings (broken links, missing nav pages) are returned; with
    strict=True mkdocs raises `mkdocs.exceptions.Abort` on any of them.
    mkdocs empties site_dir first, so files of removed records do not linger.

    With `reuse` (an empty site_dir, and a previous site built under the same `mkdocs_base`), only
    the changed pages are built; the rest is linked from the previous site (`flopkb.site.incremental.partial`).
    With `template_cache`, the theme's templates are compiled once into that folder (`sandbox_theme`).
    Without `search`, the site is not indexed (`flopkb serve` indexes it after the swap, in the background).
    With `prerendered` (the default), pages in flopkb's own form skip python-markdown
    (`flopkb.site.incremental.prerendered`: the same HTML); without, mkdocs converts every page, as
    `mkdocs build -f` on the written config does.
    With `kept` (held by the caller from one build to the next), mkdocs' gathered files are the previous build's
    updated with `reuse`'s changes when they are the changes since then (`flopkb.site.incremental.kept`); with a
    `ChangedOnly`, they are `reuse`'s changed files and the nav's pages alone.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from flopkb.site.incremental.partial import PartialBuild
    from flopkb.site.incremental.prerendered import Prerendered

    start = time.perf_counter()
    sandbox_theme(template_cache)
    docs = Path(docs_dir).resolve()
    site = Path(site_dir).resolve()
    if install:
        install_assets(docs, config_kwargs.get("site_root", SITE_ROOT))
    cfg = mkdocs_config(docs_dir=docs, site_dir=site, **config_kwargs)
    cfg_path = Path(config_file) if config_file else site.parent / "mkdocs.yml"
    write_config(cfg, cfg_path)
    handler = _Collect()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    partial = PartialBuild(reuse)
    fast = Prerendered()
    try:
        with _source_date_epoch(source_date_epoch) as epoch:
            base = mkdocs_base(cfg, epoch)
            config = load_config(config_file=str(cfg_path))
            trusted_settings(config)
            config.plugins["flopkb/partial"] = partial
            if prerendered:
                config.plugins["flopkb/prerendered"] = fast
            with kept.gathering(base, reuse) if kept is not None else contextlib.nullcontext():
                try:
                    build(config, dirty=reuse is not None)
                except Exception as error:
                    if not raised_in_template(error):
                        raise
                    raise template_failure(error, "a template of the theme") from error
            partial.link_previous(site)
        if not cfg.get("site_url"):
            relative_404(site)
        if search:
            index_site(site)
    finally:
        logger.removeHandler(handler)
    seconds = time.perf_counter() - start
    return BuildResult(site, cfg_path.resolve(), handler.messages, seconds, partial.built, base, fast.pages)

"""`flopkb build`: check the base, refuse on errors, render, build with mkdocs beside the old site, swap it in.

    outcome = build(config)            # config from flopkb.config.load_config
    if outcome.refused: ...            # outcome.kb.diagnostics says why

Guarantees:

- **Refuses** to write a site from a base with errors (or, with `strict`,
  warnings): the old site, if any, stays as it was.
- **Atomic**: the pages are rendered and the site built in a fresh folder
  beside the site folder (`build/.site-build-PID-XXXX/`); only a complete
  build is swapped in. On Linux the new folder and the old site are exchanged
  in one `renameat2(RENAME_EXCHANGE)`, so `build/site` is a real folder at
  every moment (readers, `serve` and deploy steps never see it missing, nor a
  symlink); elsewhere (or on a file system without the exchange) the old site
  is renamed away and the new one renamed in, two renames apart. A failed build
  leaves the old site untouched and removes its work folder; the work folders
  of builds that were killed (their process is gone) are removed by the next
  build. `flopkb serve`'s rebuilds are the exception (`update=`): they move
  only the changed pages into the site, one rename each, under a lock that
  its server takes to read a page, so its readers never get a half rebuild
  either, and a rebuild of one page does not relink 10,000.
- **Failures to write** (a full disk, a folder without permission), in
  rendering, in mkdocs or in the swap, are a `BuildError` naming the path
  (exit status 2), never a traceback; so is a template that fails, or that
  the sandbox refuses (`flopkb.site.sandbox`), at its file and line.
- **Deterministic**: the same records give the same bytes. Output is sorted
  and carries no clock time; mkdocs' only dates (the sitemap's) come from
  `SOURCE_DATE_EPOCH`: the environment's if set, else the time of the last
  git commit that touched the base's records, schema or site folder, else 0.
- **Never destroys what it did not write**: the site folder (and the kept
  docs folder beside it) is replaced only when it is empty, new, or holds the
  marker file (`.flopkb-site`) that a build writes into it; the settings that
  name it are checked (`flopkb.config.check_paths`: inside the base, never on
  `.git`, `docs`, `records`, ...). A symlink at one of the files written
  beside it (`build/site-mkdocs.yml`, `build/site-state.json`) refuses the
  build: it could lead anywhere. The base's `site/` is published without
  following a symlink out of it (`flopkb.site.publishing.own_files`): such a link in
  `site/assets/` is left out with a warning, one in `site/overrides/` or
  `site/templates/` (which a template could include) refuses the build.
- The rendered markdown is kept beside the site (`build/site-docs/`, with
  `build/site-mkdocs.yml`), so `mkdocs build -f build/site-mkdocs.yml` (or
  `mkdocs serve`) works on exactly what flopkb built.
"""

from __future__ import annotations

import errno
import gc
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flopkb.config import ConfigError, check_paths
from flopkb.formulas.results import FormulaResults, LaterResults
from flopkb.links.graph import LinkGraph
from flopkb.load.sources import GitError, git
from flopkb.pipeline.compile import (
    EntryLoader,
    KnowledgeBase,
    compile_knowledge_base,
    load_entries,
)
from flopkb.report.codes import Severity
from flopkb.site.incremental.partial import Reuse, output_of
from flopkb.site.incremental.state import BuildState, folders_of, link_files, move_files, walk_files
from flopkb.site.pages.common import file_digest
from flopkb.site.publishing.first import FirstPages
from flopkb.site.publishing.mkdocs import (
    SITE_ROOT,
    build_site,
    install_assets,
    mkdocs_base,
    mkdocs_config,
    write_config,
)
from flopkb.site.publishing.own_files import links_out
from flopkb.site.publishing.search import BUNDLE
from flopkb.site.publishing.template_cache import template_folder
from flopkb.site.sandbox import TemplateFailed

if TYPE_CHECKING:
    from flopkb.config import Config
    from flopkb.site.incremental.held import Held


class BuildError(Exception):
    """The site cannot be built where the configuration says (a usage problem, exit status 2)."""


@dataclass(slots=True)
class BuildOutcome:
    kb: KnowledgeBase
    refused: bool
    site_dir: Path | None = None
    pages: int = 0
    warnings: list[str] = field(default_factory=list)
    """What mkdocs warned about (none is expected)."""
    left_out: list[str] = field(default_factory=list)
    """The symlinks of the base's `site/assets/` that lead out of `site/`, not published
    (`flopkb.site.publishing.own_files`)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per phase: compile, render, mkdocs, swap."""
    rendered: int = 0
    """Record pages rendered (the others were kept from the previous build: `flopkb.site.incremental.state`)."""
    built: int = 0
    """Pages mkdocs converted and rendered (the others' HTML was kept)."""
    prerendered: int = 0
    """Of those, the pages written without python-markdown (`flopkb.site.incremental.prerendered`)."""


def site_root_of(config: Config) -> Path:
    """The presentation folder: the base's own `site/` when it has assets and overrides, else flopkb's."""
    own = config.root / "site"
    return own if (own / "assets").is_dir() and (own / "overrides").is_dir() else SITE_ROOT


def refuse_links_out(config: Config, site_root: Path) -> None:
    """`BuildError` for a symlink in the base's `site/templates/` (or `site/overrides/`, when used) that leads out of
    `site/`, or to a folder: a template would print (`{% include %}`), or mkdocs publish, what it points at."""
    own = config.root / "site"
    for folder in [own / "templates"] + ([site_root / "overrides"] if site_root != SITE_ROOT else []):
        linked = [path for path in (own, folder) if path.is_symlink()]
        refused = [f"{path.relative_to(config.root).as_posix()} -> {os.readlink(path)}" for path in linked]
        if refused := refused or links_out(folder, own):
            raise BuildError(
                f"{refused[0]}: a symlink in site/{folder.name}/ that leads out of site/ (or to a folder); the"
                " published site would hold what it points at, so flopkb does not build: replace it by the file itself"
            )


def source_date_epoch(config: Config) -> int:
    """$SOURCE_DATE_EPOCH if set; else the last git commit touching records/, schema/ or site/; else 0."""
    given = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if given.isdigit():
        return int(given)
    folders = [config.records, config.schema, "site"]
    try:
        text = git(config.root, "log", "-1", "--format=%ct", "--", *folders).strip()
    except GitError:
        return 0
    return int(text) if text.isdigit() else 0


MARKER = ".flopkb-site"
"""The file a build writes into the site folder and the kept docs folder: a folder without it is not flopkb's."""
_MARKER_TEXT = b"Written by flopkb build, which replaces this folder on every build.\n"


def site_paths(config: Config) -> tuple[Path, Path, Path]:
    """(site folder, kept docs folder, kept mkdocs.yml), refusing a site folder that is not flopkb's to replace."""
    try:
        check_paths(config)
    except ConfigError as error:
        raise BuildError(str(error)) from error
    site = (config.root.resolve() / config.site_dir).resolve()
    docs = site.with_name(site.name + "-docs")
    for folder in (site, docs):
        if folder.exists() and not folder.is_dir():
            raise BuildError(f"site_dir {config.site_dir!r}: {folder} exists and is not a folder")
        if folder.is_dir() and not (folder / MARKER).is_file() and any(folder.iterdir()):
            raise BuildError(
                f"site_dir {config.site_dir!r}: {folder} holds files that flopkb did not write (it has no {MARKER}),"
                " and a build would replace them: choose another site_dir, or move that folder away"
            )
    kept_config = site.with_name(site.name + "-mkdocs.yml")
    for file in (kept_config, state_path(site)):
        if file.is_symlink() or (file.exists() and not file.is_file()):
            raise BuildError(
                f"site_dir {config.site_dir!r}: {file} is a symlink or not a file, and every build writes that file"
                " (a symlink there could lead anywhere): remove it"
            )
    return site, docs, kept_config


def mark_folder(folder: Path) -> None:
    """Mark `folder` as a build's own, to be replaced by the next (see `site_paths`)."""
    marker = folder / MARKER
    if not marker.is_file():
        marker.write_bytes(_MARKER_TEXT)


def state_path(site: Path) -> Path:
    """Where a build leaves its state for the next one (`flopkb.site.incremental.state`)."""
    return site.with_name(site.name + "-state.json")


def swap_in(new: Path, target: Path) -> Path | None:
    """Replace `target` by `new`; return where the old one now is (None when there was none), to be removed.

    Exchanged in one step where the system can (`_exchange`), so that `target` is there at every moment;
    else the old one is renamed away and the new one renamed in.
    """
    old = target.with_name(f".{target.name}-old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    if target.is_dir() and not target.is_symlink() and _exchange(new, target):
        os.rename(new, old)  # `new` names the old site now: out of the work folder, beside the others
        return old
    if not (target.exists() or target.is_symlink()):
        os.rename(new, target)
        return None
    os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(old, target)
        raise
    return old


def remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Exchange two folders atomically (Linux's renameat2 with RENAME_EXCHANGE); False where that cannot be done."""
    if sys.platform != "linux":
        return False
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library older than glibc 2.28, or none to load
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # an old kernel, or a file system without it
        return False
    raise OSError(error, os.strerror(error), str(b))


def remove_leftovers(site: Path) -> None:
    """Remove the work folders of builds whose process is gone (killed while building or swapping)."""
    for prefix in (f".{site.name}-build-", f".{site.name}-old-", f".{site.name}-docs-old-"):
        for folder in site.parent.glob(f"{prefix}*"):
            pid = folder.name[len(prefix) :].split("-", 1)[0]
            if not (pid.isdigit() and _alive(int(pid))):
                shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OSError:
        return False
    return True


def has_errors(kb: KnowledgeBase, strict: bool = False) -> bool:
    return any(d.severity == Severity.ERROR or strict for d in kb.diagnostics)


def build(
    config: Config,
    *,
    load: EntryLoader = load_entries,
    strict: bool = False,
    epoch: int | None = None,
    kb: KnowledgeBase | None = None,
    discard: Callable[[Path], None] = remove_folder,
    search: bool = True,
    update: AbstractContextManager[Any] | None = None,
    graph: LinkGraph | None = None,
    formulas: FormulaResults | None = None,
    keep_frozen: bool = False,
    announce: Callable[[], None] | None = None,
    held: Held | None = None,
    cached_templates: bool = True,
) -> BuildOutcome:
    """Compile the base (unless `kb` is given) and, when it has no errors, build and swap in its site.

    With `cached_templates` (unless the run keeps no cache: `--no-cache`, CI), the theme's templates are compiled once
    and kept in the user's cache folder for the next build.

    The previous site and docs folder, once swapped out, go to `discard` (by default: deleted now).
    Without `search`, the site is not indexed for search: it takes the previous site's index, which
    the caller brings up to date after the swap (`flopkb serve`, `flopkb.site.publishing.serve.BackgroundIndex`).
    With `update` (a lock that the caller's readers take too), a build with a usable previous state changes the
    site and docs folders in place instead: only the changed files are moved in, one by one, holding the lock
    (`flopkb serve`, which serves every page under that lock; see the module). With the previous build's link `graph`,
    the new graph is that one updated (`LinkGraph.take_from`); with its `formulas`, the results whose records and
    dependencies are unchanged are taken over (`LaterResults.take_from`). With `keep_frozen`, what was compiled stays
    frozen out of the cyclic collector's reach after the build (`flopkb serve`, which releases it at its next build).
    `announce` is called once the new pages are in the site, before the build's own bookkeeping (its configuration
    and state written, the old site discarded): `flopkb serve` reloads its readers' pages then. With `announce`,
    `update` and a `held` state, the saved records' pages are moved in first, and announced
    (`flopkb.site.publishing.first`). With `held`, the
    build takes the previous build's state from there when it can, and leaves its own there (with mkdocs' gathered
    files) instead of on disk when it changed the site in place (`flopkb.site.incremental.held`)."""
    from flopkb.pipeline.stages import CHECK_STAGES
    from flopkb.site.render import render_docs

    site, kept_docs, kept_config = site_paths(config)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    if kb is None:
        kb = compile_knowledge_base(config, CHECK_STAGES, load)
    timings["compile"] = time.perf_counter() - start
    if has_errors(kb, strict):
        return BuildOutcome(kb, refused=True, timings=timings)
    if graph is not None and kb.graph is not None:
        kb.graph.take_from(graph)
    if formulas is not None and isinstance(kb.formulas, LaterResults):
        kb.formulas.take_from(formulas)
    site_root = site_root_of(config)
    refuse_links_out(config, site_root)
    settings = config.site
    options: dict[str, Any] = {
        "site_name": settings.name,
        "site_description": settings.description,
        "site_url": settings.url,
        "site_root": site_root,
    }
    try:
        site.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(site)
        work = Path(tempfile.mkdtemp(prefix=f".{site.name}-build-{os.getpid()}-", dir=site.parent))
    except OSError as error:
        raise BuildError(_cannot_write(error, site.parent)) from error
    state_file = state_path(site)
    from_memory = held.take(site, kept_docs) if held is not None else None
    previous = from_memory
    if previous is None and kept_docs.is_dir() and site.is_dir():
        previous = BuildState.load(state_file, folders_of(site, kept_docs))
    # The compiled base stays in memory while the site is rendered, built and its state saved: keep the cyclic
    # collector from scanning it again and again (it holds no garbage).
    gc.freeze()
    try:
        mark = time.perf_counter()
        when = source_date_epoch(config) if epoch is None else epoch
        first = None
        if update is not None and announce is not None and from_memory is not None and held is not None:
            state_file.unlink(missing_ok=True)  # the first pages change the site
            first = FirstPages(
                work,
                site,
                held.nav,
                from_memory.mkdocs_base,
                when,
                update,
                announce,
                _template_cache(config) if cached_templates else None,
                options,
            )
        rendered = render_docs(
            kb,
            work / "docs",
            site_root=site_root,
            previous=previous,
            previous_docs=kept_docs if previous else None,
            link_kept=update is None,
            first=first,
        )
        docs = rendered.digests
        assets = install_assets(work / "docs", site_root)
        docs.update((rel, file_digest((work / "docs" / rel).read_bytes())) for rel in assets)
        timings["render"] = time.perf_counter() - mark
        mark = time.perf_counter()
        cfg = mkdocs_config(docs_dir=work / "docs", site_dir=work / "site", nav=rendered.nav, **options)
        reuse = None
        if previous is not None and previous.mkdocs_base == mkdocs_base(cfg, when):
            changed = frozenset(rel for rel, digest in docs.items() if previous.docs.get(rel) != digest)
            removed = frozenset(previous.docs.keys() - docs.keys())
            reuse = Reuse(site, changed, removed, link=update is None, since_kept=from_memory is not None)
        in_place = update is not None and reuse is not None and not search
        docs_dir = kept_docs if in_place else work / "docs"
        if in_place:
            assert reuse is not None
            state_file.unlink(missing_ok=True)
            for rel in reuse.removed:
                (kept_docs / rel).unlink(missing_ok=True)
            move_files(work / "docs", kept_docs, reuse.changed)
        elif update is not None and previous is not None:
            link_files(kept_docs, work / "docs", docs.keys() - set(rendered.written) - set(assets))
        mark_folder(docs_dir)  # before mkdocs gathers the folder: its gathering is of the folder as it stays
        result = build_site(
            docs_dir,
            work / "site",
            config_file=work / "mkdocs.yml",
            source_date_epoch=when,
            install=False,
            reuse=reuse,
            template_cache=_template_cache(config) if cached_templates else None,
            nav=rendered.nav,
            search=search,
            kept=held.files if held is not None else None,
            **options,
        )
        timings["mkdocs"] = time.perf_counter() - mark
        mark = time.perf_counter()
        if (work / "site").is_dir():
            mark_folder(work / "site")
        state_file.unlink(missing_ok=True)
        olds: list[Path | None] = []
        if in_place:
            assert update is not None and reuse is not None
            with update:
                for rel in reuse.removed:
                    (site / output_of(rel)).unlink(missing_ok=True)
                move_files(work / "site", site, walk_files(work / "site"))
        else:
            if not search and (site / BUNDLE).is_dir():
                # Moved, not linked (one rename, not one link per page): the old site is discarded after the swap.
                os.rename(site / BUNDLE, work / "site" / BUNDLE)
            olds = [swap_in(work / "site", site), swap_in(work / "docs", kept_docs)]
        if announce is not None:
            announce()
        write_config(mkdocs_config(docs_dir=kept_docs, site_dir=site, nav=rendered.nav, **options), kept_config)
        keys = rendered.keys
        state = BuildState(
            rendered.base,
            result.base,
            rendered.records,
            docs,
            rendered.pages,
            keys.prints,
            keys.reads,
            keys.faces,
            keys.beyond,
        )
        if held is None or not in_place:
            state.save(state_file, folders_of(site, kept_docs))
        if held is not None:
            held.hold(state, site, kept_docs, rendered.nav)
        for old in olds:
            if old is not None:
                discard(old)
        timings["swap"] = time.perf_counter() - mark
    except OSError as error:
        raise BuildError(_cannot_write(error, work)) from error
    except TemplateFailed as error:
        raise BuildError(str(error)) from error
    finally:
        if not keep_frozen:
            gc.unfreeze()
        shutil.rmtree(work, ignore_errors=True)
    pages = sum(1 for rel in docs if rel.endswith(".md"))
    return BuildOutcome(
        kb,
        refused=False,
        site_dir=site,
        pages=pages,
        warnings=list(result.warnings),
        left_out=links_out(site_root / "assets", site_root) if site_root != SITE_ROOT else [],
        timings=timings,
        rendered=len(rendered.rendered),
        built=result.pages,
        prerendered=result.prerendered,
    )


def _template_cache(config: Config) -> Path | None:
    return template_folder(config.cache_path)


def _cannot_write(error: OSError, where: Path) -> str:
    """One line for a failure to write the site: what failed, and on which path."""
    path = error.filename or where
    return f"cannot write the site: {path}: {error.strerror or error}"

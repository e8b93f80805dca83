"""Time the first check's cache writer in process: what `flopkb check` of a fresh clone hands to its detached process.

    python benchmarks/bench_writer.py [--records 10000] [--root DIR] [--repeat 5] [--profile]

Each repeat loads the base as the first check of a fresh clone does (an empty
cache: `FileCache(answer_first=True)`, parsed serially, the check's stages
run), then times what the detached writer does (`FileCache.save` with the
verdict's store, `flopkb.pipeline.verdict`), here in this process: the
writer's copy-on-write faults in its forked process are not counted
(`bench_check.py` counts them). Prints the CPU of the check and of the save,
each repeat, and the save's best and median; with `--profile`, the functions
of the last save by their own time. Run it against another checkout of
flopkb with that checkout's `compiler/` first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, help="reuse or create the generated base here")
    parser.add_argument("--profile", action="store_true", help="profile the last save")
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="flopkb-bench-")) / "kb"
    if not (root / "records").is_dir():
        generate(root, args.records)
        time.sleep(2.1)  # files changed within two seconds of a read are read again by the writer (racy stats)
    home = tempfile.mkdtemp(prefix="flopkb-bench-cache-")
    os.environ["XDG_CACHE_HOME"] = home  # before flopkb is imported: an empty user cache folder

    import flopkb.pipeline.compile
    from flopkb.config import load_config
    from flopkb.pipeline.cache import FileCache
    from flopkb.pipeline.compile import compile_knowledge_base
    from flopkb.pipeline.stages import CHECK_STAGES
    from flopkb.pipeline.verdict import store

    flopkb.pipeline.compile.PARALLEL_FROM_FILES = sys.maxsize  # the check's CPU, workers aside
    config = load_config(root)
    saves: list[float] = []
    profile = cProfile.Profile() if args.profile else None
    try:
        for repeat in range(args.repeat):
            cache = FileCache(config, answer_first=True)
            assert cache.folder is not None, "no cache folder"
            shutil.rmtree(cache.folder, ignore_errors=True)
            began, start = time.time_ns(), time.process_time()
            kb = compile_knowledge_base(config, CHECK_STAGES, cache)
            checked = time.process_time() - start
            then = functools.partial(store, config, cache, kb.diagnostics, began)
            last = profile is not None and repeat == args.repeat - 1
            start = time.process_time()
            if last:
                profile.enable()
            cache.save(then=then)
            if last:
                profile.disable()
            saves.append(time.process_time() - start)
            print(f"check {checked:.3f} s CPU, then the writer {saves[-1]:.3f} s CPU", flush=True)
            del kb, cache
            gc.unfreeze()  # what the check loaded, frozen out of the collector's view, let go before the next repeat
            gc.collect()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(f"records: {args.records}; the writer, best {min(saves):.3f} s CPU, median {statistics.median(saves):.3f} s")
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()

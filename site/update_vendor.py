#!/usr/bin/env python3
"""Refresh the vendored browser libraries in site/assets/vendor/.

    python site/update_vendor.py                 # the pinned versions below
    python site/update_vendor.py --katex 0.19.1 --cytoscape 3.35.0

Fetches each package with `npm pack NAME@VERSION` (the npm registry, through
npm itself) into a temporary folder, copies the few dist files the site needs
plus the package's LICENSE, and trims KaTeX's stylesheet to woff2 fonts only
(every browser the site supports reads woff2; the .woff/.ttf copies would only
add 800 KB). Nothing is fetched at site build time or by a reader's browser.

After an update: bump the versions in this file and in vendor/README.md, run
the site tests (`pytest tests/test_site_infra.py`), commit.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

KATEX_VERSION = "0.19.1"
CYTOSCAPE_VERSION = "3.35.0"

VENDOR = Path(__file__).resolve().parent / "assets" / "vendor"

# url(fonts/X.woff2) format("woff2"),url(fonts/X.woff) format("woff"),url(fonts/X.ttf) format("truetype")
_LEGACY_FONTS = re.compile(r',url\(fonts/[^)]+\.woff\) format\("woff"\),url\(fonts/[^)]+\.ttf\) format\("truetype"\)')


def npm_pack(spec: str, workdir: Path) -> Path:
    """`npm pack` one package and unpack it; return its `package/` folder."""
    out = (
        subprocess.run(["npm", "pack", spec, "--silent"], cwd=workdir, check=True, capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    dest = workdir / spec.replace("/", "_").replace("@", "-")
    with tarfile.open(workdir / out) as tar:
        tar.extractall(dest, filter="data")
    return dest / "package"


def vendor_katex(version: str, workdir: Path) -> None:
    pkg = npm_pack(f"katex@{version}", workdir)
    dest = VENDOR / "katex"
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "fonts").mkdir(parents=True)
    shutil.copy2(pkg / "dist" / "katex.min.js", dest)
    shutil.copy2(pkg / "LICENSE", dest / "LICENSE")
    css = (pkg / "dist" / "katex.min.css").read_text(encoding="utf-8")
    css, n = _LEGACY_FONTS.subn("", css)
    if n == 0:
        raise SystemExit("katex.min.css changed shape: adjust _LEGACY_FONTS in update_vendor.py")
    (dest / "katex.min.css").write_text(css, encoding="utf-8")
    for url in sorted(set(re.findall(r"url\(([^)]+)\)", css))):
        src = pkg / "dist" / url
        if not url.endswith(".woff2") or not src.is_file():
            raise SystemExit(f"unexpected font reference in katex.min.css: {url}")
        shutil.copy2(src, dest / url)


def vendor_cytoscape(version: str, workdir: Path) -> None:
    pkg = npm_pack(f"cytoscape@{version}", workdir)
    dest = VENDOR / "cytoscape"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    shutil.copy2(pkg / "dist" / "cytoscape.min.js", dest)
    shutil.copy2(pkg / "LICENSE", dest / "LICENSE")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--katex", default=KATEX_VERSION)
    ap.add_argument("--cytoscape", default=CYTOSCAPE_VERSION)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vendor_katex(args.katex, Path(tmp))
        vendor_cytoscape(args.cytoscape, Path(tmp))
    print(f"vendored katex {args.katex}, cytoscape {args.cytoscape} into {VENDOR}")


if __name__ == "__main__":
    main()

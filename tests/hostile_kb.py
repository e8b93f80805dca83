"""A knowledge base whose every text field tries to get markup into the site (for test_render and test_site_browser).

Every record is valid, so the base builds: the attacks are in the text, the
places a reader's browser would run them if the renderer let them through,
and in the site's settings (`pyproject.toml`), which every page carries.
`PAYLOADS` counts the distinct numbered payloads (`alert(n)`); none may run.
"""

from __future__ import annotations

import json
from pathlib import Path

from kbfixture import write_kb

VOCABULARY = """\
categories:
  arithmetic-intensity: {description: "Operations per byte <script>alert(1)</script>."}
  "<img src=x onerror=alert(2)>": {description: "<b onmouseover=alert(3)>hostile term</b>"}
parameters:
  memory_bandwidth: {unit: byte/s, description: "Peak bandwidth <script>alert(4)</script>"}
  peak_bf16_dense: {unit: FLOP/s, description: Dense bf16 peak.}
basis:
  measured: {description: Measured.}
  vendor-spec: {description: From the vendor's sheet.}
  cited: {description: From a secondary source.}
  derived: {description: Derived.}
  unverified: {description: Not yet verified.}
"""

#: The site's settings reach every page: the name and description as text (escaped), the URLs as URLs.
SITE_NAME = '<script>alert(80)</script> Hostile & KB "><img src=x onerror=alert(81)>'
SITE_DESCRIPTION = (
    "</title><script>alert(82)</script> ' onmouseover='alert(83)' [x](javascript:alert(84)) {: onclick=alert(85) }"
)
PYPROJECT = f"""\
[tool.flopkb.site]
name = {json.dumps(SITE_NAME)}
description = {json.dumps(SITE_DESCRIPTION)}
url = "https://example.org/kb/"
repo_url = "https://example.org/repo"
"""

FILES = {
    "pyproject.toml": PYPROJECT,
    "records/flops/hostile.yaml": r"""
        id: flops/hostile
        kind: flop
        title: "<script>alert(10)</script> Hostile [x](javascript:alert(11)) {: onclick=alert(12) } $x$"
        tags: ["<script>alert(13)</script>", "\"><img src=x onerror=alert(14)>"]
        category: "<img src=x onerror=alert(2)>"
        description: |
          Raw tags: <script>alert(15)</script> and <img src=x onerror=alert(16)>.
          A link: [click](javascript:alert(17)) and [again](JaVaScRiPt:alert(18)).
          An autolink <javascript:alert(19)> and a data URL [d](data:text/html,<script>alert(20)</script>).
          A wikilink with a hostile label: [[accelerators/acc|<script>alert(21)</script>]].
          <a href="javascript:alert(22)" onclick="alert(23)">raw anchor</a>
          <iframe src="javascript:alert(24)"></iframe>
          An image ![x](https://example.invalid/x.png) is only a link.
          A good wikilink: [[facts/plain#double]] and [[sources/paper]].
        scales_with:
          - factor: batch_size
            effect: "<svg onload=alert(25)>svg</svg> and **bold**"
        hardware_parameters:
          - parameter: memory_bandwidth
            effect: "<details open ontoggle=alert(26)>x</details>"
            magnitude: "[m](vbscript:alert(27))"
            basis: cited
            values_for: [accelerators/acc]
            sources: ["https://example.org/\"onmouseover=\"alert(28)"]
        affected_by_hardware: [accelerators/acc]
        workarounds:
          - "<form action=javascript:alert(29)><button>go</button></form>"
          - "<style>body{background:url(javascript:alert(30))}</style>"
        formulas:
          - id: hostile-formula
            title: "<script>alert(31)</script> {#x onclick=alert(32)} \\(x\\)"
            expr: "hw.memory_bandwidth * t"
            unit: "byte"
            inputs:
              t: ["1 s", "2 s", "4 s"]
        sources: [sources/paper, "https://example.org/?q=<script>alert(33)</script>"]
        notes: |
          <object data="javascript:alert(34)"></object>
          <math><mtext><table><mglyph><style><img src=x onerror=alert(35)>
          ```html
          <script>alert(36)</script>
          ```
          `<script>alert(37)</script>` in code.
    """,
    "records/facts/plain.yaml": r"""
        id: facts/plain
        kind: fact
        title: "A plain fact about </script><script>alert(40)</script>"
        statement: |
          Links back to [[flops/hostile]] and [[flops/hostile#hostile-formula|the formula]].
        formulas:
          - id: double
            title: Double it
            expr: 2 * x
            inputs:
              x: [1, 2, 3]
            expect:
              - where: {x: 2}
                value: 4
    """,
    "records/accelerators/acc.yaml": r"""
        id: accelerators/acc
        kind: accelerator
        title: "Acc <img src=x onerror=alert(50)>"
        vendor: "<script>alert(51)</script>"
        description: "A device. [[flops/hostile]] <script>alert(52)</script>"
        specs:
          memory_bandwidth:
            value: "2 TB/s"
            basis: vendor-spec
            sources: [sources/paper]
            note: "<img src=x onerror=alert(53)> [n](javascript:alert(54))"
          peak_bf16_dense:
            value: "500 TFLOP/s"
            basis: unverified
            note: "'\"><script>alert(55)</script>"
    """,
    "records/sources/paper.yaml": r"""
        id: sources/paper
        kind: source
        title: "\"><img src=x onerror=alert(60)> A paper"
        url: "https://example.org/paper\"onmouseover=\"alert(61)"
        authors: ["<script>alert(62)</script>", "B. Author"]
        year: 2024
        venue: "<b onmouseover=alert(63)>Venue</b>"
        notes: "Cites [[accelerators/acc]]."
    """,
    "records/engines/eng.yaml": r"""
        id: engines/eng
        kind: engine
        title: "Engine </title><script>alert(70)</script>"
        description: "Uses [[flops/hostile|<img src=x onerror=alert(71)>]]."
        homepage: "https://example.org/<script>alert(72)</script>"
        features: ["<script>alert(73)</script>", "x\" onclick=\"alert(74)"]
        notes: "Mentioned by nobody but [[facts/plain]]."
    """,
}


def write_hostile_kb(root: Path) -> Path:
    return write_kb(root, FILES, vocabulary=VOCABULARY)

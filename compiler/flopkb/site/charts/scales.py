"""Numbers, text and axes of the charts (`flopkb.site.charts.svg`): formatting, escaping, ticks and ranges.

Pure functions: the same arguments give the same string or range, byte for
byte (coordinates have a fixed number of decimals, nothing reads the locale).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


# ---------------------------------------------------------------------------
# Formatting


def _f(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros, never '-0'."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _sig(x: float, digits: int = 3) -> str:
    """`x` to `digits` significant figures, plain notation, no trailing zeros."""
    if x == 0:
        return "0"
    exp = math.floor(math.log10(abs(x)))
    nd = digits - 1 - exp
    s = f"{round(x, nd):.{max(0, nd)}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def format_si(value: float, unit: str = "", digits: int = 3) -> str:
    """989e12, "FLOP/s" -> "989 TFLOP/s"; 3.35e12, "B/s" -> "3.35 TB/s"; 0.5 -> "0.5"."""
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    v = float(_sig(value, digits))  # round first: 999.96e9 is "1 T", not "1000 G"
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{_sig(v / scale, digits)} {prefix}{unit}"
    s = _sig(v, digits)
    return f"{s} {unit}" if unit else s


def _text(s: object) -> str:
    """Escape text for XML content and attributes; drop characters XML forbids."""
    t = _CONTROL.sub("", str(s))
    return (
        t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#39;")
    )


def _safe_href(href: str) -> str:
    """Allow relative URLs and http(s) only; anything else is a ValueError."""
    if _CONTROL.search(href) or any(c.isspace() for c in href):
        raise ValueError(f"unsafe link target in chart: {href!r}")
    scheme = urlsplit(href).scheme.lower()
    if scheme not in ("", "http", "https"):
        raise ValueError(f"unsafe link target in chart: {href!r}")
    return href


def _finite_positive(value: float, what: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what} must be a finite positive number, got {value!r}")
    return v


def _chart_id(*parts: object) -> str:
    """A short id, stable for the same input, so several inlined charts never clash."""
    return "c" + hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:10]


# ---------------------------------------------------------------------------
# Axes


@dataclass(frozen=True, slots=True)
class _Axis:
    lo: float
    hi: float
    log: bool
    start: float  # pixel of `lo`
    end: float  # pixel of `hi`

    def __call__(self, v: float) -> float:
        if self.log:
            a, b, x = math.log10(self.lo), math.log10(self.hi), math.log10(v)
        else:
            a, b, x = self.lo, self.hi, v
        return self.start + (x - a) / (b - a) * (self.end - self.start)


def _decades(lo: float, hi: float) -> tuple[float, float]:
    """Widen [lo, hi] to whole powers of ten, at least one decade apart."""
    a = math.floor(math.log10(lo) + 1e-9)
    b = math.ceil(math.log10(hi) - 1e-9)
    if b <= a:
        b = a + 1
    return 10.0**a, 10.0**b


def _log_span(lo: float, hi: float) -> tuple[float, float]:
    """Widen [lo, hi] to the nearest minor ticks (m x 10^k), so a log axis ends near its data.

    Falls back to whole decades (`_decades`) when the tight range would hold
    fewer than two powers of ten, the labelled ticks.
    """
    a = math.floor(math.log10(lo) + 1e-9)
    b = math.floor(math.log10(hi) - 1e-9)
    low = math.floor(lo / 10.0**a + 1e-9) * 10.0**a
    high = math.ceil(hi / 10.0**b - 1e-9) * 10.0**b
    if math.ceil(math.log10(low) - 1e-9) + 1 > math.floor(math.log10(high) + 1e-9):
        return _decades(lo, hi)
    return low, high


def _log_ticks(lo: float, hi: float) -> tuple[list[float], list[float]]:
    """Powers of ten (labelled) and the m x 10^k in between, within [lo, hi]."""
    a, b = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
    inside = lo * (1 - 1e-9), hi * (1 + 1e-9)
    major = [10.0**k for k in range(a, b + 1) if inside[0] <= 10.0**k <= inside[1]]
    minor = [m * 10.0**k for k in range(a, b) for m in range(2, 10) if inside[0] <= m * 10.0**k <= inside[1]]
    return major, minor


def _nice_step(span: float, target: int = 6) -> float:
    raw = span / target
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag * (1 + 1e-9):
            return m * mag
    return 10 * mag


def _linear_range(lo: float, hi: float) -> tuple[float, float, float]:
    if lo == hi:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    step = _nice_step(hi - lo)
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step, step


def _linear_ticks(lo: float, hi: float, step: float) -> list[float]:
    k0, k1 = round(lo / step), round(hi / step)
    return [k * step for k in range(k0, k1 + 1)]


def _tick_label(v: float, step: float | None = None) -> str:
    """A readable tick label: 0.01, 0.25, 10, 100, 1 k, 2.5 M, 1 T."""
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return format_si(v, digits=4)
    if step is None:
        return _sig(v, 3)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    while decimals < 12 and abs(round(step, decimals) - step) > step * 1e-9:
        decimals += 1
    s = f"{round(v, decimals):.{decimals}f}"
    s = s.rstrip("0").rstrip(".") if "." in s else s
    return "0" if s == "-0" else s


_NEAR_FLAT = 0.2
"""A linear y axis starts at 0 unless the data's spread is less than this fraction of its magnitude."""


def _y_range(ys: Sequence[float]) -> tuple[float, float, float, bool]:
    """(low, high, tick step, starts away from 0) of a linear y axis."""
    lo, hi = min(ys), max(ys)
    magnitude = max(abs(lo), abs(hi))
    if lo * hi > 0 and hi - lo < _NEAR_FLAT * magnitude:
        if lo == hi:
            lo, hi = lo - magnitude * 0.05, hi + magnitude * 0.05
        low, high, step = _linear_range(lo, hi)
        return low, high, step, low * high > 0
    low, high, step = _linear_range(min(0.0, lo), max(0.0, hi))
    return low, high, step, False

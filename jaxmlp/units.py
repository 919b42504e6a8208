"""Numbers in human units, three significant digits, one format each everywhere; missing or NaN is ``-``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

MISSING = "-"


def _missing(value: Any) -> bool:
    try:
        return value is None or math.isnan(float(value))
    except (TypeError, ValueError, OverflowError):
        return True


def _rounded(x: float, digits: int) -> tuple[float, int]:
    """``x`` to ``digits`` significant digits, and the decimals that takes (0 for large numbers)."""
    places = digits - 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, places)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > math.floor(math.log10(abs(x))):  # 0.9996 -> 1.00
        places -= 1
    return rounded, max(places, 0)


def number(value: Any, digits: int = 3) -> str:
    """A plain number to ``digits`` significant digits, thousands separated: ``0.0123``, ``12.3``, ``12,300``."""
    if _missing(value):
        return MISSING
    x = float(value)
    if x == 0 or math.isinf(x):
        return f"{x:g}"
    rounded, decimals = _rounded(x, digits)
    return f"{rounded:,.{decimals}f}"


_DURATIONS = ((1e-6, 1e-9, "ns"), (1e-3, 1e-6, "µs"), (1.0, 1e-3, "ms"), (1000.0, 1.0, "s"))


def duration(seconds: Any) -> str:
    """A time: ``236 µs``, ``4.12 ms``, ``1.07 s``, ``999 s``; from 1000 s on, in minutes (``16.7 min``)."""
    if _missing(seconds):
        return MISSING
    s = float(seconds)
    if s == 0 or math.isinf(s):  # infinite: as `number` shows it, never an error
        return f"{s:g} s"
    for below, scale, unit in _DURATIONS:  # the smallest unit in which it stays under 1000 once rounded
        if abs(_rounded(s / scale, 3)[0]) < 1000 and abs(s) < below:
            return f"{number(s / scale)} {unit}"
    return f"{number(s / 60)} min"


TUTORIAL_SECONDS_FROM = 0.1
"""From this time on `tutorial_seconds` keeps the tutorial's ``{:0.2f} sec`` (its two decimals within 5% there);
below it the time is a `duration`, in the unit it needs."""


def tutorial_seconds(seconds: float) -> str:
    """A time as the tutorial's lines print it, ``2.61 sec``, from `TUTORIAL_SECONDS_FROM` on; a shorter one (an
    accelerator's epoch, ``0.00 sec`` in that form) as a `duration`: ``2.29 ms``."""
    if _missing(seconds) or abs(float(seconds)) < TUTORIAL_SECONDS_FROM:
        return duration(seconds)
    return f"{float(seconds):0.2f} sec"


def count(n: float, thing: str, things: str | None = None) -> str:
    """How many of a thing, in the singular for one: ``1 epoch``, ``2 epochs``, ``1.5 epochs``, ``3 processes``
    (``things``: the plural, where it is not ``thing`` + s)."""
    shown = str(int(n)) if float(n).is_integer() else f"{n:g}"
    return f"{shown} {thing if n == 1 else things or thing + 's'}"


def span(values: Iterable[float]) -> str:
    """The range of some counts (``27``, ``8 to 27``); ``no`` where there are none."""
    found = sorted(set(float(v) for v in values))
    shown = [str(int(v)) if v.is_integer() else f"{v:g}" for v in found]
    return "no" if not shown else shown[0] if len(shown) == 1 else f"{shown[0]} to {shown[-1]}"


def minutes(seconds: float) -> str:
    """A duration of minutes: ``2.5 min``."""
    return f"{seconds / 60:.1f} min"


def ratio(value: Any) -> str:
    """A ratio of two times or rates: ``×1.23``, ``×0.811``, ``×12.3``."""
    return MISSING if _missing(value) else f"×{number(value)}"


def interval(low: Any, high: Any) -> str:
    """A 95% interval of a ratio: ``×0.98–×1.03``."""
    return MISSING if _missing(low) or _missing(high) else f"{ratio(low)}–{ratio(high)}"


def percent(fraction: Any) -> str:
    """A fraction as a percentage: ``12.5%``, ``0.312%``."""
    return MISSING if _missing(fraction) else f"{number(100 * float(fraction))}%"


def change(ratio_value: Any) -> str:
    """A ratio of new to old as a change: ``+12.5% slower``-style sign: ``+12.5%``, ``-3.1%``."""
    if _missing(ratio_value):
        return MISSING
    delta = float(ratio_value) - 1
    return f"{'+' if delta >= 0 else '-'}{number(100 * abs(delta))}%"


def p_value(p: Any) -> str:
    """A p-value: ``0.0123``; below 0.001, ``<0.001``."""
    if _missing(p):
        return MISSING
    return "<0.001" if float(p) < 0.001 else number(p, 2)


_RATES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def flop_rate(flops_per_second: Any) -> str:
    """A FLOP rate: ``266 GFLOP/s``, ``31.8 TFLOP/s``."""
    return per_second(flops_per_second, "FLOP")


def per_second(value: Any, unit: str = "") -> str:
    """A rate, its thousands as a prefix: ``14.8 M/s``, ``66.3 k/s``, ``512/s``; of a unit, ``266 GFLOP/s``."""
    if _missing(value):
        return MISSING
    x = float(value)
    scale, prefix = next(((s, p) for s, p in _RATES if abs(x) >= s), (1.0, ""))
    return f"{number(x / scale)} {prefix}{unit}/s" if prefix or unit else f"{number(x)}/s"


_BYTES = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def size(n_bytes: Any) -> str:
    """A size in bytes: ``12.3 MiB``, ``512 B``."""
    if _missing(n_bytes):
        return MISSING
    x = float(n_bytes)
    for scale, unit in _BYTES:
        if abs(x) >= scale:
            return f"{number(x / scale)} {unit}"
    return f"{x:.0f} B"

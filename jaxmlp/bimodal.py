"""A release whose processes split into two groups (bimodal), found by a gap test (docs/methods/statistics.md)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from jaxmlp.units import duration, ratio

MIN_GROUP = 2
"""The fewest processes a group holds: a single slow process is an outlier, not a group."""
GAP_RATIO = 2.0
"""The least ratio between the groups: the fastest process of the slow group over the slowest of the fast one."""
GAP_SPREADS = 3.0
"""The gap's least width in the pooled standard deviation of the log times within the two groups."""


@dataclass(frozen=True)
class Groups:
    """The two groups of one release's samples (each sorted, ``low`` the faster)."""

    low: tuple[float, ...]
    high: tuple[float, ...]

    @property
    def medians(self) -> tuple[float, float]:
        return statistics.median(self.low), statistics.median(self.high)

    def line(self, shown: Callable[[float], str] = duration) -> str:
        """``bimodal: two groups, 1.75 ms (3) and 10 ms (4)``: each group's median and its processes."""
        low, high = self.medians
        return f"bimodal: two groups, {shown(low)} ({len(self.low)}) and {shown(high)} ({len(self.high)})"

    def against(self, other: float, before: bool) -> str:
        """Each group's median against ``other``'s (``before``: ``other`` is the older release): ``x6.9 (3) and x40
        (4)``."""
        low, high = ((m / other if before else other / m) for m in self.medians)
        return f"{ratio(low)} ({len(self.low)}) and {ratio(high)} ({len(self.high)})"


def groups_of(values: Sequence[float]) -> Groups | None:
    """The two groups of ``values`` (one release's positive samples), split at the widest gap of the sorted log times
    that passes `MIN_GROUP`, `GAP_RATIO` and `GAP_SPREADS`; None where they are one group."""
    ordered = sorted(float(x) for x in values)
    n = len(ordered)
    if n < 2 * MIN_GROUP or not all(x > 0 and math.isfinite(x) for x in ordered):
        return None
    logs = np.log(ordered)
    gaps = np.diff(logs)
    k = max(range(MIN_GROUP, n - MIN_GROUP + 1), key=lambda at: (float(gaps[at - 1]), -at))
    low, high = logs[:k], logs[k:]
    within = float(((low - low.mean()) ** 2).sum() + ((high - high.mean()) ** 2).sum())
    spread = math.sqrt(within / (n - 2))
    gap = float(gaps[k - 1])
    if gap < math.log(GAP_RATIO) or gap < GAP_SPREADS * spread:
        return None
    return Groups(tuple(ordered[:k]), tuple(ordered[k:]))

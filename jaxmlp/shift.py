"""How far NEW's times sit from BASELINE's, as a ratio: the Hodges-Lehmann estimate of the shift between their log
times and its Moses interval, the estimate and interval that go with the Mann-Whitney U test (`shift_interval`;
why: the docs' methods/statistics page)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

EXACT_PAIRS = 2500
"""The exact null of U is counted up to this many pairs n·m (50 and 50 samples: a few milliseconds); beyond, the
normal approximation, whose interval's rank lies within one of the exact one's there."""


def u_law(n: int, m: int) -> np.ndarray:
    """The exact null law of the Mann-Whitney U of n and m samples (no ties): P(U = u), u = 0 to n·m."""
    return np.asarray(_u_counts(n, m)) / math.comb(n + m, n)


@lru_cache(maxsize=256)
def _u_counts(n: int, m: int) -> tuple[float, ...]:
    """How many of the C(n + m, n) orderings give each value of the Mann-Whitney U, 0 to n·m: the coefficients of
    the Gaussian binomial, the product over i of (1 - q^(large + i)) / (1 - q^i), i = 1 to the smaller size."""
    small, large = sorted((n, m))
    counts = np.zeros(n * m + 1)
    counts[0] = 1.0
    for i in range(1, small + 1):
        step = large + i
        if step <= n * m:
            counts[step:] = counts[step:] - counts[:-step].copy()
        for start in range(i):  # divided by (1 - q^i): a running sum along every i-th coefficient
            counts[start::i] = np.cumsum(counts[start::i])
    return tuple(counts)


def moses_rank(n: int, m: int, confidence: float = 0.95) -> int:
    """The rank c of the interval's lower end among the n·m sorted differences (its upper end the c-th from the top):
    the most c with P(U <= c - 1) <= (1 - confidence) / 2 under no shift; 0 where no interval reaches it."""
    tail = (1 - confidence) / 2
    if n < 1 or m < 1:
        return 0
    if n * m <= EXACT_PAIRS:
        below = np.cumsum(u_law(n, m))
        return int(np.sum(below <= tail * (1 + 1e-9)))
    from scipy.stats import norm

    spread = math.sqrt(n * m * (n + m + 1) / 12)
    return max(0, math.floor(n * m / 2 + 0.5 + float(norm.ppf(tail)) * spread))


def shift_interval(baseline: ArrayLike, new: ArrayLike, confidence: float = 0.95) -> tuple[float, float, float]:
    """(estimate, low, high) of the ratio new / baseline: the median of the n·m ratios of a new time to a baseline
    time (the Hodges-Lehmann estimate, on log times), and their c-th smallest and c-th largest (`moses_rank`), an
    interval holding the true ratio with at least ``confidence`` wherever the two sides differ by a factor. NaN ends
    where too few samples reach the confidence."""
    logs = np.log(np.asarray(new, float))[None, :] - np.log(np.asarray(baseline, float))[:, None]
    ordered = np.sort(logs, axis=None)
    if not len(ordered):
        return math.nan, math.nan, math.nan
    estimate = float(np.exp(np.median(ordered)))
    c = moses_rank(logs.shape[0], logs.shape[1], confidence)
    if c < 1:
        return estimate, math.nan, math.nan
    return estimate, float(np.exp(ordered[c - 1])), float(np.exp(ordered[len(ordered) - c]))

"""Is NEW slower than BASELINE? Ratio of medians, a bootstrap interval, and a one-sided Mann-Whitney U test; a change
needs both p < alpha and a ratio beyond 1 + threshold (`registry.THRESHOLD`, `registry.ALPHA` by default; the rule
and why: the docs' methods/statistics page). Also the one rule for quartiles (`quantile`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from jaxmlp.jsonio import json_number, number
from jaxmlp.registry import ALPHA, THRESHOLD

INVALID = "invalid samples"  # a NaN or infinite time among the samples: no verdict can be trusted
VERDICTS = ("regression", "improvement", "no change", "insufficient data", INVALID)
WORDS = {"regression": "slower", "improvement": "faster"}  # a flagged verdict as an answer says it


class Comparison(NamedTuple):
    n_baseline: int
    n_new: int
    baseline_median: float
    new_median: float
    ratio: float  # new / baseline medians: > 1 is slower
    ci_low: float  # bootstrap 95% interval of the ratio
    ci_high: float
    p_slower: float  # one-sided Mann-Whitney U: new > baseline
    p_faster: float  # one-sided Mann-Whitney U: new < baseline
    verdict: str  # one of VERDICTS
    invalid: int = 0  # samples that are not finite numbers (NaN, inf), both sides together

    def describe(self) -> str:
        """The verdict as a reader needs it: ``invalid samples (2 NaN or inf)`` says how many."""
        return f"{INVALID} ({self.invalid} NaN or inf)" if self.verdict == INVALID else self.verdict

    def in_words(self) -> str:
        """The verdict as an answer says it: ``slower``, ``faster``, ``no change``, ``insufficient data`` or
        `describe`'s ``invalid samples (...)``."""
        return WORDS.get(self.verdict, self.describe())

    def p_one_sided(self) -> float:
        """The one-sided p in the direction the medians moved: ``p_slower`` for a ratio of 1 or more, else
        ``p_faster`` (a flagged verdict's own p)."""
        return self.p_slower if self.ratio >= 1 else self.p_faster

    def to_json(self) -> dict[str, Any]:
        return {k: json_number(v) if isinstance(v, float) else v for k, v in self._asdict().items()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Comparison:
        counts = ("n_baseline", "n_new", "verdict", "invalid")
        numbers = {k: number(doc.get(k)) for k in cls._fields if k not in counts}
        return cls(
            n_baseline=int(doc["n_baseline"]),
            n_new=int(doc["n_new"]),
            verdict=str(doc["verdict"]),
            invalid=int(doc.get("invalid") or 0),
            **numbers,
        )


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values by linear interpolation (numpy's default, pytest-benchmark's)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def smallest_p(n: int, m: int) -> float:
    """The smallest one-sided p an exact Mann-Whitney U test can give with n and m samples."""
    return 1 / math.comb(n + m, n)


def bootstrap_ratio_ci(
    baseline: ArrayLike, new: ArrayLike, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(new) / median(baseline), resampling each side."""
    rng = np.random.default_rng(seed)
    base = np.asarray(baseline, float)
    newer = np.asarray(new, float)
    b = np.median(rng.choice(base, (n_resamples, len(base))), axis=1)
    n = np.median(rng.choice(newer, (n_resamples, len(newer))), axis=1)
    ratios = n / b
    tail = (1 - confidence) / 2
    return float(np.quantile(ratios, tail)), float(np.quantile(ratios, 1 - tail))


def compare(
    baseline: ArrayLike, new: ArrayLike, threshold: float = THRESHOLD, alpha: float = ALPHA, interval: bool = True
) -> Comparison:
    """Compare two sets of timings (seconds; smaller is better). A NaN or infinite sample makes the verdict
    `INVALID` (the medians shown are of the finite samples): a broken timer must not read as "no change".
    Without ``interval`` the bootstrap interval is left out (NaN): the verdict does not read it."""
    from scipy.stats import mannwhitneyu

    base = np.asarray(baseline, float)
    newer = np.asarray(new, float)
    n, m = len(base), len(newer)
    nan = float("nan")
    invalid = int((~np.isfinite(base)).sum() + (~np.isfinite(newer)).sum())
    base_median, new_median = (
        float(np.median(x[np.isfinite(x)])) if np.isfinite(x).any() else nan for x in (base, newer)
    )
    ratio = new_median / base_median if base_median else nan
    if invalid:
        return Comparison(n, m, base_median, new_median, ratio, nan, nan, nan, nan, INVALID, invalid)
    if n < 2 or m < 2 or smallest_p(n, m) >= alpha:
        return Comparison(n, m, base_median, new_median, ratio, nan, nan, nan, nan, "insufficient data")
    low, high = bootstrap_ratio_ci(base, newer) if interval else (nan, nan)
    p_slower = float(mannwhitneyu(newer, base, alternative="greater").pvalue)
    p_faster = float(mannwhitneyu(newer, base, alternative="less").pvalue)
    if p_slower < alpha and ratio > 1 + threshold:
        verdict = "regression"
    elif p_faster < alpha and ratio < 1 / (1 + threshold):
        verdict = "improvement"
    else:
        verdict = "no change"
    return Comparison(n, m, base_median, new_median, ratio, low, high, p_slower, p_faster, verdict)

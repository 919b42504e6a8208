"""The intervals a comparison's verdict could rest on, side by side (`RULES`), for `replay_trials.py` and
`simulate_intervals.py`: each gives a ratio and its 95% interval, and `jaxmlp.stats.verdict_word` decides the word from
them and the one-sided Mann-Whitney p-values, which all rules share.

- ``median bootstrap``: the ratio of medians, a percentile bootstrap of it (2000 resamples, seed 0; the rule before
  the Moses interval);
- ``HL + Moses``: the Hodges-Lehmann ratio (the median of every new / baseline ratio) and its Moses interval
  (`jaxmlp.shift.shift_interval`);
- ``medians + Moses``: the ratio of medians, and the Moses interval stretched to hold it;
- ``trimmed bootstrap``: the ratio of the 20%-trimmed means of the log times, a percentile bootstrap of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from jaxmlp.shift import shift_interval
from jaxmlp.stats import INCONCLUSIVE, verdict_word

Estimate = tuple[float, float, float]  # ratio, interval low, interval high
RESAMPLES = 2000
TRIM = 0.2


def median_bootstrap(base: np.ndarray, new: np.ndarray) -> Estimate:
    """The ratio of medians and a percentile bootstrap interval of it, resampling each side."""
    rng = np.random.default_rng(0)
    b = np.median(rng.choice(base, (RESAMPLES, len(base))), axis=1)
    n = np.median(rng.choice(new, (RESAMPLES, len(new))), axis=1)
    low, high = np.quantile(n / b, [0.025, 0.975])
    return float(np.median(new) / np.median(base)), float(low), float(high)


def hl_moses(base: np.ndarray, new: np.ndarray) -> Estimate:
    return shift_interval(base, new)


def medians_moses(base: np.ndarray, new: np.ndarray) -> Estimate:
    """The ratio of medians, and the Moses interval stretched to hold it where it lies outside."""
    _, low, high = shift_interval(base, new)
    ratio = float(np.median(new) / np.median(base))
    return ratio, min(low, ratio), max(high, ratio)


def trimmed_bootstrap(base: np.ndarray, new: np.ndarray) -> Estimate:
    """The ratio of the 20%-trimmed means of the log times and a percentile bootstrap interval of it."""
    from scipy.stats import trim_mean

    rng = np.random.default_rng(0)
    lb, ln = np.log(base), np.log(new)
    b = trim_mean(rng.choice(lb, (RESAMPLES, len(lb))), TRIM, axis=1)
    n = trim_mean(rng.choice(ln, (RESAMPLES, len(ln))), TRIM, axis=1)
    low, high = np.exp(np.quantile(n - b, [0.025, 0.975]))
    return float(np.exp(trim_mean(ln, TRIM) - trim_mean(lb, TRIM))), float(low), float(high)


RULES: dict[str, Callable[[np.ndarray, np.ndarray], Estimate]] = {
    "median bootstrap": median_bootstrap,
    "HL + Moses": hl_moses,
    "medians + Moses": medians_moses,
    "trimmed bootstrap": trimmed_bootstrap,
}


def p_values(base: np.ndarray, new: np.ndarray) -> tuple[float, float]:
    """(p that new is slower, p that it is faster): one-sided Mann-Whitney U, as `jaxmlp.stats.compare` tests."""
    from scipy.stats import mannwhitneyu

    slower = float(mannwhitneyu(new, base, alternative="greater").pvalue)
    faster = float(mannwhitneyu(new, base, alternative="less").pvalue)
    return slower, faster


def words(base: Sequence[float], new: Sequence[float], rules: Sequence[str]) -> dict[str, str]:
    """Each rule's word for one comparison (5 or more processes a side)."""
    b, n = np.asarray(base, float), np.asarray(new, float)
    p = p_values(b, n)
    return {rule: verdict_word(*RULES[rule](b, n), *p) for rule in rules}


def first_settled(
    base: Sequence[float], new: Sequence[float], rules: Sequence[str], start: int = 5
) -> dict[str, tuple[int, str]]:
    """Each rule's (processes a side, word) where the comparison of the first n of each side first settles, n
    growing from ``start`` one process at a time; (the most n, inconclusive) for one that never does."""
    most = min(len(base), len(new))
    found: dict[str, tuple[int, str]] = {}
    for n in range(start, most + 1):
        open_ = [r for r in rules if r not in found]
        if not open_:
            break
        for rule, word in words(base[:n], new[:n], open_).items():
            if word != INCONCLUSIVE:
                found[rule] = (n, word)
    return {rule: found.get(rule, (most, INCONCLUSIVE)) for rule in rules}

"""Whether two benchmark runs' rounds can answer `jaxmlp compare`'s question at all (pure)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from jaxmlp.stats import smallest_p

POWER = 0.8
"""The chance of flagging a change of the threshold's size that the rounds needed are sized for."""
MANN_WHITNEY_EFFICIENCY = 3 / math.pi
"""The U test's efficiency against the t test on normal samples: it needs pi/3 times the samples."""


def rounds_for_alpha(alpha: float) -> int:
    """The fewest rounds a side (equal sides) with which the exact one-sided U test can give p < ``alpha``."""
    n = 2
    while smallest_p(n, n) >= alpha:
        n += 1
    return n


def spread(samples: Sequence[float]) -> float:
    """A run's spread: the standard deviation of its log times, from their IQR; NaN under two samples."""
    logs = np.log(np.asarray(samples, float))
    if len(logs) < 2:
        return math.nan
    q1, q3 = np.percentile(logs, [25, 75])
    return float((q3 - q1) / 1.349) if q3 > q1 else float(np.std(logs, ddof=1))


def rounds_for_effect(sigma: float, threshold: float, alpha: float, power: float = POWER) -> int:
    """Rounds a side for the U test to flag a ``threshold`` change at ``alpha`` and ``power``, log spread ``sigma``."""
    if not (sigma > 0 and threshold > 0):
        return 0
    z = NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(power)  # the standard normal's quantiles
    return math.ceil(2 * (z * sigma / math.log1p(threshold)) ** 2 / MANN_WHITNEY_EFFICIENCY)


@dataclass(frozen=True)
class Undecidable:
    """The benchmarks these rounds cannot decide, the rounds they had, and the rounds a side that would."""

    benchmarks: tuple[str, ...]
    had: tuple[int, int]  # the fewest rounds of a benchmark, baseline and new
    for_alpha: int  # what the significance alone needs
    needed: int  # what the two runs' spread needs (at least for_alpha)
    sigma: float  # the largest spread of log times among them (a side's)

    def line(self, total: int, threshold: float, alpha: float) -> str:
        base, new = self.had
        spread_said = (
            f"their spread (up to {self.sigma:.1%} a round) needs about {self.needed} rounds a side to "
            f"tell a {threshold:.0%} change"
            if math.isfinite(self.sigma) and self.needed > self.for_alpha
            else f"they need at least {self.needed} rounds a side"
        )
        return (
            f"UNDECIDED: {len(self.benchmarks)} of {total} benchmarks had too few rounds ({base} against {new}) "
            f"to reach p < {alpha:g}, which takes at least {self.for_alpha} a side; {spread_said}: measure both "
            f"again with --rounds {self.needed} (nox -s bench -- --rounds {self.needed})"
        )


def undecidable(
    table: pd.DataFrame,
    baseline: Mapping[str, Sequence[float]],
    new: Mapping[str, Sequence[float]],
    threshold: float,
    alpha: float,
) -> Undecidable | None:
    """The benchmarks of a comparison (`tables.compare_samples`) whose rounds cannot reach ``alpha``; None if none."""
    short = table[table["valid"] & table["p_slower"].isna()]  # no test: too few rounds for alpha
    if short.empty:
        return None
    names = tuple(str(n) for n in short["benchmark"])
    sigma = max(
        (s for name in names for s in (spread(baseline[name]), spread(new[name])) if math.isfinite(s)), default=math.nan
    )
    for_alpha = rounds_for_alpha(alpha)
    needed = max(for_alpha, rounds_for_effect(sigma, threshold, alpha) if math.isfinite(sigma) else 0)
    had = (int(short["n_baseline"].min()), int(short["n_new"].min()))
    return Undecidable(names, had, for_alpha, needed, sigma)


def undecided_memory(memory: pd.DataFrame, undecided: Undecidable | None) -> pd.DataFrame:
    """The memory comparison with the verdicts of benchmarks whose rounds decide nothing marked ``undecided``."""
    if undecided is None or memory.empty:
        return memory
    out = memory.copy()
    marked = out["benchmark"].isin(undecided.benchmarks) & (out["verdict"] != "no change")
    out.loc[marked, "verdict"] = out.loc[marked, "verdict"].str.replace("memory ", "", regex=False) + ", undecided"
    return out

"""Is NEW slower than BASELINE? Ratio of medians, its 95% interval (`ratio_interval`: the Moses interval that goes
with the test), and a one-sided Mann-Whitney U test; a change
needs both p < alpha and a ratio beyond 1 + threshold (`registry.THRESHOLD`, `registry.ALPHA` by default; the rule
and why: the docs' methods/statistics page); samples of several nodes: `jaxmlp.blocks`.
Every comparison's verdict in one of four words (`verdict_word`: slower, faster, the same, inconclusive) and the
processes an inconclusive one needs (`processes_to_settle`; `settle_words` says it on every face, "not within reach"
where the ratio lies at the threshold's edge). Also the one rule for quartiles (`quantile`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from jaxmlp.jsonio import json_number, number
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.shift import shift_interval
from jaxmlp.units import interval as interval_words
from jaxmlp.units import p_value
from jaxmlp.units import ratio as ratio_words

INVALID = "invalid samples"  # a NaN or infinite time among the samples: no verdict can be trusted
VERDICTS = ("regression", "improvement", "no change", "insufficient data", INVALID)
WORDS = {"regression": "slower", "improvement": "faster"}  # a flagged verdict as an answer says it

SLOWER, FASTER, SAME, INCONCLUSIVE = "slower", "faster", "the same", "inconclusive"
VERDICT_WORDS = (SLOWER, FASTER, SAME, INCONCLUSIVE)
"""The four words every comparison's verdict is said in, whatever shows it (`verdict_word` decides)."""
RESULTS_DIFFER = "results differ"
"""Not a verdict on time: what a comparison says instead where the two sides' values differ beyond the tolerance
(a different computation is no comparison of speed)."""


def within(low: float, high: float, threshold: float = THRESHOLD) -> bool:
    """Whether the interval [low, high] of a ratio lies within the threshold both ways, [1/(1 + threshold),
    1 + threshold], its ends included (False for a missing end)."""
    return bool(1 / (1 + threshold) <= low and high <= 1 + threshold)


def verdict_word(
    ratio: float,
    ci_low: float,
    ci_high: float,
    p_slower: float,
    p_faster: float,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> str:
    """A comparison's verdict in one of `VERDICT_WORDS`: ``slower`` where p_slower < alpha and the ratio is beyond
    1 + threshold (``faster`` the mirror), else ``the same`` where the 95% interval lies `within` the threshold both
    ways (an equivalence test), else ``inconclusive``. A missing number (NaN) decides nothing."""
    if p_slower < alpha and ratio > 1 + threshold:
        return SLOWER
    if p_faster < alpha and ratio < 1 / (1 + threshold):
        return FASTER
    return SAME if within(ci_low, ci_high, threshold) else INCONCLUSIVE


class Comparison(NamedTuple):
    n_baseline: int
    n_new: int
    baseline_median: float
    new_median: float
    ratio: float  # new / baseline medians: > 1 is slower (several nodes: their ratios' weighted geometric mean)
    ci_low: float  # 95% interval of the ratio (`ratio_interval`; several nodes: `jaxmlp.blocks`)
    ci_high: float
    p_slower: float  # one-sided Mann-Whitney U: new > baseline (several nodes: van Elteren's stratified test)
    p_faster: float  # one-sided Mann-Whitney U: new < baseline (several nodes: van Elteren's)
    verdict: str  # one of VERDICTS
    invalid: int = 0  # samples that are not finite numbers (NaN, inf), both sides together
    word: str = INCONCLUSIVE  # one of VERDICT_WORDS (`verdict_word`): what every face says

    def describe(self) -> str:
        """The verdict as a reader needs it: ``invalid samples (2 NaN or inf)`` says how many."""
        return f"{INVALID} ({self.invalid} NaN or inf)" if self.verdict == INVALID else self.verdict

    def in_words(self) -> str:
        """The verdict as every face says it: one of `VERDICT_WORDS`."""
        return self.word

    def p_one_sided(self) -> float:
        """The one-sided p in the direction the medians moved: ``p_slower`` for a ratio of 1 or more, else
        ``p_faster`` (a flagged verdict's own p)."""
        return self.p_slower if self.ratio >= 1 else self.p_faster

    def to_json(self) -> dict[str, Any]:
        return {k: json_number(v) if isinstance(v, float) else v for k, v in self._asdict().items()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Comparison:
        """A comparison as filed; one filed before it carried its word gets it from its stored verdict and interval
        (`word_of_filed`)."""
        counts = ("n_baseline", "n_new", "verdict", "invalid", "word")
        numbers = {k: number(doc.get(k)) for k in cls._fields if k not in counts}
        verdict = str(doc["verdict"])
        word = doc.get("word")
        return cls(
            n_baseline=int(doc["n_baseline"]),
            n_new=int(doc["n_new"]),
            verdict=verdict,
            invalid=int(doc.get("invalid") or 0),
            word=str(word) if word in VERDICT_WORDS else word_of_filed(verdict, numbers["ci_low"], numbers["ci_high"]),
            **numbers,
        )


def word_of_filed(verdict: str, ci_low: float, ci_high: float, threshold: float = THRESHOLD) -> str:
    """The word of a comparison filed with its verdict only (older files): a flagged one's direction, a "no change"
    whose interval lies `within` the threshold the same, anything else inconclusive."""
    if verdict in WORDS:
        return WORDS[verdict]
    return SAME if verdict == "no change" and within(ci_low, ci_high, threshold) else INCONCLUSIVE


RESULT_FIELDS = Comparison._fields[Comparison._fields.index("ratio") : Comparison._fields.index("verdict") + 1]
"""A comparison's result, as every table that shows one names its columns: the ratio, its interval, both p-values,
the verdict."""


def flagged_verdict(word: str) -> str:
    """The detector's verdict (`VERDICTS`) of a comparison with enough valid samples, from its word."""
    return {SLOWER: "regression", FASTER: "improvement"}.get(word, "no change")


SETTLE_REACH = 10
"""An estimate of the processes that would settle an inconclusive comparison is within reach up to this many times
the processes a side it has; beyond it (a ratio at the threshold's edge, whose interval must shrink more than
sqrt(11) times) no count is said: "not within reach" (the docs' methods/statistics page)."""


EDGE = 0.01
"""A ratio within 1% of the threshold (on a log scale) lies at it: "not within reach" says so; one farther out is not
within reach because its interval is too wide."""


def _needed(comparison: Comparison, threshold: float) -> int | None:
    """The estimate of `processes_to_settle`, however large; None where the interval cannot tell."""
    ratio, low, high = comparison.ratio, comparison.ci_low, comparison.ci_high
    n = min(comparison.n_baseline, comparison.n_new)
    if not (n >= 2 and all(math.isfinite(x) and x > 0 for x in (ratio, low, high))):
        return None
    centre, bound = math.log(ratio), math.log(1 + threshold)
    below, above = max(centre - math.log(low), 0.0), max(math.log(high) - centre, 0.0)
    inf = math.inf
    if abs(centre) < bound:
        scale = min((bound - centre) / above if above else inf, (bound + centre) / below if below else inf)
    elif centre > bound:
        scale = (centre - bound) / below if below else inf
    elif centre < -bound:
        scale = (-bound - centre) / above if above else inf
    else:
        return None
    if not 0 < scale < 1:
        return None
    return math.ceil(n / scale**2) - n


def beyond_reach(comparison: Comparison, threshold: float = THRESHOLD) -> bool:
    """Whether an inconclusive comparison is not within reach: its ratio lies at the threshold's edge (within
    `EDGE`) and settling it would need more than `SETTLE_REACH` times the processes a side it has. One whose
    interval is merely wide is within reach, however many it asks for: settled until the budget ends (a
    simulation of settling, `bench/simulate_verdicts.py --settle`, settled every such one it was given)."""
    more = _needed(comparison, threshold) if comparison.word == INCONCLUSIVE else None
    if more is None or more <= SETTLE_REACH * min(comparison.n_baseline, comparison.n_new):
        return False
    return abs(abs(math.log(comparison.ratio)) - math.log(1 + threshold)) < EDGE


def processes_to_settle(comparison: Comparison, threshold: float = THRESHOLD) -> int | None:
    """Roughly how many more processes a side would settle an inconclusive comparison (0 for a settled one): its
    interval's sides on a log scale, shrunk as 1/sqrt(processes), until the interval lies within the threshold both
    ways (a ratio within it) or clear of it (a ratio beyond it). None where the interval cannot tell (none, a ratio
    on the threshold, or an interval already clear of it whose test is not significant), and where the count lies
    beyond reach (`beyond_reach`)."""
    if comparison.word != INCONCLUSIVE:
        return 0
    if beyond_reach(comparison, threshold):
        return None
    return _needed(comparison, threshold)


def settle_words(comparison: Comparison, threshold: float = THRESHOLD, unit: str = "processes") -> str:
    """What would settle an inconclusive comparison, as every face says it: ``about 12 more processes a side would
    settle it``; ``not within reach: the ratio lies at the threshold (×1.049 against ±5%) ...`` (`beyond_reach`: the
    ratio within `EDGE` of it, else its interval too wide for the ratio's distance from it); or
    that more would, where the interval cannot tell how many. ``unit``: what is counted (``rounds`` in `compare`)."""
    if beyond_reach(comparison, threshold):
        n = min(comparison.n_baseline, comparison.n_new)
        return (
            f"not within reach: the ratio lies at the threshold (×{comparison.ratio:.4g} against "
            f"±{100 * threshold:g}%); more than "
            f"{SETTLE_REACH} times the {n} {unit} a side would not settle it"
        )
    more = processes_to_settle(comparison, threshold)
    if more:
        return f"about {more} more {unit} a side would settle it"
    return f"more {unit} would settle it (how many, the interval cannot tell)"


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values by linear interpolation (numpy's default, pytest-benchmark's)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def smallest_p(n: int, m: int) -> float:
    """The smallest one-sided p an exact Mann-Whitney U test can give with n and m samples."""
    return 1 / math.comb(n + m, n)


def ratio_interval(baseline: ArrayLike, new: ArrayLike, ratio: float, confidence: float = 0.95) -> tuple[float, float]:
    """The 95% interval of the ratio new / baseline: the Moses interval of the Hodges-Lehmann ratio, the interval that
    goes with the Mann-Whitney test (`jaxmlp.shift.shift_interval`), stretched to hold ``ratio`` (the medians')
    where it lies outside; NaN where too few samples reach the confidence."""
    _, low, high = shift_interval(baseline, new, confidence)
    if math.isnan(low) or math.isnan(high):
        return math.nan, math.nan
    return min(low, ratio), max(high, ratio)


def compare(
    baseline: ArrayLike, new: ArrayLike, threshold: float = THRESHOLD, alpha: float = ALPHA, interval: bool = True
) -> Comparison:
    """Compare two sets of timings (seconds; smaller is better). A NaN or infinite sample makes the verdict
    `INVALID` (the medians shown are of the finite samples): a broken timer must not read as "no change".
    Without ``interval`` the interval is left out (NaN): the verdict does not read it."""
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
    low, high = ratio_interval(base, newer, ratio) if interval else (nan, nan)
    p_slower = float(mannwhitneyu(newer, base, alternative="greater").pvalue)
    p_faster = float(mannwhitneyu(newer, base, alternative="less").pvalue)
    word = verdict_word(ratio, low, high, p_slower, p_faster, threshold, alpha)
    verdict = flagged_verdict(word)
    return Comparison(n, m, base_median, new_median, ratio, low, high, p_slower, p_faster, verdict, word=word)


def verdict_line(comparison: Comparison, threshold: float = THRESHOLD) -> str:
    """A comparison as every face says it: its word, ratio and 95% interval, and why: the p of a change, the
    threshold an interval lies within, or how far an inconclusive one's interval spans it and roughly the processes
    a side that would settle it (`processes_to_settle`)."""
    c = comparison
    figures = f"{ratio_words(c.ratio)} (95% interval {interval_words(c.ci_low, c.ci_high)}"
    if c.verdict == INVALID:
        return f"{c.word} ({c.invalid} samples NaN or inf: fix the timing)"
    if c.word in (SLOWER, FASTER):
        return f"{c.word}, {figures}, p {p_value(c.p_one_sided())})"
    if c.word == SAME:
        return f"{c.word}, {figures} within ±{100 * threshold:g}%)"
    if not (math.isfinite(c.ci_low) and math.isfinite(c.ci_high)):
        return f"{c.word}, {ratio_words(c.ratio)} ({c.n_baseline} and {c.n_new} processes: too few to test)"
    return f"{c.word}, {figures} spans the ±{100 * threshold:g}% threshold; {settle_words(c, threshold)})"

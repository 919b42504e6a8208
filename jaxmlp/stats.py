"""Is NEW slower than BASELINE? Ratio of medians, a bootstrap interval, and a one-sided Mann-Whitney U test; a change
needs both p < alpha and a ratio beyond 1 + threshold (`registry.THRESHOLD`, `registry.ALPHA` by default; the rule
and why: the docs' methods/statistics page); with samples of several nodes, each node a block (`compare_within`).
Every comparison's verdict in one of four words (`verdict_word`: slower, faster, the same, inconclusive) and the
processes an inconclusive one needs (`processes_to_settle`). Also the one rule for quartiles (`quantile`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from jaxmlp.jsonio import json_number, number
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.units import interval as interval_words
from jaxmlp.units import p_value
from jaxmlp.units import ratio as ratio_words

INVALID = "invalid samples"  # a NaN or infinite time among the samples: no verdict can be trusted
VERDICTS = ("regression", "improvement", "no change", "insufficient data", INVALID)
WORDS = {"regression": "slower", "improvement": "faster"}  # a flagged verdict as an answer says it

SLOWER, FASTER, SAME, INCONCLUSIVE = "slower", "faster", "the same", "inconclusive"
VERDICT_WORDS = (SLOWER, FASTER, SAME, INCONCLUSIVE)
"""The four words every comparison's verdict is said in, whatever shows it (`verdict_word` decides)."""


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
    ci_low: float  # bootstrap 95% interval of the ratio (several nodes: resampled within them, or the nodes)
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


def _flag(word: str) -> str:
    """The detector's verdict (`VERDICTS`) of a comparison with enough valid samples, from its word."""
    return {SLOWER: "regression", FASTER: "improvement"}.get(word, "no change")


def processes_to_settle(comparison: Comparison, threshold: float = THRESHOLD) -> int | None:
    """Roughly how many more processes a side would settle an inconclusive comparison (0 for a settled one): its
    interval's sides on a log scale, shrunk as 1/sqrt(processes), until the interval lies within the threshold both
    ways (a ratio within it) or clear of it (a ratio beyond it). None where the interval cannot tell (none, a ratio
    on the threshold, or an interval already clear of it whose test is not significant)."""
    if comparison.word != INCONCLUSIVE:
        return 0
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
    word = verdict_word(ratio, low, high, p_slower, p_faster, threshold, alpha)
    return Comparison(n, m, base_median, new_median, ratio, low, high, p_slower, p_faster, _flag(word), word=word)


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
    more = processes_to_settle(c, threshold)
    settle = (
        f"about {more} more processes a side would settle it"
        if more
        else "more processes would settle it (how many, the interval cannot tell)"
    )
    return f"{c.word}, {figures} spans the ±{100 * threshold:g}% threshold; {settle})"


# --- several nodes: each a block (`compare_within`) ---------------------------------------------------------------


def _blocks(values: np.ndarray, nodes: Sequence[str]) -> dict[str, np.ndarray]:
    """``values`` by node, in the order the nodes first appear."""
    labels = np.asarray(nodes, dtype=object)
    return {node: values[labels == node] for node in dict.fromkeys(nodes)}


def _weights(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Each node's weight in the combined ratio: n·m/(n + m), the inverse of its log ratio's variance up to a
    constant (a node with few samples on either side counts little)."""
    return np.array([len(b) * len(n) / (len(b) + len(n)) for b, n in pairs])


def combined_ratio(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> float:
    """The nodes' ratios of medians (new / baseline), combined by their weighted geometric mean."""
    logs = np.array([math.log(float(np.median(n)) / float(np.median(b))) for b, n in pairs])
    weights = _weights(pairs)
    return float(np.exp(np.sum(weights * logs) / np.sum(weights)))


SMALL = 8
"""A stratum with fewer samples than this on either side takes the exact null (scipy's rule for Mann-Whitney U)."""
SUPPORT = 200_000
"""The most distinct values the exact null may hold before a seeded permutation test stands in for it."""
PERMUTATIONS = 100_000


def _statistic(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[list[np.ndarray], list[int], float]:
    """Each node's ranks (ties averaged), its new side's size, and van Elteren's statistic: the new side's rank
    sums, each over its node's size + 1."""
    from scipy.stats import rankdata

    ranks = [rankdata(np.concatenate([b, n])) for b, n in pairs]
    sizes = [len(n) for _, n in pairs]
    total = sum(float(np.sum(r[len(b) :])) / (len(r) + 1) for r, (b, _) in zip(ranks, pairs))
    return ranks, sizes, total


def _rank_sums(ranks: np.ndarray, m: int) -> dict[float, float]:
    """The exact null of one node: each sum of ``m`` of its ``ranks`` (over its size + 1) and its probability."""
    doubled = np.rint(2 * ranks).astype(int)  # averaged ties are halves
    top = int(doubled.sum())
    counts = np.zeros((m + 1, top + 1))
    counts[0, 0] = 1.0
    for r in doubled:
        counts[1:, r:] += counts[:-1, : top + 1 - r].copy()
    row = counts[m] / math.comb(len(ranks), m)
    return {float(s) / 2 / (len(ranks) + 1): float(row[s]) for s in np.flatnonzero(row)}


def _exact_tails(ranks: list[np.ndarray], sizes: list[int], observed: float) -> tuple[float, float] | None:
    """(P(T >= observed), P(T <= observed)) under the exact stratified null (the nodes' rank-sum distributions
    convolved), or None where it would hold more than `SUPPORT` values."""
    law: dict[float, float] = {0.0: 1.0}
    for r, m in zip(ranks, sizes):
        node = _rank_sums(r, m)
        joined: dict[float, float] = {}
        for a, pa in law.items():
            for b, pb in node.items():
                key = round(a + b, 9)
                joined[key] = joined.get(key, 0.0) + pa * pb
        if len(joined) > SUPPORT:
            return None
        law = joined
    values = np.array(list(law))
    probs = np.array(list(law.values()))
    tol = 1e-7
    return float(probs[values >= observed - tol].sum()), float(probs[values <= observed + tol].sum())


def _permuted_tails(ranks: list[np.ndarray], sizes: list[int], observed: float, seed: int = 0) -> tuple[float, float]:
    """`_exact_tails` by a seeded permutation test within each node (`PERMUTATIONS` draws, the observed one counted)."""
    rng = np.random.default_rng(seed)
    total = np.zeros(PERMUTATIONS)
    for r, m in zip(ranks, sizes):
        drawn = rng.permuted(np.tile(r, (PERMUTATIONS, 1)), axis=1)[:, :m]
        total += drawn.sum(axis=1) / (len(r) + 1)
    tol = 1e-7
    slower = (1 + int(np.sum(total >= observed - tol))) / (PERMUTATIONS + 1)
    faster = (1 + int(np.sum(total <= observed + tol))) / (PERMUTATIONS + 1)
    return slower, faster


def van_elteren(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """(p that new is slower, p that it is faster): van Elteren's stratified rank-sum test, each node a stratum.
    Where a node has fewer than `SMALL` samples on a side, p is exact (the nodes' exact rank-sum nulls convolved,
    ties as ranked; a seeded permutation test within nodes where that null is too large); else the normal
    approximation (ties corrected)."""
    from scipy.stats import norm

    ranks, sizes, total = _statistic(pairs)
    if any(min(len(b), len(n)) < SMALL for b, n in pairs):
        return _exact_tails(ranks, sizes, total) or _permuted_tails(ranks, sizes, total)
    expected = variance = 0.0
    for r, (base, newer) in zip(ranks, pairs):
        n, m = len(base), len(newer)
        size = n + m
        _, ties = np.unique(r, return_counts=True)
        tied = float(np.sum(ties**3 - ties)) / (size * (size - 1))
        expected += m / 2
        variance += n * m * ((size + 1) - tied) / 12 / (size + 1) ** 2
    if variance <= 0:
        return 1.0, 1.0
    z = (total - expected) / math.sqrt(variance)
    return float(norm.sf(z)), float(norm.cdf(z))


def bootstrap_within(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of `combined_ratio`, resampling each side within each node."""
    rng = np.random.default_rng(seed)
    weights = _weights(pairs)
    logs = np.zeros(n_resamples)
    for weight, (base, newer) in zip(weights, pairs):
        b = np.median(rng.choice(base, (n_resamples, len(base))), axis=1)
        n = np.median(rng.choice(newer, (n_resamples, len(newer))), axis=1)
        logs += weight * np.log(n / b)
    ratios = np.exp(logs / np.sum(weights))
    tail = (1 - confidence) / 2
    return float(np.quantile(ratios, tail)), float(np.quantile(ratios, 1 - tail))


CLUSTERS = 5
"""The fewest nodes whose ratios a cluster bootstrap resamples (`bootstrap_nodes`); fewer: no interval."""


def bootstrap_nodes(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of `combined_ratio` resampling the nodes (each with its log ratio of medians
    and its weight), for nodes too small to resample within; NaN with fewer than `CLUSTERS` nodes."""
    if len(pairs) < CLUSTERS:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    logs = np.array([math.log(float(np.median(n)) / float(np.median(b))) for b, n in pairs])
    weights = _weights(pairs)
    drawn = rng.integers(0, len(pairs), (n_resamples, len(pairs)))
    ratios = np.exp(np.sum(weights[drawn] * logs[drawn], axis=1) / np.sum(weights[drawn], axis=1))
    tail = (1 - confidence) / 2
    return float(np.quantile(ratios, tail)), float(np.quantile(ratios, 1 - tail))


def _interval(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """`bootstrap_within`, or `bootstrap_nodes` where a node has one sample on a side (resampling within it would
    hold that side still)."""
    if any(min(len(b), len(n)) < 2 for b, n in pairs):
        return bootstrap_nodes(pairs)
    return bootstrap_within(pairs)


def compare_within(
    baseline: ArrayLike,
    new: ArrayLike,
    baseline_nodes: Sequence[str],
    new_nodes: Sequence[str],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    interval: bool = True,
) -> Comparison:
    """`compare` with each sample's node (the machine that measured it) as a block: a release is compared with
    the other within each node first (`combined_ratio`, `van_elteren`, `bootstrap_within`), so that nodes of
    different speeds add no noise. With one node (or one left) it is `compare`, number for number; a node that
    measured one side only is left out. The medians shown are of all the samples kept."""
    base, newer = np.asarray(baseline, float), np.asarray(new, float)
    if len(set(baseline_nodes) | set(new_nodes)) <= 1:
        return compare(base, newer, threshold, alpha, interval)
    ours, theirs = _blocks(base, baseline_nodes), _blocks(newer, new_nodes)
    pairs = [(ours[node], theirs[node]) for node in ours if node in theirs and len(ours[node]) and len(theirs[node])]
    kept_base = np.concatenate([b for b, _ in pairs]) if pairs else base[:0]
    kept_new = np.concatenate([n for _, n in pairs]) if pairs else newer[:0]
    nan = float("nan")
    plain = compare(kept_base, kept_new, threshold, alpha, interval=False)
    n, m = len(kept_base), len(kept_new)
    if plain.verdict == INVALID or not pairs:
        return plain
    if len(pairs) == 1:
        return compare(kept_base, kept_new, threshold, alpha, interval)
    ratio = combined_ratio(pairs)
    floor = math.prod(smallest_p(len(b), len(x)) for b, x in pairs)
    if n < 2 or m < 2 or floor >= alpha:
        return plain._replace(
            ratio=ratio, ci_low=nan, ci_high=nan, p_slower=nan, p_faster=nan, verdict="insufficient data"
        )
    low, high = _interval(pairs) if interval else (nan, nan)
    p_slower, p_faster = van_elteren(pairs)
    word = verdict_word(ratio, low, high, p_slower, p_faster, threshold, alpha)
    median = plain.baseline_median, plain.new_median
    return Comparison(n, m, *median, ratio, low, high, p_slower, p_faster, _flag(word), word=word)

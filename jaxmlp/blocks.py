"""Samples of several nodes compared with each node a block (`compare_within`; docs/methods/statistics.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.shift import EXACT_PAIRS, u_law
from jaxmlp.stats import INVALID, Comparison, compare, flagged_verdict, smallest_p, verdict_word


def _blocks(values: np.ndarray, nodes: Sequence[str]) -> dict[str, np.ndarray]:
    """``values`` by node, in the order the nodes first appear."""
    labels = np.asarray(nodes, dtype=object)
    return {node: values[labels == node] for node in dict.fromkeys(nodes)}


def _weights(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Each node's weight in the combined ratio, n·m/(n + m): its log ratio's inverse variance up to a constant."""
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
    """Each node's ranks (ties averaged), its new side's size, and van Elteren's statistic."""
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
    """The exact stratified null's two tails at the observed statistic, or None past `SUPPORT` values."""
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
    """(p that new is slower, p that it is faster): van Elteren's stratified rank-sum test, each node a stratum."""
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


def _null_law(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact null law of sum U / (size + 1) over the nodes (each node's Mann-Whitney U, no ties): its values and
    their probabilities; None past `SUPPORT` values or where a node's exact law is not counted (`EXACT_PAIRS`)."""
    if any(len(b) * len(n) > EXACT_PAIRS for b, n in pairs):
        return None
    values: np.ndarray = np.zeros(1)
    probs: np.ndarray = np.ones(1)
    for base, newer in pairs:
        law = u_law(len(base), len(newer))
        u = np.flatnonzero(law)
        if len(values) * len(u) > 20 * SUPPORT:  # too many sums to hold: before they are made
            return None
        summed = np.add.outer(values, u / (len(base) + len(newer) + 1)).ravel()
        keys, at = np.unique(np.round(summed, 9), return_inverse=True)
        if len(keys) > SUPPORT:
            return None
        values, probs = keys, np.bincount(at.ravel(), np.multiply.outer(probs, law[u]).ravel())
    return values, probs


def _lower_critical(pairs: Sequence[tuple[np.ndarray, np.ndarray]], tail: float) -> float:
    """The largest l with P(T < l) <= ``tail`` for van Elteren's statistic T = sum U / (size + 1) under no shift:
    exact where a node is small (as `van_elteren`), else its normal approximation."""
    from scipy.stats import norm

    law = _null_law(pairs) if any(min(len(b), len(n)) < SMALL for b, n in pairs) else None
    if law is not None:
        values, probs = law
        before = np.cumsum(probs) - probs
        return float(values[before <= tail * (1 + 1e-9)].max())
    mean = sum(len(b) * len(n) / 2 / (len(b) + len(n) + 1) for b, n in pairs)
    variance = sum(len(b) * len(n) / 12 / (len(b) + len(n) + 1) for b, n in pairs)
    return mean + float(norm.ppf(tail)) * math.sqrt(variance)


def stratified_interval(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], ratio: float, confidence: float = 0.95
) -> tuple[float, float]:
    """The 95% interval of the ratio over several nodes: the ratios (of log times, a factor) van Elteren's two-sided
    test does not reject, Moses's interval with each node's pairwise ratios weighted 1 / (its size + 1); stretched to
    hold ``ratio`` (`combined_ratio`) where it lies outside; NaN where too few samples reach the confidence."""
    diffs = [(np.log(n)[None, :] - np.log(b)[:, None]).ravel() for b, n in pairs]
    weights = np.concatenate([np.full(d.size, 1 / (len(b) + len(n) + 1)) for d, (b, n) in zip(diffs, pairs)])
    order = np.argsort(np.concatenate(diffs), kind="stable")
    ordered, cumulative = np.concatenate(diffs)[order], np.cumsum(weights[order])
    low = _lower_critical(pairs, (1 - confidence) / 2)
    if not low > 0:
        return math.nan, math.nan
    tol = 1e-9
    first = int(np.argmax(cumulative >= low - tol))
    last = int(np.flatnonzero(cumulative - weights[order] <= cumulative[-1] - low + tol)[-1])
    return min(float(np.exp(ordered[first])), ratio), max(float(np.exp(ordered[last])), ratio)


def compare_within(
    baseline: ArrayLike,
    new: ArrayLike,
    baseline_nodes: Sequence[str],
    new_nodes: Sequence[str],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    interval: bool = True,
) -> Comparison:
    """`compare` with each sample's node as a block; one node is `compare`, number for number."""
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
    low, high = stratified_interval(pairs, ratio) if interval else (nan, nan)
    p_slower, p_faster = van_elteren(pairs)
    word = verdict_word(ratio, low, high, p_slower, p_faster, threshold, alpha)
    median = plain.baseline_median, plain.new_median
    return Comparison(n, m, *median, ratio, low, high, p_slower, p_faster, flagged_verdict(word), word=word)

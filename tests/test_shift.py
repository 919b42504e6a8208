"""The Hodges-Lehmann ratio and its Moses interval (`jaxmlp.shift`): the exact null of U, the interval's ranks
against the published tables, and the interval as the shifts the Mann-Whitney test does not reject."""

import itertools
import math

import numpy as np
import pytest

from jaxmlp import shift


def _brute_counts(n: int, m: int) -> list[int]:
    """U's null counts by enumerating every placement of the new side among n + m ranks."""
    counts = [0] * (n * m + 1)
    for new in itertools.combinations(range(n + m), m):
        counts[sum(r - i for i, r in enumerate(new))] += 1
    return counts


@pytest.mark.parametrize(("n", "m"), [(2, 3), (4, 4), (5, 3), (6, 5)])
def test_the_exact_null_of_u_counts_every_ordering(n, m):
    assert list(shift._u_counts(n, m)) == _brute_counts(n, m)


def test_the_interval_s_ranks_are_the_published_ones():
    """Hollander and Wolfe's table of C for the 95% interval (n = m): 3, 6, 9, 14, 24; none for 3 and 3."""
    assert [shift.moses_rank(n, n) for n in (5, 6, 7, 8, 10)] == [3, 6, 9, 14, 24]
    assert shift.moses_rank(3, 3) == 0 and shift.moses_rank(0, 5) == 0
    assert shift.moses_rank(20, 20) == 128  # exact; the normal approximation's, with its continuity correction, too


def test_past_the_exact_limit_the_normal_approximation_takes_over(monkeypatch):
    exact = shift.moses_rank(30, 40)
    monkeypatch.setattr(shift, "EXACT_PAIRS", 1)
    assert abs(shift.moses_rank(30, 40) - exact) <= 1


def test_the_interval_holds_the_shifts_the_test_does_not_reject():
    """Every ratio inside the interval leaves the two-sided exact U test's p above 5% once the new side is divided
    by it; just outside, below (ties at the ends aside)."""
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(0)
    base, new = np.exp(rng.normal(0, 0.05, 7)), 1.1 * np.exp(rng.normal(0, 0.05, 8))
    estimate, low, high = shift.shift_interval(base, new)
    assert low < estimate < high
    assert estimate == pytest.approx(math.exp(np.median(np.log(new)[None, :] - np.log(base)[:, None])))

    def p(ratio: float) -> float:
        return float(mannwhitneyu(new / ratio, base, method="exact").pvalue)

    assert p(low * 1.0001) > 0.05 and p(high / 1.0001) > 0.05
    assert p(low / 1.0001) <= 0.05 and p(high * 1.0001) <= 0.05


def test_too_few_samples_give_no_interval():
    estimate, low, high = shift.shift_interval([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])
    assert estimate == pytest.approx(2.0) and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(x) for x in shift.shift_interval([], [1.0]))

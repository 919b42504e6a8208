"""Helpers shared by the benchmark modules."""

from __future__ import annotations

import jax
import numpy as np


def measure(benchmark, target, sizes, *, rounds=None, setup=None):
    """Time ``target`` (which ends in block_until_ready) for the sizes's rounds, warm-up outside them.

    Returns the median seconds, or None where benchmarks are disabled (a smoke run).
    """
    benchmark.pedantic(
        target,
        setup=setup,
        rounds=rounds or sizes["rounds"],
        warmup_rounds=sizes["warmup_rounds"],
        iterations=1,
    )
    stats = getattr(benchmark, "stats", None)
    return None if stats is None else stats.stats.median


def max_relative_difference(a, b) -> float:
    """Largest |a - b| over max |b|, leaf by leaf, for two pytrees of arrays."""
    return max(
        float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / max(float(np.max(np.abs(np.asarray(y)))), 1e-30))
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True)
    )

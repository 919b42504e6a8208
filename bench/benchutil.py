"""Helpers shared by the benchmark modules."""

from __future__ import annotations


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

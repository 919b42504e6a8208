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


def exact_float32(device) -> bool:
    """Whether float32 matmuls on ``device`` are float32 throughout: on a CPU, or with ``highest`` precision; a
    GPU at ``default`` may take TF32 passes, a TPU one bf16 pass (`jax_default_matmul_precision`, recorded with every
    result)."""
    import jax

    return device.platform == "cpu" or str(jax.config.jax_default_matmul_precision) in ("highest", "float32")


def checked_tolerance(device) -> dict[str, float]:
    """How close a float32 result must be to its float32 reference on ``device`` (`exact_float32`)."""
    return {"rtol": 1e-3, "atol": 1e-2} if exact_float32(device) else {"rtol": 5e-2, "atol": 5e-1}

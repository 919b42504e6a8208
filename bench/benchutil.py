"""Helpers shared by the benchmark modules."""

from __future__ import annotations


def measure(benchmark, target, sizes, *, rounds=None, warmup_rounds=None, setup=None, iterations=1):
    """Time ``target`` (which ends in block_until_ready) for the sizes's rounds, warm-up outside them; a round of
    ``iterations`` calls is timed as one and stored divided by them (`jaxmlp.measure.floor.per_call`).

    Returns the median seconds (of one iteration), or None where benchmarks are disabled (a smoke run).
    """
    benchmark.pedantic(
        target,
        setup=setup,
        rounds=rounds or sizes["rounds"],
        warmup_rounds=sizes["warmup_rounds"] if warmup_rounds is None else warmup_rounds,
        iterations=iterations,
    )
    stats = getattr(benchmark, "stats", None)
    return None if stats is None else stats.stats.median


def epoch_rounds(sizes, pipeline):
    """The rounds and warm-up rounds of an epoch of ``pipeline`` (``measure``'s keywords): a slow rung's
    (`jaxmlp.registry.SLOW_PIPELINES`, ``--slow-rounds``) or the size's epoch rounds."""
    from jaxmlp import registry

    if pipeline in registry.SLOW_PIPELINES:
        return {"rounds": sizes["slow_rounds"], "warmup_rounds": sizes["slow_warmup_rounds"]}
    return {"rounds": sizes["epoch_rounds"], "warmup_rounds": sizes["warmup_rounds"]}


FLOAT32 = {"rtol": 1e-3, "atol": 1e-2}
"""How close a float32 result must be to its float64 or float32 reference: products in float32 throughout (the f32
precision's, `jaxmlp.model.precision_scope`, on every device)."""


def exact_float32(device) -> bool:
    """Whether float32 matmuls left at JAX's own setting (outside a precision's scope: the update and predict
    benchmarks) are float32 throughout on ``device``: on a CPU, or at ``highest``; a GPU at ``default`` may take
    TF32 passes, a TPU one bf16 pass (`jax_default_matmul_precision`, recorded with every result)."""
    import jax

    return device.platform == "cpu" or str(jax.config.jax_default_matmul_precision) in ("highest", "float32")

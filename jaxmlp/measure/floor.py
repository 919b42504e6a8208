"""What the hardware can do: the float32 matmul rate, and the compute floor of an epoch.

The floor of an epoch is its FLOPs (from XLA's cost analysis of the compiled
step) over the float32 matmul rate measured on the same device in the same
process: no epoch can beat it. `step_gemms` runs just the matrix products of
the update step, at the step's own shapes, to separate "matmuls at these shapes
are slower than a big square one" from "everything that is not a matmul".
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable, Sequence
from typing import cast

import jax
import jax.numpy as jnp
import numpy as np

from jaxmlp.model import LAYER_SIZES


def matmul(a: jax.Array, b: jax.Array) -> jax.Array:
    return a @ b


def matmul_flops_per_second(device: jax.Device, n: int = 2048, repeats: int = 10) -> float:
    """Median float32 FLOP/s of an ``n x n`` jitted matmul on ``device`` (compiled and warmed up first)."""
    a = jax.device_put(jnp.asarray(np.random.default_rng(0).standard_normal((n, n)), jnp.float32), device)
    f = jax.jit(matmul).lower(a, a).compile()
    jax.block_until_ready(f(a, a))  # type: ignore[no-untyped-call]  # unannotated in jax
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(f(a, a))  # type: ignore[no-untyped-call]  # unannotated in jax
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def step_gemm_shapes(
    batch_size: int, sizes: Sequence[int] = LAYER_SIZES
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (lhs, rhs) shapes of every matrix product in one update step at ``batch_size``.

    Forward ``a @ w.T`` per layer; weight gradients ``d.T @ a`` per layer; input
    gradients ``d @ w`` for every layer but the first (its input is the data).
    """
    shapes = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        shapes.append(((batch_size, n_in), (n_in, n_out)))  # forward
        shapes.append(((n_out, batch_size), (batch_size, n_in)))  # weight gradient
    for n_in, n_out in zip(sizes[1:-1], sizes[2:]):
        shapes.append(((batch_size, n_out), (n_out, n_in)))  # input gradient
    return shapes


def gemm_flops(shapes: Iterable[tuple[tuple[int, int], tuple[int, int]]]) -> int:
    return sum(2 * a[0] * a[1] * b[1] for a, b in shapes)


def _step_gemms(weights: Sequence[jax.Array], xs: jax.Array) -> jax.Array:
    """For each batch in ``xs`` ``(S, B, 784)``, the step's matrix products (and nothing else)."""

    def body(carry: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
        a, acc = x, carry
        activations = []
        for w in weights:  # forward
            activations.append(a)
            a = a @ w.T
        d = a
        for w, a_in in zip(reversed(weights), reversed(activations)):
            acc = acc + (d.T @ a_in)[0, 0]  # weight gradient
            if a_in is not x:
                d = d @ w  # input gradient
        return acc, None

    return cast(jax.Array, jax.lax.scan(body, jnp.float32(0), xs)[0])


step_gemms = jax.jit(_step_gemms)

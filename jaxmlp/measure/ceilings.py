"""This machine's two ceilings for the roofline: the FLOP rate and the memory bandwidth (docs/questions/floor.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxmlp.measure import floor

MATMUL_SIZES = (1024, 2048, 3072)
"""The square float32 products whose best rate is the FLOP ceiling."""
STREAM_ELEMENTS = 2**25
"""float32 elements per STREAM array: 128 MiB each, far beyond any CPU's caches."""


def flop_ceiling(device: Any, sizes: Sequence[int] = MATMUL_SIZES, repeats: int = 5) -> dict[str, Any]:
    """XLA's float32 matmul rate at each size (FLOP/s, median of ``repeats``), and the best: the FLOP ceiling."""
    rates = {}
    for n in sizes:
        product = floor.gemm("xla", "f32", (n, n, n), device)
        rates[f"{n}x{n}x{n}"] = floor.gemm_flops_per_second(product, repeats, floor.held_bytes(device))
    best = max(rates, key=lambda k: rates[k])
    return {"flops_per_second": rates[best], "best_shape": best, "matmul_flops_per_second": rates}


STREAM_KERNELS = ("scale", "triad")
"""XLA's STREAM kernels, scale (2 arrays moved) and triad (3); a plain copy is no kernel in XLA."""


def xla_stream(kernel: str, device: Any, n: int = STREAM_ELEMENTS) -> tuple[Callable[[int], Any], int]:
    """``(run, bytes)``: ``run(k)`` calls ``kernel`` on ``device`` k times, one wait; ``bytes``: one call's traffic."""
    import jax

    rng = np.random.default_rng(0)
    b, c = (jax.device_put(rng.standard_normal(n, np.float32), device) for _ in range(2))
    s = np.float32(3.0)
    if kernel == "scale":
        return floor.dispatched(jax.jit(lambda c: s * c).lower(c).compile(), (c,)), 2 * 4 * n
    if kernel == "triad":
        return floor.dispatched(jax.jit(lambda b, c: b + s * c).lower(b, c).compile(), (b, c)), 3 * 4 * n
    raise ValueError(f"no STREAM kernel {kernel!r}: choose one of {', '.join(STREAM_KERNELS)}")


def stream_bytes_per_second(run: Callable[[int], Any], nbytes: int, device: Any, repeats: int) -> float:
    """Bytes per second of a `xla_stream` kernel: rounds of `floor.calls_per_round` calls, the median round."""
    calls = floor.calls_per_round(run, nbytes, floor.held_bytes(device))
    return calls * nbytes / floor.median_seconds(lambda: run(calls), repeats)


def empty_scan(steps: int, device: Any) -> tuple[Callable[[int], Any], Any]:
    """``(run, compiled)``: an empty `lax.scan` of ``steps`` iterations that XLA can neither drop nor fold."""
    import jax
    import jax.numpy as jnp

    xs = jax.device_put(np.arange(steps, dtype=np.float32), device)

    def loop(xs: Any) -> Any:
        return jax.lax.scan(lambda carry, x: (carry + x, None), jnp.float32(0), xs)[0]

    compiled = jax.jit(loop).lower(xs).compile()
    return floor.dispatched(compiled, (xs,)), compiled


def _numpy_kernels(n: int) -> dict[str, tuple[Callable[[], Any], int]]:
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n, np.float32) for _ in range(3))
    s = np.float32(3.0)

    def triad() -> None:
        np.multiply(c, s, out=a)
        np.add(a, b, out=a)

    return {
        "copy": ((lambda: np.copyto(a, c)), 2 * 4 * n),
        "scale": ((lambda: np.multiply(c, s, out=b)), 2 * 4 * n),
        "triad": (triad, 3 * 4 * n),
    }


def _rates(kernels: dict[str, tuple[Callable[[], Any], int]], repeats: int) -> dict[str, float]:
    """Bytes per second of each kernel (its bytes moved over its median time)."""
    return {name: nbytes / floor.median_seconds(call, repeats) for name, (call, nbytes) in kernels.items()}


def bandwidth(device: Any, n: int = STREAM_ELEMENTS, repeats: int = 5) -> dict[str, Any]:
    """Bytes per second of each STREAM kernel in XLA and in numpy; the best of XLA's is the bandwidth ceiling."""
    xla = {
        kernel: stream_bytes_per_second(*xla_stream(kernel, device, n), device, repeats) for kernel in STREAM_KERNELS
    }
    numpy = _rates(_numpy_kernels(n), repeats)
    best = max(xla, key=lambda k: xla[k])
    return {
        "bytes_per_second": xla[best],
        "best_kernel": best,
        "xla_bytes_per_second": xla,
        "numpy_bytes_per_second": numpy,
        "stream_elements": n,
    }


def measure(device: Any, repeats: int = 5) -> dict[str, Any]:
    """Both ceilings of ``device``."""
    return {**flop_ceiling(device, repeats=repeats), **bandwidth(device, repeats=repeats)}

"""What the hardware can do: the rate of a matrix product in each library and the step's own (docs/methods/floor.md)."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from jaxmlp import compat, registry
from jaxmlp.model import LAYER_SIZES, precision_scope

Shape = tuple[int, int, int]
"""A product's ``(m, k, n)``: an ``m x k`` matrix times a ``k x n`` one."""

SQUARE: Shape = (2048, 2048, 2048)
"""The big square product whose float32 rate turns an epoch's FLOPs into its floor."""

ROUND_SECONDS = 0.02
"""How long one timed round of a product's calls lasts at least (`calls_per_round`; docs/methods/floor.md)."""

PEAK_SQUARES = (4096, 8192)
"""Larger square products an accelerator's floor also measures (docs/results/accelerator.md)."""

HELD_BYTES = 2**31
"""At most how many bytes of results one round keeps until its wait (`calls_per_round`)."""

REPEAT_SECONDS = 30.0
"""A product's timed rounds stop once they have lasted this long together, after `MIN_REPEATS` at least."""
MIN_REPEATS = 3
"""The fewest timed rounds a median is taken of."""


# --- one product in each library ----------------------------------------------------------------------------


def gemm_shapes(batch_size: int = registry.BATCH_SIZE, sizes: Sequence[int] = LAYER_SIZES) -> list[Shape]:
    """The floor's products: `SQUARE`, then each layer's forward product at ``batch_size``."""
    return [SQUARE, *((batch_size, n_in, n_out) for n_in, n_out in zip(sizes[:-1], sizes[1:]))]


def peak_shapes() -> list[Shape]:
    """The `PEAK_SQUARES` products (an accelerator's)."""
    return [(n, n, n) for n in PEAK_SQUARES]


def shape_label(shape: Shape) -> str:
    """``128x784x512``: how a shape reads as a benchmark parameter."""
    return "x".join(map(str, shape))


def parse_shape(label: str) -> Shape:
    m, k, n = (int(part) for part in label.split("x"))
    return m, k, n


def unavailable(library: str, precision: str, platform: str) -> str | None:
    """Why ``library`` cannot multiply in ``precision`` on ``platform`` (a JAX backend), or None where it can."""
    if precision in registry.GPU_ONLY_PRECISIONS and platform != "gpu":
        return f"not available on {platform}: {precision} is a GPU's (its tensor cores)"
    if library == "numpy" and precision == "bf16":
        return "not available in numpy: it has no bfloat16 type"
    if library == "numpy" and platform != "cpu":
        return f"not available in numpy on {platform}: numpy runs on the host"
    if library == "torch":
        try:
            import torch
        except ImportError:
            return "not available: torch is not installed"
        if platform != "cpu" and not torch.cuda.is_available():
            return f"not available in torch on {platform}: torch {torch.__version__} sees no CUDA device"
        if platform == "cpu" and precision == "bf16" and not _torch_has_cpu_bf16(torch):
            return (
                "not available in torch on this CPU: its oneDNN has no bf16 kernels for it "
                "(torch.ops.mkldnn._is_mkldnn_bf16_supported() is False), so its bf16 products take a slow fallback"
            )
    return None


def _torch_has_cpu_bf16(torch: Any) -> bool:
    """Whether torch's CPU bf16 products run in oneDNN's kernels (its own check; True where torch cannot say)."""
    check = getattr(getattr(torch.ops, "mkldnn", None), "_is_mkldnn_bf16_supported", None)
    try:
        return bool(check()) if check is not None else True
    except RuntimeError:
        return True


class Gemm(NamedTuple):
    """One product ready to time: ``run(n)`` computes it ``n``
    times, one wait; ``to_numpy``, ``lhs``, ``rhs`` check it."""

    library: str
    precision: str
    shape: Shape
    run: Callable[[int], Any]
    to_numpy: Callable[[Any], np.ndarray]
    lhs: np.ndarray
    rhs: np.ndarray
    compiled: Any = None
    """XLA's executable of the product (its compiled facts); None for the other libraries."""

    def call(self) -> Any:
        """One product, done."""
        return self.run(1)

    @property
    def result_bytes(self) -> int:
        """The bytes of one result (float32, or bf16 at most as large)."""
        m, _, n = self.shape
        return 4 * m * n

    @property
    def flops(self) -> int:
        m, k, n = self.shape
        return 2 * m * k * n


def _xla(precision: str, a: np.ndarray, b: np.ndarray, device: jax.Device) -> tuple[Any, np.ndarray, np.ndarray]:
    dtype = jnp.bfloat16 if precision == "bf16" else jnp.float32
    x, y = jax.device_put((jnp.asarray(a, dtype), jnp.asarray(b, dtype)), device)
    # bf16 inputs, float32 accumulation and result: the form that reached XLA:CPU's bf16 kernels (a cast inside the
    # program compiled to convert fusions feeding float32 dots instead).
    product = jax.jit(lambda p, q: jnp.matmul(p, q, preferred_element_type=jnp.float32))
    with precision_scope(precision):  # f32: float32 products on every backend, tf32: TF32 passes (as the epochs)
        f = product.lower(x, y).compile()
    return (f, (x, y)), np.asarray(x, np.float64), np.asarray(y, np.float64)


def dispatched(compiled: Callable[..., Any], args: Sequence[Any]) -> Callable[[int], Any]:
    """``run(n)``: ``compiled(*args)`` n times, dispatched back to back, and its last result once all are done."""

    def run(n: int) -> Any:
        outs = [compiled(*args) for _ in range(n)]  # each held: a CPU may run independent calls side by side
        return jax.block_until_ready(outs)[-1]  # type: ignore[no-untyped-call]

    return run


def _torch(
    precision: str, a: np.ndarray, b: np.ndarray, platform: str
) -> tuple[Callable[[int], Any], np.ndarray, np.ndarray]:
    import torch

    from jaxmlp.pipelines import torch_mlp  # torch's threads, device and synchronisation, as the torch epochs have them

    torch_mlp.use_cpu_threads(torch_mlp.cpu_threads())  # the cores XLA's thread pool sizes itself to
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    where = torch_mlp.device_for(platform)
    torch_mlp.allow_tf32(precision == "tf32")  # f32: float32 products (torch's default on a GPU), as XLA's
    x, y = torch_mlp.as_tensor(a, where).to(dtype), torch_mlp.as_tensor(b, where).to(dtype)

    def run(n: int) -> Any:
        for _ in range(n):
            out = torch.matmul(x, y)  # bf16: bf16 inputs and result, float32 accumulation inside the kernel
        torch_mlp.synchronize(where)
        return out

    return run, x.double().cpu().numpy(), y.double().cpu().numpy()


def gemm(library: str, precision: str, shape: Shape, device: jax.Device) -> Gemm:
    """``shape``'s product in ``library`` and ``precision`` on ``device``'s platform; ask `unavailable` first."""
    if (why := unavailable(library, precision, device.platform)) is not None:
        raise ValueError(why)
    m, k, n = shape
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    compiled = None
    if library == "xla":
        (compiled, args), lhs, rhs = _xla(precision, a, b, device)
        run = dispatched(compiled, args)
        to_numpy: Callable[[Any], np.ndarray] = lambda out: np.asarray(out, np.float32)  # noqa: E731
    elif library == "torch":
        run, lhs, rhs = _torch(precision, a, b, device.platform)
        to_numpy = lambda out: out.float().cpu().numpy()  # noqa: E731
    elif library == "numpy":
        run, lhs, rhs = (lambda n: [np.matmul(a, b) for _ in range(n)][-1]), a.astype(np.float64), b.astype(float)
        to_numpy = lambda out: np.asarray(out, np.float32)  # noqa: E731
    else:
        raise ValueError(f"no GEMM library {library!r}: choose from {', '.join(registry.GEMM_LIBRARIES)}")
    return Gemm(library, precision, shape, run, to_numpy, lhs, rhs, compiled)


def median_seconds(call: Callable[[], Any], repeats: int, budget: float = REPEAT_SECONDS) -> float:
    """The median of ``repeats`` timed calls after one untimed call; fewer once they have lasted ``budget`` seconds."""
    call()
    times: list[float] = []
    while len(times) < max(1, repeats):
        if len(times) >= MIN_REPEATS and sum(times) >= budget:
            break
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def held_bytes(device: jax.Device) -> int:
    """How many bytes of results a round may hold on ``device``: `HELD_BYTES`, or a quarter of its free memory."""
    stats = compat.device_memory_stats(device)  # None on the CPU
    if stats and "bytes_limit" in stats:
        free = int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
        return max(1, min(HELD_BYTES, free // 4))
    return HELD_BYTES


def calls_per_round(run: Callable[[int], Any], result_bytes: int, held: int = HELD_BYTES) -> int:
    """How many calls one timed round holds: doubling until it lasts `ROUND_SECONDS`, within ``held`` bytes."""
    most = max(1, held // result_bytes)
    run(1)  # compiled and warm
    calls = 1
    while calls < most:
        start = time.perf_counter()
        run(calls)
        if time.perf_counter() - start >= ROUND_SECONDS:
            break
        calls = min(most, 2 * calls)
    return calls


def per_call(run: Callable[[int], Any], calls: int) -> Callable[[], Any]:
    """A timer target that runs a round of ``calls`` products every ``calls``-th invocation, so each is one's share."""
    count = itertools.count(1)

    def target() -> Any:
        return run(calls) if next(count) % calls == 0 else None

    return target


def gemm_flops_per_second(product: Gemm, repeats: int = 10, held: int = HELD_BYTES) -> float:
    """Median FLOP/s of ``product`` over ``repeats`` timed rounds of `calls_per_round` calls after an untimed one."""
    calls = calls_per_round(product.run, product.result_bytes, held)
    return calls * product.flops / median_seconds(lambda: product.run(calls), repeats)


def floor_rates(
    device: jax.Device, repeats: int = 10, precision: str = "f32", square: Shape = SQUARE
) -> dict[str, float]:
    """The FLOP/s of ``square`` in ``precision`` in each library that can on ``device``'s platform, XLA first."""
    return {
        library: gemm_flops_per_second(gemm(library, precision, square, device), repeats, held_bytes(device))
        for library in registry.GEMM_LIBRARIES
        if unavailable(library, precision, device.platform) is None
    }


def floor_facts(flops: float, rates: Mapping[str, float], median: float | None) -> dict[str, Any]:
    """What an epoch row of ``flops`` (``median`` s; None where not timed) records of its floor in every library."""
    library = max(rates, key=lambda name: rates[name])  # the machine's best, the floor's ceiling
    rate = rates[library]
    seconds = flops / rate
    return {
        "best_floor_library": library,
        "best_matmul_flops_per_second": rate,
        "best_floor_seconds": seconds,
        "best_floor_ratio": None if median is None else median / seconds,
        **{f"{name}_matmul_flops_per_second": r for name, r in rates.items()},
    }


def step_gemm_shapes(
    batch_size: int, sizes: Sequence[int] = LAYER_SIZES
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (lhs, rhs) shapes of every matrix product in one update step at ``batch_size``."""
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

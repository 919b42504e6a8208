"""What the hardware can do: a big square matmul, the same and the MLP's layer products in each library and
precision, and the update step's own matrix products alone."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from benchutil import FLOAT32, measure

from jaxmlp import hlo, registry
from jaxmlp.compat import compiled_facts, cost_analysis
from jaxmlp.measure import ceilings, floor
from jaxmlp.model import LAYER_SIZES, precision_scope
from jaxmlp.pipelines.loaders import as_arrays


def test_matmul(benchmark, sizes, backend, device):
    """The float32 rate that turns an epoch's FLOPs into its floor (2048^3): XLA's product as `floor.floor_rates`
    measures it, with its compiled facts."""
    benchmark.group = f"floor: {backend}"
    product = floor.gemm("xla", "f32", floor.SQUARE, device)  # float32 products on every backend, as f32 epochs'
    np.testing.assert_allclose(
        product.to_numpy(product.call())[:4, :4], product.lhs[:4] @ product.rhs[:, :4], **FLOAT32
    )
    timed_rounds(benchmark, product, sizes, device)
    benchmark.extra_info.update(compiled_facts(product.compiled))


def timed_rounds(benchmark, product, sizes, device) -> None:
    """``product`` timed in rounds of calls dispatched back to back, one wait at a round's end (`floor.per_call`):
    each sample one product's share of its round; its FLOPs and rate (flops / median) in extra_info."""
    calls = floor.calls_per_round(product.run, product.result_bytes, floor.held_bytes(device))
    median = measure(benchmark, floor.per_call(product.run, calls), sizes, iterations=calls)
    benchmark.extra_info.update(
        round_calls=calls, flops=product.flops, flops_per_second=None if median is None else product.flops / median
    )


def test_step_gemms(benchmark, sizes, backend, device, datasets, matmul_rate):
    """An epoch's worth (batch 128) of the step's matrix products, at the step's shapes, and nothing else."""
    benchmark.group = f"floor: {backend}"
    images = as_arrays(datasets.train)[0]
    n_full = len(images) // 128
    xs = jax.device_put(images[: n_full * 128].reshape(n_full, 128, -1), device)
    rng = np.random.default_rng(0)
    shapes = [(n_out, n_in) for n_in, n_out in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:])]
    weights = jax.device_put([jnp.asarray(rng.standard_normal(s) * 1e-2, jnp.float32) for s in shapes], device)
    with precision_scope("f32"):
        f = floor.step_gemms.lower(weights, xs).compile()
    flops = n_full * floor.gemm_flops(floor.step_gemm_shapes(128))
    if backend == "cpu":  # XLA:CPU counts a scan's body once; XLA:GPU's count of its cuBLAS calls varies with the
        assert cost_analysis(f).get("flops") in (None, flops / n_full)  # precision (seen: 0.43x to 1.01x on an H200)
    # Checked once against the same products in numpy, on two batches.
    with precision_scope("f32"):
        two = floor.step_gemms(weights, xs[:2])
    expected = _step_gemms_numpy([np.asarray(w) for w in weights], np.asarray(xs[:2]))
    np.testing.assert_allclose(two, expected, rtol=FLOAT32["rtol"])
    median = measure(benchmark, lambda: jax.block_until_ready(f(weights, xs)), sizes, rounds=sizes["epoch_rounds"])
    benchmark.extra_info.update(
        **compiled_facts(f),
        flops=flops,
        steps=n_full,
        floor_seconds=flops / matmul_rate,
        floor_ratio=None if median is None else median / (flops / matmul_rate),
    )


def _step_gemms_numpy(weights, xs):
    acc = np.float64(0)
    for x in xs.astype(np.float64):
        a, activations = x, []
        for w in weights:
            activations.append(a)
            a = a @ w.T
        d = a
        for i in reversed(range(len(weights))):
            acc += (d.T @ activations[i])[0, 0]
            if i > 0:
                d = d @ weights[i]
    return acc


@pytest.mark.parametrize(
    "shape", [floor.shape_label(s) for s in (*floor.gemm_shapes(registry.BATCH_SIZE), *floor.peak_shapes())]
)
@pytest.mark.parametrize("precision", registry.GEMM_PRECISIONS)
@pytest.mark.parametrize("library", registry.GEMM_LIBRARIES)
def test_gemm(benchmark, sizes, backend, device, library, precision, shape):
    """One product (2048^3, or a layer's at batch 128) in one library and precision: its rate, flops / median."""
    if why := floor.unavailable(library, precision, device.platform):
        pytest.skip(why)  # no row, and the reason in the run's output (numpy has no bfloat16)
    if floor.parse_shape(shape) in floor.peak_shapes() and device.platform == "cpu":
        pytest.skip("the larger squares find an accelerator's peak; a CPU's 2048^3 already saturates its cores")
    if sizes.get("floor_square") and floor.parse_shape(shape) == floor.SQUARE:
        pytest.skip(
            "a smoke run checks each library and precision on the layers' products (a bf16 2048^3 takes minutes "
            "on a CPU without bf16 instructions)"
        )
    benchmark.group = f"floor gemm: {backend}, {shape}"
    product = floor.gemm(library, precision, floor.parse_shape(shape), device)
    # Checked once, outside the rounds (this call also compiles and warms up), against float64 products of the same
    # input values; bf16 results are rounded to 8 bits of mantissa (torch) or accumulated from bf16 products, TF32
    # products have 10.
    tolerance = FLOAT32 if precision == "f32" else {"rtol": 2e-2, "atol": 2e-2}
    scale = np.sqrt(product.shape[1])  # an entry is a sum of k unit-variance products: its size grows as sqrt(k)
    np.testing.assert_allclose(
        product.to_numpy(product.call())[:4, :4] / scale, (product.lhs[:4] @ product.rhs[:, :4]) / scale, **tolerance
    )
    timed_rounds(benchmark, product, sizes, device)
    m, k, n = product.shape
    benchmark.extra_info.update(library=library, precision=precision, m=m, k=k, n=n)


@pytest.mark.parametrize("kernel", ceilings.STREAM_KERNELS)
def test_bandwidth(benchmark, sizes, backend, device, kernel):
    """The memory bandwidth: a STREAM kernel in XLA over float32 arrays far larger than any cache (the roofline's
    other ceiling), in rounds of calls dispatched back to back."""
    benchmark.group = f"bandwidth: {backend}"
    n = sizes["stream_elements"]
    run, nbytes = ceilings.xla_stream(kernel, device, n)
    out = np.asarray(run(1)[:4])
    assert np.all(np.isfinite(out))  # computed, once, outside the rounds (also compiles and warms up)
    calls = floor.calls_per_round(run, nbytes, floor.held_bytes(device))
    median = measure(benchmark, floor.per_call(run, calls), sizes, iterations=calls)
    benchmark.extra_info.update(
        kernel=kernel,
        elements=n,
        bytes=nbytes,
        round_calls=calls,
        bytes_per_second=None if median is None else nbytes / median,
    )


def test_empty_scan(benchmark, sizes, backend, device, datasets):
    """The loop's own cost: an empty `lax.scan` as long as an epoch (a step for each batch of 128), in rounds of
    calls dispatched back to back (a loop's time, not the host's round trip); its cost a step in extra_info."""
    benchmark.group = f"loop: {backend}"
    steps = -(-len(datasets.train) // registry.BATCH_SIZE)
    run, compiled = ceilings.empty_scan(steps, device)
    assert "while" in hlo.operations(compiled.as_text())  # a real loop, not folded away
    assert float(run(1)) == steps * (steps - 1) / 2  # computed, once, outside the rounds (also warms up)
    calls = floor.calls_per_round(run, 4, floor.held_bytes(device))
    median = measure(benchmark, floor.per_call(run, calls), sizes, iterations=calls)
    benchmark.extra_info.update(
        steps=steps, round_calls=calls, loop_step_seconds=None if median is None else median / steps
    )

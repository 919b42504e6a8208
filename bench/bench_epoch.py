"""One full training epoch per input pipeline, precision and backend, against the compute floor."""

import jax
import numpy as np
import pytest
from benchutil import epoch_rounds, measure
from jax import random

from jaxmlp import model, registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines.epoch_base import BF16_TOLERANCE, check_backend
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import as_arrays, missing_package
from jaxmlp.pipelines.steps import epoch_steps, images_for, jit_step, padded_batches, scan_unroll, slices

EPOCH_BOUND = BF16_TOLERANCE  # of the params after an epoch whose products are not float32 (bf16, tf32)


@pytest.fixture(scope="session")
def reference_epochs(datasets, device):
    """The epoch every pipeline must compute, per precision: the step of that precision over in-order batches
    (f32: the tutorial's jitted update), computed once a session."""
    images, labels = as_arrays(datasets.train)
    targets = np.asarray(model.one_hot(labels, 10))
    done = {}

    def of(precision):
        if precision not in done:
            step, x = jit_step(precision), images_for(images, precision)
            with jax.default_device(device), model.precision_scope(precision):  # as the pipelines compile it
                params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
                for s in slices(len(images), 128):
                    params = step(params, x[s], targets[s], model.STEP_SIZE)
                done[precision] = jax.block_until_ready(params)
        return done[precision]

    return of


@pytest.mark.parametrize("precision", registry.PRECISIONS)
def test_epoch(
    benchmark, sizes, backend, device, datasets, matmul_rate, reference_epochs, pipeline, workers, precision
):
    if why := missing_package(pipeline):
        pytest.skip(why)
    try:  # before the reference epoch: a rung of another backend skips at once
        check_backend(pipeline, device.platform)
    except JaxmlpError as e:
        pytest.skip(str(e))
    if precision != "f32" and workers:
        pytest.skip("loader workers do not touch the step's precision: measured in f32 only")
    benchmark.group = f"epoch: batch 128, {backend}"
    reference = reference_epochs(precision)
    with jax.default_device(device):
        params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
        jax.clear_caches()  # the reference epoch compiled the same step: measure a real compile
        try:
            epoch = make_epoch(
                pipeline, datasets.train, batch_size=128, workers=workers, device=device, precision=precision
            )
            compile_seconds = epoch.compile(params)
        except JaxmlpError as e:  # torch.compile where it cannot work here, torch beside a TPU: the row says why
            pytest.skip(str(e))
        # Checked once (the first epoch, which also warms up), outside the rounds; torch's within its tolerance. f32
        # is float32 throughout on every device (`model.matmul_precision`); in bf16 and tf32 the products' rounding
        # and the order of the sums differ between programs (torch's autocast rounds its own way) and an epoch of
        # SGD amplifies it: within EPOCH_BOUND then.
        tolerance = epoch.tolerance if precision == "f32" else max(epoch.tolerance, EPOCH_BOUND)
        assert model.max_relative_difference(epoch.local(epoch(params)), reference) < tolerance
        params = epoch.place(params)  # once: no round's time holds the copy
        median = measure(benchmark, lambda: epoch(params), sizes, **epoch_rounds(sizes, pipeline))
    floor = epoch.flops / matmul_rate
    benchmark.extra_info.update(
        **epoch.facts(),
        **epoch.training(),
        bytes_accessed=epoch.bytes_accessed,
        precision=precision,
        compile_seconds=compile_seconds,
        steps=epoch.n_steps,
        samples=epoch.n_samples,
        flops=epoch.flops,
        xla_epoch_flops=epoch.xla_flops,  # XLA's count, beside the model's (`flops`, the floor's)
        matmul_flops_per_second=matmul_rate,
        floor_seconds=floor,
        floor_ratio=None if median is None else median / floor,
        samples_per_second=None if median is None else epoch.n_samples / median,
    )


@pytest.mark.parametrize("variant", registry.BF16_STEP.variants)
def test_bf16_step(benchmark, sizes, backend, device, datasets, reference_epochs, variant):
    """The scan epoch in bf16 with each form of the mixed-precision step (`model.BF16_STEPS`): a backend trains with
    the faster (`model.BF16_STEP_BY_BACKEND`), and this says which it is here."""
    benchmark.group = f"bf16 step: batch 128, {backend}"
    images, labels = as_arrays(datasets.train)
    x, y = images_for(images, "bf16"), np.asarray(model.one_hot(labels, 10))
    with jax.default_device(device):
        params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
        xs, ys, factors = jax.device_put(padded_batches(x, y, 128), device)
        unroll = scan_unroll(device.platform, "bf16")
        program = epoch_steps.lower(
            params, xs, ys, factors, model.STEP_SIZE, precision="bf16", bf16_step=variant, unroll=unroll
        ).compile()

        def epoch():
            return jax.block_until_ready(program(params, xs, ys, factors, model.STEP_SIZE))

        assert model.max_relative_difference(epoch(), reference_epochs("bf16")) < EPOCH_BOUND
        median = measure(benchmark, epoch, sizes, rounds=sizes["epoch_rounds"])
    benchmark.extra_info.update(
        precision="bf16",
        bf16_step=variant,
        scan_unroll=unroll,
        chosen=variant == model.bf16_step_for(device.platform),
        samples_per_second=None if median is None else len(x) / median,
    )

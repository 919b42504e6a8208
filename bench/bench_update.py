"""The SGD update step: jitted vs eager (no jit), and what dispatch alone costs."""

import time

import jax
import numpy as np
import pytest
from benchutil import measure
from jax import random

from jaxmlp import model
from jaxmlp.compat import compiled_facts, cost_analysis
from jaxmlp.registry import UPDATE

JIT, JIT_DISPATCH, EAGER = UPDATE.variants


@pytest.fixture(scope="module")
def batches(datasets):
    from jaxmlp.pipelines.loaders import as_arrays

    images, labels = as_arrays(datasets.train)
    return images, np.asarray(model.one_hot(labels[:2048], 10))


def inputs(batches, batch_size, device):
    images, targets = batches
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    return jax.device_put((params, images[:batch_size], targets[:batch_size]), device)


@pytest.mark.parametrize("variant", UPDATE.variants)
def test_update(benchmark, sizes, backend, device, batches, batch_size, variant):
    benchmark.group = f"update: batch {batch_size}, {backend}"
    params, x, y = inputs(batches, batch_size, device)
    with jax.default_device(device):
        if variant == EAGER:
            step = model.sgd_update  # op by op, each primitive dispatched on its own
        else:
            jax.clear_caches()  # a real compile, not a cache hit
            start = time.perf_counter()
            lowered = model.update.lower(params, x, y)
            lowered_at = time.perf_counter()
            step = lowered.compile()
            benchmark.extra_info["lower_seconds"] = lowered_at - start  # trace and lower to StableHLO
            benchmark.extra_info["compile_seconds"] = time.perf_counter() - lowered_at  # XLA's compile
            benchmark.extra_info.update(compiled_facts(step), flops=cost_analysis(step).get("flops"))

        # Checked once, outside the rounds, against the tutorial's math.
        expected = model.update(params, x, y)
        assert model.max_relative_difference(step(params, x, y), expected) < 1e-5

        if variant == JIT_DISPATCH:
            # Time the call only; the previous call's result is waited for in the (untimed) setup.
            pending = []

            def setup():
                if pending:
                    jax.block_until_ready(pending.pop())
                return (), {}

            def target():
                pending.append(step(params, x, y))

            measure(benchmark, target, sizes, setup=setup)
            jax.block_until_ready(pending)
        else:
            measure(benchmark, lambda: jax.block_until_ready(step(params, x, y)), sizes)

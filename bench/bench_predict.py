"""Prediction over a batch: vmap(predict) vs a Python loop over predict vs jit(vmap(predict))."""

import jax
import jax.numpy as jnp
import pytest
from benchutil import exact_float32, measure
from jax import random

from jaxmlp import model
from jaxmlp.compat import compiled_facts
from jaxmlp.registry import PREDICT

VMAP, LOOP, JIT_VMAP = PREDICT.variants


def loop_predict(params, images):
    """What vmap replaces: predict image by image, stacked."""
    return jnp.stack([model.predict(params, image) for image in images])


VARIANTS = {
    VMAP: model.batched_predict,
    LOOP: loop_predict,
    JIT_VMAP: jax.jit(model.batched_predict),
}


@pytest.fixture(scope="module")
def images(datasets):
    from jaxmlp.pipelines.loaders import as_arrays

    return as_arrays(datasets.train)[0]


@pytest.mark.parametrize("variant", PREDICT.variants)
def test_predict(benchmark, sizes, backend, device, images, batch_size, variant):
    benchmark.group = f"predict: batch {batch_size}, {backend}"
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    params, x = jax.device_put((params, images[:batch_size]), device)
    predict = VARIANTS[variant]
    if variant == JIT_VMAP:
        compiled = predict.lower(params, x).compile()
        benchmark.extra_info.update(compiled_facts(compiled))
        predict = compiled
    with jax.default_device(device):
        # Checked once (which also compiles), outside the rounds, against jit(vmap(predict)).
        out = jax.block_until_ready(predict(params, x))
        assert out.shape == (batch_size, 10)
        bound = 1e-5 if exact_float32(device) else 5e-2  # a GPU's TF32 passes differ from eager ops' more
        assert model.max_relative_difference(out, VARIANTS[JIT_VMAP](params, x)) < bound
        measure(benchmark, lambda: jax.block_until_ready(predict(params, x)), sizes)

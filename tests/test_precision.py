"""The precision axis: the mixed-precision (bf16) step is the f32 step's math with bfloat16 products, every pipeline
computes the same bf16 epoch, its accuracy after the tutorial's 8 epochs is f32's within 0.3 point on real MNIST
(its first 15,000 training images), and a precision a backend lacks is one line."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import random

from jaxmlp import model
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.train import TrainConfig, train
from jaxmlp.model import max_relative_difference
from jaxmlp.pipelines import data
from jaxmlp.pipelines.epoch_base import BF16_TOLERANCE, check_precision
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import missing_package
from jaxmlp.pipelines.steps import images_for
from jaxmlp.registry import PIPELINE_BACKENDS, PIPELINES


@pytest.fixture(scope="module")
def params():
    return model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))


def test_the_bf16_gradient_is_the_f32_gradient_within_bfloat16_rounding(params):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (32, 784)).astype(np.float32)
    y = np.asarray(model.one_hot(rng.integers(0, 10, 32), 10))
    exact = jax.grad(model.loss)(params, x, y)
    mixed = jax.grad(model.loss_bf16)(params, x, y)
    assert all(leaf.dtype == jnp.float32 for leaf in jax.tree_util.tree_leaves(mixed))  # float32 master gradients
    assert 1e-4 < max_relative_difference(mixed, exact) < 0.15  # rounded (so not the f32 step), yet the same math


def test_bf16_images_are_exact_and_made_once():
    pixels = np.arange(256, dtype=np.float32)[None, :]
    kept = images_for(pixels, "bf16")
    assert kept.dtype == jnp.bfloat16
    np.testing.assert_array_equal(kept.astype(np.float32), pixels)  # 0-255 are exact in bfloat16
    assert images_for(pixels, "f32").dtype == np.float32


def test_tf32_off_a_gpu_is_one_line():
    with pytest.raises(JaxmlpError, match="--precision tf32 needs a GPU backend"):
        check_precision("tf32", "cpu")
    assert check_precision("bf16", "cpu") == "bf16"


def test_f32_is_float32_products_on_every_backend_and_tf32_a_gpus(params):
    """f32 compiles under JAX's ``highest`` (a GPU at JAX's default takes TF32 passes, a TPU one bf16 pass), so an
    f32 row is float32 wherever it ran; bf16 keeps the caller's setting; the floor has tf32 on a GPU only."""
    import re

    from jaxmlp.measure import floor
    from jaxmlp.pipelines.steps import CompiledStep

    seen = {}
    for precision in ("f32", "bf16"):
        step = CompiledStep(precision=precision)
        step.compile(params, [32])
        text = step._executables[(32, 784)].as_text()
        seen[precision] = set(re.findall(r"operand_precision=\{([^}]*)\}", text))
    assert seen == {"f32": {"highest,highest"}, "bf16": set()}
    assert model.matmul_precision("tf32") == "tensorfloat32"
    assert "tf32 is a GPU's" in floor.unavailable("xla", "tf32", "cpu")
    assert "tf32 is a GPU's" in floor.unavailable("torch", "tf32", "tpu")
    assert floor.unavailable("xla", "f32", "cpu") is None


@pytest.fixture(scope="module")
def bf16_scan(params):
    """A small synthetic split and the bf16 ``scan`` epoch of it, computed once for every pipeline's test."""
    split = data.SyntheticMNIST(train=True, size=1000, transform=data.FlattenAndCast())
    return split, make_epoch("scan", split, precision="bf16")(params)


def test_the_bf16_scan_epoch_is_not_the_f32_one(bf16_scan, params):
    split, expected = bf16_scan
    f32 = make_epoch("scan", split)(params)
    assert max_relative_difference(expected, f32) > 1e-4  # it is not the f32 epoch


@pytest.mark.parametrize(
    "pipeline", [p for p in PIPELINES if p not in ("torch_compile", "scan") and p not in PIPELINE_BACKENDS]
)
def test_every_pipeline_computes_the_bf16_scan_epoch(pipeline, params, bf16_scan):
    if why := missing_package(pipeline):
        pytest.skip(why)
    split, expected = bf16_scan
    epoch = make_epoch(pipeline, split, precision="bf16")
    epoch.compile(params)
    got = epoch.local(epoch(params))
    assert max_relative_difference(got, expected) < BF16_TOLERANCE


TRAINED_ON = 15_000
"""Training images of the accuracy test: a quarter of MNIST's, 8 epochs in each precision in a quarter of the time."""


def test_bf16_accuracy_after_8_epochs_is_f32s_within_0_3_point(mnist_dir):
    """The tutorial's 8 epochs on real MNIST's first `TRAINED_ON` training images with the scan pipeline, in each
    precision, scored on the whole test split (10,000 images: a point is 100 of them)."""
    datasets = data.load_datasets("mnist", str(mnist_dir), limit=TRAINED_ON)
    accuracy = {}
    for precision in ("f32", "bf16"):
        config = TrainConfig(pipeline="scan", precision=precision, backend="cpu", limit=TRAINED_ON)
        result = train(config, datasets)
        assert result.metadata["precision"] == precision
        accuracy[precision] = result.records[-1].test_accuracy
    print(f"test accuracy after 8 epochs on {TRAINED_ON} images: {accuracy}")
    assert accuracy["f32"] > 0.92  # 0.933 on these images (the tutorial's 60,000 reach about 0.966)
    assert abs(accuracy["bf16"] - accuracy["f32"]) <= 0.003, accuracy

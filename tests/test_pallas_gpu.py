"""The `pallas` pipeline's GPU form (`jaxmlp.pipelines.pallas_gpu`): run here in Pallas's interpreter against the
step's loop and the scan epoch, and lowered through Pallas's Triton lowering for a CUDA GPU (XLA's compile of the
Triton kernel, and its run, need the GPU)."""

import jax
import numpy as np
import pytest
from jax import random
from test_pallas import check_the_steps  # the reference the TPU kernel's tests hold

from jaxmlp import model
from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines import data, pallas_gpu, tolerances
from jaxmlp.pipelines.array_epochs import PallasGpuEpoch
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import as_arrays


def gpu_epoch(images, labels, precision, batch_size=128):
    """The GPU kernel's epoch over ``images`` in the interpreter."""
    return PallasGpuEpoch(
        "pallas", images, labels, batch_size, model.STEP_SIZE, jax.devices()[0], precision, interpret=True
    )


@pytest.fixture(scope="module")
def params():
    return model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_the_gpu_kernel_computes_the_steps_epoch_and_keeps_the_last_smaller_batch(params, precision):
    """Three steps (the last of 40 images) in the interpreter: the step's loop's params within the kernel's bound;
    without the last batch far from them."""
    images, labels = as_arrays(data.SyntheticMNIST(size=2 * 128 + 40))
    epoch = gpu_epoch(images, labels, precision)
    assert epoch.shape == pallas_gpu.layout(len(images), 128, 784)
    assert (epoch.shape.steps, epoch.shape.features, epoch.shape.classes) == (3, 832, 16)
    assert epoch.compile(params) > 0
    result = epoch(params)
    check_the_steps(epoch, result, images, labels, precision, params)
    assert epoch.training()["pallas_form"].startswith("triton, 1 program")
    assert epoch.bytes_accessed > epoch.n_samples * 784 * epoch.xs.dtype.itemsize and epoch.flops > 0


def lowered(params, precision):
    """The GPU kernel's epoch lowered for a CUDA GPU here (Pallas's Triton lowering), as text."""
    shape = pallas_gpu.layout(300, 128, 784)
    dtype = jax.numpy.bfloat16 if precision == "bf16" else np.float32
    x = jax.ShapeDtypeStruct((shape.steps * shape.batch, shape.features), dtype)
    y = jax.ShapeDtypeStruct((shape.steps * shape.batch, shape.classes), jax.numpy.bfloat16)
    call = pallas_gpu.epoch_call(shape, model.STEP_SIZE, precision)
    return call.trace(params, x, y).lower(lowering_platforms=("cuda",)).as_text()


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_the_gpu_kernel_lowers_through_tritons_lowering(params, precision):
    """The kernel as a CUDA GPU's program, lowered here (every load, store and product in Triton's shapes); XLA's
    compile of it and its run need the GPU."""
    text = lowered(params, precision)
    assert text.count("__gpu$xla.gpu.triton") == 1  # one kernel: the whole epoch
    assert "barrier" in text  # between the step's phases (the interpreter's run has none: one thread)


def test_tf32_is_the_kernels_own_products_not_f32s(params):
    """tf32 takes TF32 passes (`pallas_gpu.DOT_PRECISION`), f32 IEEE float32: two programs."""
    assert pallas_gpu.DOT_PRECISION["f32"] == jax.lax.Precision.HIGHEST
    assert lowered(params, "tf32") != lowered(params, "f32")


def test_a_batch_triton_cannot_tile_and_a_cpu_are_refused_in_one_line():
    images, labels = as_arrays(data.SyntheticMNIST(size=256))
    with pytest.raises(JaxmlpError, match=r"^the pallas pipeline on a GPU takes a batch size that is a power of two"):
        gpu_epoch(images, labels, "f32", batch_size=100)
    with pytest.raises(JaxmlpError) as refused:
        make_epoch("pallas", data.SyntheticMNIST(size=256))
    assert "\n" not in str(refused.value) and "TPU or GPU host" in str(refused.value)


@pytest.mark.mnist
def test_on_mnist_32_steps_match_the_scan_epoch(mnist, params):
    """The first 32 batches of real MNIST in f32: the GPU kernel's params within the float32 bound of the scan
    epoch's, the test accuracy the same to 0.1 point."""
    images, labels = as_arrays(mnist.train)
    images, labels = images[: 32 * 128], labels[: 32 * 128]
    result = gpu_epoch(images, labels, "f32")(params)
    split = data.ArrayMNIST(mnist.train.data[: 32 * 128].numpy(), labels)
    reference = make_epoch("scan", split)(params)
    assert model.max_relative_difference(result, reference) < tolerances.TOLERANCE
    test_images, test_labels = as_arrays(mnist.test)
    targets = model.one_hot(test_labels, 10)
    accuracy = [float(model.evaluate(p, test_images, targets).accuracy) for p in (result, reference)]
    assert abs(accuracy[0] - accuracy[1]) <= 1e-3 and accuracy[0] > 0.7

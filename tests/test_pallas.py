"""The `pallas` pipeline: the whole epoch as one Pallas kernel, run here in Pallas's interpreter (a TPU runs it
compiled), against the step's loop and the scan epoch."""

import jax
import numpy as np
import pytest
from jax import random

from jaxmlp import model
from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines import data, pallas_epoch, tolerances
from jaxmlp.pipelines.array_epochs import PallasEpoch
from jaxmlp.pipelines.epoch_base import BF16_TOLERANCE
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import as_arrays
from jaxmlp.pipelines.steps import images_for, jit_step, slices


def kernel_epoch(images, labels, precision, batch_size=128, form=None):
    """The pallas epoch over ``images`` in the interpreter (in ``form``; None: the precision's)."""
    return PallasEpoch(
        "pallas", images, labels, batch_size, model.STEP_SIZE, jax.devices()[0], precision, interpret=True, form=form
    )


def steps_by_hand(images, labels, precision, params, batch_size=128):
    """The reference: the step of ``precision`` over in-order batches, the last one smaller."""
    x, y = images_for(images, precision), np.asarray(model.one_hot(labels, 10))
    with model.precision_scope(precision):
        step = jit_step(precision)
        for s in slices(len(x), batch_size):
            params = step(params, x[s], y[s], model.STEP_SIZE)
    return params


def check_the_steps(epoch, result, images, labels, precision, params):
    """``result`` (``epoch`` of ``params``) is the steps' epoch, within the epoch's tolerance; without its last,
    smaller batch the params are far from it (the padding rows are not a batch of their own)."""
    reference = steps_by_hand(images, labels, precision, params)
    assert model.max_relative_difference(result, reference) < epoch.tolerance
    assert epoch.tolerance == (BF16_TOLERANCE if precision == "bf16" else tolerances.TOLERANCE)
    full = len(images) // 128 * 128
    without_last = steps_by_hand(images[:full], labels[:full], precision, params)
    assert model.max_relative_difference(without_last, reference) > 10 * model.max_relative_difference(
        result, reference
    )
    assert [p[0].shape for p in result] == [(512, 784), (512, 512), (10, 512)]


@pytest.fixture(scope="module")
def params():
    return model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))


@pytest.fixture(scope="module")
def synthetic():
    return as_arrays(data.SyntheticMNIST(size=3 * 128 + 40))


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_the_kernel_computes_the_steps_epoch_and_keeps_the_last_smaller_batch(synthetic, params, precision):
    images, labels = synthetic
    epoch = kernel_epoch(images, labels, precision)
    assert epoch.shape.steps == 4 and epoch.shape.samples == len(images)
    assert epoch.compile(params) > 0
    result = epoch(params)
    held = pallas_epoch.kernel_params(params, epoch.shape.features)
    n_params = sum(int(p.size) for p in held)
    cost = pallas_epoch.cost(epoch.shape, n_params, epoch.xs.dtype.itemsize, epoch.form)
    assert epoch.bytes_accessed == cost.bytes_accessed
    form = {"bf16": "out-in+copies", "f32": "out-in"}[precision]  # pallas_epoch.FORMS
    assert epoch.flops > 0 and epoch.training() == {
        **({"bf16_step": "vjp"} if precision == "bf16" else {}),
        "pallas_form": form,
    }
    check_the_steps(epoch, result, images, labels, precision, params)


def test_its_padding_holds_no_class_or_pixel():
    """784 pixels padded to 896, 10 classes to 128: zero weights, and a padded class's bias far below any logit."""
    w = [(np.ones((512, 784)), np.zeros(512)), (np.ones((512, 512)), np.zeros(512)), (np.ones((10, 512)), np.ones(10))]
    held = pallas_epoch.kernel_params(w, 896)
    assert held[0].shape == (512, 896) and float(held[0][:, 784:].sum()) == 0.0
    assert held[4].shape == (128, 512) and float(held[4][10:].sum()) == 0.0
    assert held[5][0, 10:].max() == np.float32(pallas_epoch.PAD_LOGIT) and float(held[5][0, :10].min()) == 1.0
    back = pallas_epoch.model_params(held, 784)
    assert all(np.array_equal(a, b) for pair, orig in zip(back, w) for a, b in zip(pair, orig))


FORMS = [
    ("bf16", pallas_epoch.PLAIN),
    ("bf16", pallas_epoch.Form(transposed=True, copies=True, images_t=True)),
    ("bf16", pallas_epoch.Form(columns=True, copies=True)),
    ("f32", pallas_epoch.Form(transposed=True)),
    ("f32", pallas_epoch.Form(columns=True)),
]


@pytest.mark.parametrize(("precision", "form"), FORMS, ids=lambda v: v if isinstance(v, str) else None)
def test_every_form_of_the_kernel_computes_the_same_epoch(params, precision, form):
    """The weights transposed, the batch along the columns, bfloat16 copies: the same params as the steps' epoch."""
    images, labels = as_arrays(data.SyntheticMNIST(size=2 * 128 + 40))
    epoch = kernel_epoch(images, labels, precision, form=form)
    assert epoch.form == form and epoch.training()["pallas_form"] == pallas_epoch.form_name(form)
    reference = steps_by_hand(images, labels, precision, params)
    assert model.max_relative_difference(epoch(params), reference) < epoch.tolerance


def test_a_form_keeps_only_what_its_precision_and_layout_take():
    form = pallas_epoch.Form(transposed=True, copies=True, images_t=True, columns=True)
    assert pallas_epoch.form_for("f32", form) == pallas_epoch.Form(columns=True)
    assert pallas_epoch.form_for("bf16", form) == pallas_epoch.Form(columns=True, copies=True)
    assert pallas_epoch.form_for("bf16", pallas_epoch.Form(images_t=True)) == pallas_epoch.PLAIN
    assert pallas_epoch.form_for("bf16") == pallas_epoch.FORMS["bf16"]
    w = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(1))
    for candidate in (pallas_epoch.PLAIN, pallas_epoch.Form(transposed=True), pallas_epoch.Form(columns=True)):
        held = pallas_epoch.kernel_params(w, 896, candidate)
        back = pallas_epoch.model_params(held, 784, candidate)
        assert all(np.array_equal(a, b) for pair, orig in zip(back, w) for a, b in zip(pair, orig))


def test_off_a_tpu_or_gpu_the_pipeline_is_refused_in_one_line(synthetic):
    split = data.SyntheticMNIST(size=256)
    with pytest.raises(JaxmlpError) as refused:
        make_epoch("pallas", split)
    message = str(refused.value)
    assert "\n" not in message and "TPU or GPU host" in message and "--pipeline scan" in message


@pytest.mark.mnist
@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_on_mnist_32_steps_match_the_scan_epoch(mnist, params, precision):
    """The first 32 batches of real MNIST: the kernel's params within the float32 bound (another program in another
    order) of the scan epoch's in f32, within the bf16 bound in bf16; the test accuracy the same to 0.1 point."""
    images, labels = as_arrays(mnist.train)
    images, labels = images[: 32 * 128], labels[: 32 * 128]
    kernel = kernel_epoch(images, labels, precision)
    result = kernel(params)
    split = data.ArrayMNIST(mnist.train.data[: 32 * 128].numpy(), labels)
    scan = make_epoch("scan", split, precision=precision)
    scan.compile(params)
    reference = scan(params)
    assert model.max_relative_difference(result, reference) < kernel.tolerance
    test_images, test_labels = as_arrays(mnist.test)
    targets = model.one_hot(test_labels, 10)
    with model.precision_scope(precision):
        accuracy = [float(model.evaluate(p, test_images, targets).accuracy) for p in (result, reference)]
    assert abs(accuracy[0] - accuracy[1]) <= 1e-3 and accuracy[0] > 0.7

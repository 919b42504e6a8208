"""The model equals the tutorial's math: init, predict, loss, update, and the gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tutorial_reference as ref
from jax import random
from jax.flatten_util import ravel_pytree

import jaxmlp
from jaxmlp import model
from jaxmlp.compat import enable_x64


def assert_trees_equal(a, b):
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.fixture(scope="module")
def params():
    return model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))


@pytest.fixture(scope="module")
def batch():
    """128 MNIST-like images (unscaled pixels) with one-hot targets."""
    rng = np.random.default_rng(0)
    x = (rng.random((128, 784)) < 0.2) * rng.integers(0, 256, (128, 784))
    return x.astype(np.float32), np.asarray(ref.one_hot(rng.integers(0, 10, 128), 10))


def test_tutorial_names_are_exported():
    for name in ("init_network_params", "relu", "predict", "batched_predict", "one_hot", "loss", "accuracy", "update"):
        assert getattr(jaxmlp, name) is getattr(model, name)


def test_init_is_bit_identical_to_the_tutorial(params):
    assert_trees_equal(params, ref.init_network_params(ref.layer_sizes, random.PRNGKey(0)))
    assert [w.shape for w, _ in params] == [(512, 784), (512, 512), (10, 512)]
    assert model.count_params(params) == 669_706


def test_other_seeds_give_other_params(params):
    other = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(1))
    assert not np.array_equal(np.asarray(params[0][0]), np.asarray(other[0][0]))


def test_predict_equals_the_tutorial(params, batch):
    x, _ = batch
    out = model.predict(params, x[0])
    assert out.shape == (10,)
    np.testing.assert_array_equal(out, ref.predict(params, x[0]))
    np.testing.assert_allclose(jnp.exp(out).sum(), 1.0, rtol=1e-5)  # log-probabilities


def test_batched_predict_equals_a_loop_over_predict(params, batch):
    x, _ = batch
    batched = model.batched_predict(params, x[:16])
    looped = jnp.stack([model.predict(params, image) for image in x[:16]])
    assert batched.shape == (16, 10)
    np.testing.assert_allclose(batched, looped, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(batched, ref.batched_predict(params, x[:16]))


def test_loss_and_accuracy_equal_the_tutorial(params, batch):
    x, y = batch
    np.testing.assert_array_equal(model.loss(params, x, y), ref.loss(params, x, y))
    np.testing.assert_array_equal(model.accuracy(params, x, y), ref.accuracy(params, x, y))
    evaluation = model.evaluate(params, x, y)
    np.testing.assert_allclose(evaluation.loss, ref.loss(params, x, y), rtol=1e-6)
    assert float(evaluation.accuracy) == float(ref.accuracy(params, x, y))


def test_one_hot_and_accuracy_values():
    np.testing.assert_array_equal(model.one_hot(np.array([0, 2]), 3), [[1, 0, 0], [0, 0, 1]])
    assert model.one_hot(np.array([1]), 10).dtype == jnp.float32
    # A network whose output is always class 0: accuracy is the share of class-0 targets.
    params = [(jnp.zeros((10, 4)), jnp.array([1.0] + [0.0] * 9))]
    targets = model.one_hot(np.array([0, 0, 3, 5]), 10)
    assert float(model.accuracy(params, jnp.ones((4, 4)), targets)) == 0.5


def test_update_is_bit_identical_to_the_tutorial(params, batch):
    x, y = batch
    ours, theirs = params, params
    for _ in range(3):
        ours = model.update(ours, x, y)
        theirs = ref.update(theirs, x, y)
    assert_trees_equal(ours, theirs)


def test_update_takes_the_step_size_as_an_argument(params, batch):
    x, y = batch
    grads = jax.jit(jax.grad(ref.loss))(params, x, y)
    stepped = model.update(params, x, y, 0.5)
    for (w, b), (dw, db), (w2, b2) in zip(params, grads, stepped):
        np.testing.assert_allclose(w2, w - 0.5 * dw, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(b2, b - 0.5 * db, rtol=1e-6, atol=1e-7)


def test_jitted_and_eager_update_agree(params, batch):
    x, y = batch
    jitted = model.update(params, x, y)
    eager = model.sgd_update(params, x, y)  # op by op, no jit
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(eager)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradients_match_finite_differences():
    """On a tiny network in float64, central differences along random directions."""
    with enable_x64():
        key_params, key_x = random.split(random.PRNGKey(3))
        params = jax.jit(model.init_network_params, static_argnums=0)((6, 5, 4, 3), key_params)
        flat, unravel = ravel_pytree(params)
        flat = flat * 30  # larger weights, so that every layer matters
        x = random.uniform(key_x, (7, 6), jnp.float64) * 2
        y = model.one_hot(np.arange(7) % 3, 3, jnp.float64)
        loss = jax.jit(lambda v: model.loss(unravel(v), x, y))
        grads = jax.jit(jax.grad(loss))(flat)
        rng = np.random.default_rng(0)
        eps = 1e-6
        for direction in rng.standard_normal((5, flat.size)):
            numeric = (loss(flat + eps * direction) - loss(flat - eps * direction)) / (2 * eps)
            analytic = float(np.dot(np.asarray(grads), direction))
            assert abs(analytic) > 1e-4
            np.testing.assert_allclose(analytic, float(numeric), rtol=1e-6)


def test_max_relative_difference_is_leaf_by_leaf_against_the_reference():
    import numpy as np

    from jaxmlp.model import max_relative_difference

    a = [(np.array([1.0, 2.0]), np.array([0.0]))]
    b = [(np.array([1.0, 4.0]), np.array([0.0]))]
    assert max_relative_difference(a, b) == 0.5 and max_relative_difference(b, b) == 0.0


def test_a_steps_flops_are_counted_from_the_layer_sizes():
    """410.8 MFLOP a step at batch 128 (784-512-512-10, forward and backward), 192.6 GFLOP an epoch of MNIST: the
    count every epoch's floor is computed from, as the step's products' shapes give it (`floor.step_gemm_shapes`)."""
    from jaxmlp.measure import floor

    assert model.step_flops(128) == 410_779_648
    assert round(model.step_flops(128) / 1e6, 1) == 410.8
    assert model.step_flops(128) == floor.gemm_flops(floor.step_gemm_shapes(128))
    assert model.epoch_flops(60000, 128) == 468 * model.step_flops(128) + model.step_flops(96) == 192_552_960_000
    assert round(model.epoch_flops(60000, 128) / 1e9, 1) == 192.6
    assert model.step_flops(128, (4, 3, 2)) == 2 * 128 * (2 * (4 * 3 + 3 * 2) + 3 * 2)

"""The tutorial's MLP: pure functions over a list of ``(w, b)`` pairs.

This is the pure core of jaxmlp. It imports jax and numpy only and keeps the
names and the math of the JAX tutorial "Training a simple neural network, with
PyTorch data loading", so a reader of the tutorial finds everything here.

Shapes: an image is a flat ``(784,)`` float32 vector of unscaled pixels
(0-255); a batch is ``(B, 784)``; targets are one-hot ``(B, 10)``; params is a
list of ``(w, b)`` with ``w.shape == (n_out, n_in)`` and ``b.shape == (n_out,)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax.scipy.special import logsumexp
from jax.typing import ArrayLike, DTypeLike

Array = jax.Array
Layer = tuple[Array, Array]
Params = list[Layer]

LAYER_SIZES: tuple[int, ...] = (784, 512, 512, 10)
N_TARGETS = 10
STEP_SIZE = 0.01


def random_layer_params(m: int, n: int, key: Array, scale: float = 1e-2) -> Layer:
    """One dense layer ``(w, b)``: ``w`` is ``(n, m)``, ``b`` is ``(n,)``, both ``scale * N(0, 1)``."""
    w_key, b_key = random.split(key)
    return scale * random.normal(w_key, (n, m)), scale * random.normal(b_key, (n,))


def init_network_params(sizes: Sequence[int], key: Array) -> Params:
    """All layers of a fully connected network with the given layer sizes."""
    keys = random.split(key, len(sizes))
    return [random_layer_params(m, n, k) for m, n, k in zip(sizes[:-1], sizes[1:], keys)]


def relu(x: Array) -> Array:
    return jnp.maximum(0, x)


def predict(params: Params, image: Array) -> Array:
    """Log-probabilities ``(10,)`` for ONE flat image ``(784,)``."""
    activations = image
    for w, b in params[:-1]:
        outputs = jnp.dot(w, activations) + b
        activations = relu(outputs)

    final_w, final_b = params[-1]
    logits = jnp.dot(final_w, activations) + final_b
    return logits - logsumexp(logits)


# Batching is vmap, never hand-written: images (B, 784) -> log-probabilities (B, 10).
batched_predict = vmap(predict, in_axes=(None, 0))


def one_hot(x: ArrayLike, k: int, dtype: DTypeLike = jnp.float32) -> Array:
    """One-hot encoding ``(B, k)`` of integer labels ``(B,)``."""
    return jnp.array(jnp.asarray(x)[:, None] == jnp.arange(k), dtype)


def accuracy(params: Params, images: Array, targets: Array) -> Array:
    """Fraction of images whose most likely class is the one-hot target's class."""
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(batched_predict(params, images), axis=1)
    return jnp.mean(predicted_class == target_class)


def loss(params: Params, images: Array, targets: Array) -> Array:
    """The tutorial's loss: ``-mean(preds * targets)``, i.e. cross-entropy divided by 10."""
    preds = batched_predict(params, images)
    return -jnp.mean(preds * targets)


def sgd_update(params: Params, x: Array, y: Array, step_size: float = STEP_SIZE) -> Params:
    """One plain SGD step on the tutorial's loss (not jitted; see `update`)."""
    grads = grad(loss)(params, x, y)
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]


# The tutorial's jitted step. The step size is an argument rather than a global:
# a traced float32 scalar gives results bit-identical to the tutorial's folded constant.
update = jit(sgd_update)


class Evaluation(NamedTuple):
    """Loss and accuracy of params on one whole split (float32 scalars)."""

    loss: Array
    accuracy: Array


@jit
def evaluate(params: Params, images: Array, targets: Array) -> Evaluation:
    """`loss` and `accuracy` from a single forward pass over ``images``."""
    preds = batched_predict(params, images)
    predicted_class = jnp.argmax(preds, axis=1)
    target_class = jnp.argmax(targets, axis=1)
    return Evaluation(-jnp.mean(preds * targets), jnp.mean(predicted_class == target_class))


def count_params(params: Params) -> int:
    return sum(int(leaf.size) for leaf in jax.tree_util.tree_leaves(params))


def max_relative_difference(a: object, b: object) -> float:
    """Largest |a - b| over max |b|, leaf by leaf, for two pytrees of arrays (``b`` the reference): how tests,
    benchmarks and the scaling worker say two computations gave the same params."""
    import numpy as np

    return max(
        float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / max(float(np.max(np.abs(np.asarray(y)))), 1e-30))
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True)
    )

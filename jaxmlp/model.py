"""The tutorial's MLP: pure functions over ``(w, b)`` pairs with the JAX tutorial's names and math, and the step in
mixed precision. Shapes: an image ``(784,)`` float32 unscaled pixels, a batch ``(B, 784)``, targets one-hot ``(B, 10)``,
``w`` ``(n_out, n_in)``, ``b`` ``(n_out,)``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax.scipy.special import logsumexp
from jax.typing import ArrayLike, DTypeLike

from jaxmlp.registry import LAYER_SIZES as LAYER_SIZES  # the MLP's sizes live in the registry (plain Python)
from jaxmlp.registry import N_TARGETS as N_TARGETS
from jaxmlp.registry import PRECISIONS

Array = jax.Array
Layer = tuple[Array, Array]
Params = list[Layer]

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


def step_flops(batch_size: int, sizes: Sequence[int] = LAYER_SIZES) -> int:
    """The FLOPs of one SGD step's matrix products at ``batch_size`` (two a multiply-add; docs/methods/floor.md)."""
    layers = list(zip(sizes[:-1], sizes[1:]))
    forward = sum(n_in * n_out for n_in, n_out in layers)
    input_gradients = sum(n_in * n_out for n_in, n_out in layers[1:])
    return 2 * batch_size * (2 * forward + input_gradients)


def epoch_flops(n_samples: int, batch_size: int, sizes: Sequence[int] = LAYER_SIZES) -> int:
    """`step_flops` summed over an in-order epoch of ``n_samples`` in batches of ``batch_size``."""
    full, rest = divmod(n_samples, batch_size)
    return full * step_flops(batch_size, sizes) + step_flops(rest, sizes)


def max_relative_difference(a: object, b: object) -> float:
    """Largest |a - b| over max |b|, leaf by leaf, for two pytrees of arrays (``b`` the reference)."""
    import numpy as np

    return max(
        float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / max(float(np.max(np.abs(np.asarray(y)))), 1e-30))
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True)
    )


# --- mixed precision: bfloat16 products, float32 accumulation, float32 params and update ------------------------

BF16 = jnp.bfloat16

_NT = (((1,), (1,)), ((), ()))  # a (B, in) . w (out, in): contract both last axes
_NN = (((1,), (0,)), ((), ()))  # g (B, out) . w (out, in)
_TN = (((0,), (0,)), ((), ()))  # g (B, out) . a (B, in): contract the batch axis


def _product(a: Array, b: Array, dims: Any) -> Array:
    """``a . b`` of bfloat16 operands accumulated and returned in float32."""
    return jax.lax.dot_general(a, b, dims, preferred_element_type=jnp.float32)


@jax.custom_vjp
def dense_bf16(a: Array, w: Array) -> Array:
    """``a @ w.T`` with bfloat16 operands and float32 results, its written-out gradient in the same form."""
    return _product(a, w.astype(BF16), _NT)


def _dense_forward(a: Array, w: Array) -> tuple[Array, tuple[Array, Array]]:
    w16 = w.astype(BF16)
    return _product(a, w16, _NT), (a, w16)


def _dense_backward(saved: tuple[Array, Array], g: Array) -> tuple[Array, Array]:
    a, w16 = saved
    g16 = g.astype(BF16)
    return _product(g16, w16, _NN).astype(BF16), _product(g16, a, _TN)  # d a (bfloat16, as a), d w (float32, as w)


dense_bf16.defvjp(_dense_forward, _dense_backward)


def batched_predict_bf16(params: Params, images: Array) -> Array:
    """`batched_predict` in mixed precision: images ``(B, 784)`` -> float32 log-probabilities ``(B, 10)``."""
    activations = images.astype(BF16)
    for w, b in params[:-1]:
        activations = relu(dense_bf16(activations, w) + b).astype(BF16)
    final_w, final_b = params[-1]
    logits = dense_bf16(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss_bf16(params: Params, images: Array, targets: Array) -> Array:
    """The tutorial's loss over `batched_predict_bf16`."""
    return -jnp.mean(batched_predict_bf16(params, images) * targets)


def sgd_update_bf16(params: Params, x: Array, y: Array, step_size: float = STEP_SIZE) -> Params:
    """`sgd_update` in mixed precision: bfloat16 products, float32 gradients, params and update."""
    grads = grad(loss_bf16)(params, x, y)
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]


def batched_predict_bf16_casts(params: Params, images: Array) -> Array:
    """`batched_predict_bf16` written plainly, by casts around ``jnp.dot`` and JAX's transpose rules."""
    activations = images.astype(BF16)
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w.astype(BF16).T, preferred_element_type=jnp.float32) + b
        activations = relu(outputs).astype(BF16)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w.astype(BF16).T, preferred_element_type=jnp.float32) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def sgd_update_bf16_casts(params: Params, x: Array, y: Array, step_size: float = STEP_SIZE) -> Params:
    """`sgd_update_bf16` in its plain form (`batched_predict_bf16_casts`)."""
    grads = grad(lambda p: -jnp.mean(batched_predict_bf16_casts(p, x) * y))(params)
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]


BF16_STEPS: dict[str, Callable[[Params, Array, Array, float], Params]] = {
    "vjp": sgd_update_bf16,
    "casts": sgd_update_bf16_casts,
}
"""The two forms of the mixed-precision step: the written-out VJP and the plain casts (the same products)."""

BF16_STEP_BY_BACKEND = {"cpu": "vjp", "tpu": "vjp"}
"""The bf16 step each backend trains with, the faster measured there (docs/questions/precision.md)."""
DEFAULT_BF16_STEP = "vjp"


def bf16_step_for(platform: str) -> str:
    """The bf16 step form a JAX backend trains with (`BF16_STEP_BY_BACKEND`)."""
    return BF16_STEP_BY_BACKEND.get(platform, DEFAULT_BF16_STEP)


def step_function(
    precision: str, bf16_step: str = DEFAULT_BF16_STEP
) -> Callable[[Params, Array, Array, float], Params]:
    """The (unjitted) SGD step of a precision: `sgd_update`, or for ``bf16`` the form ``bf16_step``."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
    if bf16_step not in BF16_STEPS:
        raise ValueError(f"unknown bf16 step {bf16_step!r}: choose one of {', '.join(BF16_STEPS)}")
    return BF16_STEPS[bf16_step] if precision == "bf16" else sgd_update


def data_dtype(precision: str) -> DTypeLike:
    """The dtype a precision keeps its images in: bfloat16 for ``bf16`` (exact for pixels), else float32."""
    return cast(DTypeLike, BF16 if precision == "bf16" else jnp.float32)


def matmul_precision(precision: str) -> str | None:
    """JAX's ``default_matmul_precision`` for a precision (None for ``bf16``: its products set their own)."""
    return {"f32": "highest", "tf32": "tensorfloat32"}.get(precision)


def precision_scope(precision: str) -> contextlib.AbstractContextManager[Any]:
    """Where a precision's programs are traced and compiled, under its `matmul_precision`."""
    setting = matmul_precision(precision)
    return contextlib.nullcontext() if setting is None else jax.default_matmul_precision(setting)

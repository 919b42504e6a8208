"""The whole epoch as one Pallas kernel (the ``pallas`` pipeline): a grid over the batches, the parameters resident
in the kernel's memory (VMEM on a TPU), `jaxmlp.model`'s step written out inside, in padded shapes that change no
result (the kernel and its padding: the docs' questions/accelerator page)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl

from jaxmlp.model import BF16, N_TARGETS, Params

LANES = 128
"""A TPU vector register's lane count: the class axis is padded to it."""
PAD_LOGIT = -1e30
"""The bias of a padded class: its probability is exp(-1e30 - max) = 0, never NaN (unlike -inf)."""
VMEM_LIMIT_BYTES = 100 * 2**20
"""The kernel's VMEM budget on a TPU (a v5e has 128 MiB): the parameters twice (in and out, 2.7 MB each in float32),
the batch's blocks double-buffered and the step's activations fit with room to spare."""

_NT = (((1,), (1,)), ((), ()))  # a (B, in) . w (out, in)
_NN = (((1,), (0,)), ((), ()))  # g (B, out) . w (out, in)
_TN = (((0,), (0,)), ((), ()))  # g (B, out) . a (B, in): contract the batch axis


class Layout(NamedTuple):
    """How an epoch's batches sit in the kernel's inputs: ``steps`` batches of ``batch`` rows, ``samples`` real rows
    in all (the last batch's missing rows zero padding), ``features`` image columns padded to a multiple of `LANES`,
    ``classes`` padded to `LANES`."""

    steps: int
    batch: int
    samples: int
    features: int
    classes: int = LANES


def layout(n_samples: int, batch: int, features: int) -> Layout:
    """The layout of an in-order epoch of ``n_samples`` images of ``features`` pixels in batches of ``batch``."""
    return Layout(-(-n_samples // batch), batch, n_samples, -(-features // LANES) * LANES)


def pad_batches(images: np.ndarray, targets: np.ndarray, shape: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(steps * batch, features)`` in their own dtype and one-hot targets ``(steps * batch, classes)`` in
    bfloat16 (exact for 0 and 1), zero rows and columns after the real ones."""
    rows = shape.steps * shape.batch
    x = np.zeros((rows, shape.features), images.dtype)
    x[: len(images), : images.shape[1]] = images
    y = np.zeros((rows, shape.classes), BF16)
    y[: len(targets), : targets.shape[1]] = targets
    return x, y


def _kernel(x_ref: Any, y_ref: Any, *refs: Any, shape: Layout, step_size: float, dtype: Any, precision: Any) -> None:
    """One batch's SGD step on the resident parameters (the outputs, filled from the inputs at the first batch)."""
    params_in, params_out = refs[:6], refs[6:]
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _() -> None:
        for source, target in zip(params_in, params_out):
            target[...] = source[...]

    def dot(a: jax.Array, b: jax.Array, dims: Any) -> jax.Array:
        return jax.lax.dot_general(
            a.astype(dtype), b.astype(dtype), dims, precision=precision, preferred_element_type=jnp.float32
        )

    w1, b1, w2, b2, w3, b3 = (ref[...] for ref in params_out)
    x = x_ref[...]
    y = y_ref[...].astype(jnp.float32)
    # forward: activations rounded to the products' operand type, as the model's step does
    z1 = dot(x, w1, _NT) + b1
    a1 = jnp.maximum(z1, 0.0).astype(dtype)
    z2 = dot(a1, w2, _NT) + b2
    a2 = jnp.maximum(z2, 0.0).astype(dtype)
    logits = dot(a2, w3, _NT) + b3
    e = jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True))
    softmax = e / jnp.sum(e, axis=1, keepdims=True)
    # backward of -mean(preds * targets) over the batch's real rows and the 10 classes
    real = jnp.minimum(shape.samples - i * shape.batch, shape.batch).astype(jnp.float32)
    d_preds = y * (-1.0 / (real * N_TARGETS))
    d_logits = d_preds - softmax * jnp.sum(d_preds, axis=1, keepdims=True)
    d_a2 = dot(d_logits, w3, _NN).astype(dtype).astype(jnp.float32)
    d_z2 = jnp.where(z2 > 0, d_a2, 0.0)
    d_a1 = dot(d_z2, w2, _NN).astype(dtype).astype(jnp.float32)
    d_z1 = jnp.where(z1 > 0, d_a1, 0.0)
    grads = (
        dot(d_z1, x, _TN),
        jnp.sum(d_z1, axis=0, keepdims=True),
        dot(d_z2, a1, _TN),
        jnp.sum(d_z2, axis=0, keepdims=True),
        dot(d_logits, a2, _TN),
        jnp.sum(d_logits, axis=0, keepdims=True),
    )
    for ref, value, grad in zip(params_out, (w1, b1, w2, b2, w3, b3), grads):
        ref[...] = value - step_size * grad


def kernel_params(params: Params, features: int) -> list[jax.Array]:
    """The model's params as the kernel holds them: biases as rows ``(1, n)``, the first layer's inputs padded to
    ``features`` (zero weights: zero pixels, zero gradient), the last layer's outputs to `LANES` classes (zero
    weights, `PAD_LOGIT` biases)."""
    (w1, b1), (w2, b2), (w3, b3) = params
    w1 = jnp.pad(w1, ((0, 0), (0, features - w1.shape[1])))
    pad = LANES - w3.shape[0]
    w3 = jnp.pad(w3, ((0, pad), (0, 0)))
    b3 = jnp.pad(b3, (0, pad), constant_values=PAD_LOGIT)
    return [w1, b1[None], w2, b2[None], w3, b3[None]]


def model_params(held: Sequence[jax.Array], features: int) -> Params:
    """The kernel's params back in the model's form (``features`` inputs of the first layer)."""
    w1, b1, w2, b2, w3, b3 = held
    return [(w1[:, :features], b1[0]), (w2, b2[0]), (w3[:N_TARGETS], b3[0, :N_TARGETS])]


def cost(shape: Layout, n_params: int, image_bytes: int) -> pl.CostEstimate:
    """What one epoch of the kernel computes and moves, for XLA's cost analysis: the step's products at the padded
    shapes (forward, weight gradients, the input gradients of layers 2 and 3), the exponentials, the batches read
    once and the parameters read and written once."""
    b, f, c, h = shape.batch, shape.features, shape.classes, 512
    products = 2 * b * (f * h + h * h + h * c) * 2 + 2 * b * (h * h + h * c)
    return pl.CostEstimate(
        flops=shape.steps * products,
        transcendentals=shape.steps * b * c,
        bytes_accessed=shape.steps * b * (f * image_bytes + c * 2) + 2 * 4 * n_params,
    )


def epoch_call(shape: Layout, step_size: float, precision: str, interpret: bool = False) -> Any:
    """The jitted epoch ``(params, images, targets) -> params`` of the kernel, inputs as `pad_batches` makes them
    (``interpret``: Pallas's interpreter, on any backend)."""
    dtype = BF16 if precision == "bf16" else jnp.float32
    dot_precision = None if precision == "bf16" else jax.lax.Precision.HIGHEST
    body = functools.partial(_kernel, shape=shape, step_size=step_size, dtype=dtype, precision=dot_precision)

    def whole(array: Any) -> pl.BlockSpec:
        return pl.BlockSpec(array.shape, lambda i: (0, 0))  # the same block at every step: it stays resident

    def run(params: Params, xs: jax.Array, ys: jax.Array) -> Params:
        features = params[0][0].shape[1]
        held = kernel_params(params, shape.features)
        extra: dict[str, Any] = {}
        if not interpret:
            from jax.experimental.pallas import tpu as pltpu

            extra["compiler_params"] = pltpu.CompilerParams(
                dimension_semantics=("arbitrary",), vmem_limit_bytes=VMEM_LIMIT_BYTES
            )
        out = pl.pallas_call(
            body,
            grid=(shape.steps,),
            in_specs=[
                pl.BlockSpec((shape.batch, shape.features), lambda i: (i, 0)),
                pl.BlockSpec((shape.batch, shape.classes), lambda i: (i, 0)),
                *(whole(p) for p in held),
            ],
            out_specs=[whole(p) for p in held],
            out_shape=[jax.ShapeDtypeStruct(p.shape, p.dtype) for p in held],  # type: ignore[no-untyped-call]
            cost_estimate=cost(shape, sum(int(np.prod(p.shape)) for p in held), xs.dtype.itemsize),
            interpret=interpret,
            **extra,
        )(xs, ys, *held)
        return model_params(cast(Sequence[jax.Array], out), features)

    return jax.jit(run)

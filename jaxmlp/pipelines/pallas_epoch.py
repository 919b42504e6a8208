"""The whole epoch as one Pallas kernel on a TPU (the ``pallas`` pipeline; docs/questions/accelerator.md)."""

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
"""The kernel's VMEM budget on a TPU, which holds the parameters, their copies, the batch and the activations."""

_NT = (((1,), (1,)), ((), ()))  # a (B, n) . w (m, n): the right operand transposed
_NN = (((1,), (0,)), ((), ()))  # a (B, n) . w (n, m)
_TN = (((0,), (0,)), ((), ()))  # a (B, n) . g (B, m): contract the batch axis, the left operand transposed


class Form(NamedTuple):
    """How the kernel holds its weights and activations: ``transposed`` weights, ``columns`` (the batch along the
    columns), ``copies`` (bf16 only), ``images_t`` (``transposed`` only)."""

    transposed: bool = False
    copies: bool = False
    images_t: bool = False
    columns: bool = False


PLAIN = Form()
"""The model's own layout, nothing beside it: the kernel as first written."""

FORMS = {"bf16": Form(copies=True), "f32": PLAIN}
"""The form each precision runs: the fastest measured on a TPU v5e (docs/results/accelerator.md)."""


class Layout(NamedTuple):
    """How an epoch's batches sit in the kernel's inputs: batches, rows, and the padded features and classes."""

    steps: int
    batch: int
    samples: int
    features: int
    classes: int = LANES


def layout(n_samples: int, batch: int, features: int) -> Layout:
    """The layout of an in-order epoch of ``n_samples`` images of ``features`` pixels in batches of ``batch``."""
    return Layout(-(-n_samples // batch), batch, n_samples, -(-features // LANES) * LANES)


def pad_batches(images: np.ndarray, targets: np.ndarray, shape: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Images and one-hot bfloat16 targets of all the steps, zero rows and columns after the real ones."""
    rows = shape.steps * shape.batch
    x = np.zeros((rows, shape.features), images.dtype)
    x[: len(images), : images.shape[1]] = images
    y = np.zeros((rows, shape.classes), BF16)
    y[: len(targets), : targets.shape[1]] = targets
    return x, y


def kernel_inputs(images: np.ndarray, targets: np.ndarray, shape: Layout, form: Form) -> list[np.ndarray]:
    """The kernel's data inputs (`pad_batches`), made once with the data and transposed as ``form`` asks."""
    x, y = pad_batches(images, targets, shape)
    if form.columns:
        return [np.ascontiguousarray(x.T), np.ascontiguousarray(y.T)]
    return [x, y, np.ascontiguousarray(x.T)] if form.images_t else [x, y]


def _products(form: Form, dot: Any) -> tuple[Any, Any, Any]:
    """The step's forward, input-gradient and weight-gradient products in ``form``'s layouts."""
    if form.columns:  # z = w . a, d a = w^T . g, d w = g . a^T
        return (lambda w, a: dot(w, a, _NN)), (lambda w, g: dot(w, g, _TN)), (lambda g, a: dot(g, a, _NT))
    if form.transposed:  # z = a . w, d a = g . w^T, d w = a^T . g
        return (lambda w, a: dot(a, w, _NN)), (lambda w, g: dot(g, w, _NT)), (lambda g, a: dot(a, g, _TN))
    return (lambda w, a: dot(a, w, _NT)), (lambda w, g: dot(g, w, _NN)), (lambda g, a: dot(g, a, _TN))


def _kernel(
    *refs: Any, shape: Layout, step_size: float, dtype: Any, precision: Any, form: Form, update: bool = True
) -> None:
    """One batch's SGD step on the resident parameters; ``update`` False stores the gradients unapplied."""
    n_data = 3 if form.images_t else 2
    x_ref, y_ref = refs[:2]
    params_in, params_out, copies = refs[n_data : n_data + 6], refs[n_data + 6 : n_data + 12], refs[n_data + 12 :]
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _() -> None:
        for source, target in zip(params_in, params_out):
            target[...] = source[...]
        for source, copy in zip(params_in[::2], copies):
            copy[...] = source[...].astype(copy.dtype)

    def dot(a: jax.Array, b: jax.Array, dims: Any) -> jax.Array:
        return jax.lax.dot_general(
            a.astype(dtype), b.astype(dtype), dims, precision=precision, preferred_element_type=jnp.float32
        )

    def weight(k: int) -> jax.Array:  # read where it is used: never held across the step
        return cast(jax.Array, copies[k][...] if copies else params_out[2 * k][...])

    forward, backward, weight_grad = _products(form, dot)
    classes = 0 if form.columns else 1  # the axis of the classes and features; the other is the batch's
    x = x_ref[...]
    y = y_ref[...].astype(jnp.float32)
    b1, b2, b3 = (ref[...] for ref in params_out[1::2])
    # forward: activations rounded to the products' operand type, as the model's step does
    z1 = forward(weight(0), x) + b1
    a1 = jnp.maximum(z1, 0.0).astype(dtype)
    z2 = forward(weight(1), a1) + b2
    a2 = jnp.maximum(z2, 0.0).astype(dtype)
    logits = forward(weight(2), a2) + b3
    e = jnp.exp(logits - jnp.max(logits, axis=classes, keepdims=True))
    softmax = e / jnp.sum(e, axis=classes, keepdims=True)
    # backward of -mean(preds * targets) over the batch's real rows and the 10 classes
    real = jnp.minimum(shape.samples - i * shape.batch, shape.batch).astype(jnp.float32)
    d_preds = y * (-1.0 / (real * N_TARGETS))
    d_logits = d_preds - softmax * jnp.sum(d_preds, axis=classes, keepdims=True)
    d_a2 = backward(weight(2), d_logits).astype(dtype).astype(jnp.float32)
    d_z2 = jnp.where(z2 > 0, d_a2, 0.0)
    d_a1 = backward(weight(1), d_z2).astype(dtype).astype(jnp.float32)
    d_z1 = jnp.where(z1 > 0, d_a1, 0.0)
    first = dot(refs[2][...], d_z1, _NN) if form.images_t else weight_grad(d_z1, x)  # images_t: x^T . g
    weight_grads = (first, weight_grad(d_z2, a1), weight_grad(d_logits, a2))
    for k, (grad, g) in enumerate(zip(weight_grads, (d_z1, d_z2, d_logits))):
        w_ref, b_ref = params_out[2 * k], params_out[2 * k + 1]
        bias_grad = jnp.sum(g, axis=1 - classes, keepdims=True)
        if not update:
            w_ref[...], b_ref[...] = grad, bias_grad
            continue
        new = w_ref[...] - step_size * grad
        w_ref[...] = new
        if copies:
            copies[k][...] = new.astype(copies[k].dtype)
        b_ref[...] = b_ref[...] - step_size * bias_grad


def kernel_params(params: Params, features: int, form: Form = PLAIN, classes: int = LANES) -> list[jax.Array]:
    """The model's params as the kernel holds them in ``form``, padded with zero weights."""
    (w1, b1), (w2, b2), (w3, b3) = params
    w1 = jnp.pad(w1, ((0, 0), (0, features - w1.shape[1])))
    pad = classes - w3.shape[0]
    w3 = jnp.pad(w3, ((0, pad), (0, 0)))
    b3 = jnp.pad(b3, (0, pad), constant_values=PAD_LOGIT)
    if form.transposed:
        w1, w2, w3 = w1.T, w2.T, w3.T
    if form.columns:
        return [w1, b1[:, None], w2, b2[:, None], w3, b3[:, None]]
    return [w1, b1[None], w2, b2[None], w3, b3[None]]


def model_params(held: Sequence[jax.Array], features: int, form: Form = PLAIN) -> Params:
    """The kernel's params back in the model's form (``features`` inputs of the first layer)."""
    w1, b1, w2, b2, w3, b3 = held
    if form.transposed:
        w1, w2, w3 = w1.T, w2.T, w3.T
    b1, b2, b3 = (b.reshape(-1) for b in (b1, b2, b3))
    return [(w1[:, :features], b1), (w2, b2), (w3[:N_TARGETS], b3[:N_TARGETS])]


def cost(shape: Layout, n_params: int, image_bytes: int, form: Form = PLAIN) -> pl.CostEstimate:
    """What one epoch of the kernel computes and moves at the padded shapes, for XLA's cost analysis."""
    b, f, c, h = shape.batch, shape.features, shape.classes, 512
    products = 2 * b * (f * h + h * h + h * c) * 2 + 2 * b * (h * h + h * c)
    image_reads = 2 if form.images_t else 1
    return pl.CostEstimate(
        flops=shape.steps * products,
        transcendentals=shape.steps * b * c,
        bytes_accessed=shape.steps * b * (image_reads * f * image_bytes + c * 2) + 2 * 4 * n_params,
    )


def form_for(precision: str, form: Form | None = None) -> Form:
    """``form``, else the precision's (`FORMS`), its options only where they apply."""
    chosen = form if form is not None else FORMS.get(precision, PLAIN)
    transposed = chosen.transposed and not chosen.columns
    return chosen._replace(
        transposed=transposed, copies=chosen.copies and precision == "bf16", images_t=chosen.images_t and transposed
    )


def form_name(form: Form) -> str:
    """A form in words, for results: ``"out-in"``, ``"in-out"`` or ``"columns"``, then ``+copies``, ``+images_t``."""
    return "+".join(
        [
            "columns" if form.columns else "in-out" if form.transposed else "out-in",
            *(["copies"] if form.copies else []),
            *(["images_t"] if form.images_t else []),
        ]
    )


def epoch_call(
    shape: Layout, step_size: float, precision: str, interpret: bool = False, form: Form | None = None
) -> Any:
    """The jitted epoch ``(params, *data) -> params`` of the kernel in ``form``; ``interpret``: Pallas's interpreter."""
    form = form_for(precision, form)
    dtype = BF16 if precision == "bf16" else jnp.float32
    dot_precision = None if precision == "bf16" else jax.lax.Precision.HIGHEST
    body = functools.partial(_kernel, shape=shape, step_size=step_size, dtype=dtype, precision=dot_precision, form=form)

    def whole(array: Any) -> pl.BlockSpec:
        return pl.BlockSpec(array.shape, lambda i: (0, 0))  # the same block at every step: it stays resident

    def run(params: Params, *data: jax.Array) -> Params:
        features = params[0][0].shape[1]
        held = kernel_params(params, shape.features, form)
        extra: dict[str, Any] = {}
        if not interpret:
            from jax.experimental.pallas import tpu as pltpu

            extra["compiler_params"] = pltpu.CompilerParams(
                dimension_semantics=("arbitrary",), vmem_limit_bytes=VMEM_LIMIT_BYTES
            )
        if form.columns:  # a batch is a block of columns
            blocks = [pl.BlockSpec((n, shape.batch), lambda i: (0, i)) for n in (shape.features, shape.classes)]
        else:
            blocks = [pl.BlockSpec((shape.batch, n), lambda i: (i, 0)) for n in (shape.features, shape.classes)]
        if form.images_t:
            blocks.append(pl.BlockSpec((shape.features, shape.batch), lambda i: (0, i)))
        scratch = [_vmem(p.shape, BF16) for p in held[::2]] if form.copies else []
        out = pl.pallas_call(
            body,
            grid=(shape.steps,),
            in_specs=[*blocks, *(whole(p) for p in held)],
            out_specs=[whole(p) for p in held],
            out_shape=[jax.ShapeDtypeStruct(p.shape, p.dtype) for p in held],  # type: ignore[no-untyped-call]
            scratch_shapes=scratch,
            cost_estimate=cost(shape, sum(int(np.prod(p.shape)) for p in held), data[0].dtype.itemsize, form),
            interpret=interpret,
            **extra,
        )(*data, *held)
        return model_params(cast(Sequence[jax.Array], out), features, form)

    return jax.jit(run)


def _vmem(shape: tuple[int, ...], dtype: Any) -> Any:
    """A VMEM scratch buffer of the kernel (Pallas's TPU memory space; the interpreter takes it on any backend)."""
    from jax.experimental.pallas import tpu as pltpu

    return pltpu.VMEM(shape, dtype)

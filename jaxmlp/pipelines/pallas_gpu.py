"""The whole epoch as one Pallas kernel through Triton on a GPU (docs/questions/accelerator.md)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl

from jaxmlp.errors import JaxmlpError
from jaxmlp.model import BF16, N_TARGETS, Params
from jaxmlp.pipelines.pallas_epoch import Layout, kernel_params, model_params

TILE = 64
"""The side of every tile the kernel loads, multiplies and stores (Triton's arrays are powers of two): a (batch, 64)
float32 accumulator is 32 registers a thread of 8 warps at batch 128."""
CLASSES = 16
"""The class axis padded to the smallest width Triton's products take (10 classes: 6 of padding)."""
HIDDEN = 512
"""The hidden layers' width (`registry.LAYER_SIZES`)."""
NUM_WARPS = 8
"""Triton's warps in the one program (256 threads)."""
WORKSPACES = ("z1", "a1", "z2", "a2", "d_z1", "d_z2")
"""The step's activations and gradients, kept in the GPU's memory between its phases (discarded outputs)."""

DOT_PRECISION = {"f32": jax.lax.Precision.HIGHEST, "tf32": jax.lax.Precision.DEFAULT, "bf16": None}
"""Each precision's products in Triton's lowering: IEEE float32, TF32 passes, or bfloat16 operands."""

_NT = (((1,), (1,)), ((), ()))  # a (B, n) . w (m, n)
_NN = (((1,), (0,)), ((), ()))  # a (B, n) . w (n, m)
_TN = (((0,), (0,)), ((), ()))  # g (B, m) . a (B, n): contract the batch


def check_batch(batch: int) -> int:
    """``batch`` where Triton can hold a batch's tile (a power of two, 16 or more), else a `JaxmlpError` in one line."""
    if batch < 16 or batch & (batch - 1):
        raise JaxmlpError(
            f"the pallas pipeline on a GPU takes a batch size that is a power of two from 16 (Triton's arrays), not "
            f"{batch}: use --batch-size 128, or --pipeline scan"
        )
    return batch


def layout(n_samples: int, batch: int, features: int) -> Layout:
    """The layout of an in-order epoch in the GPU kernel: padded to `TILE` and `CLASSES`, the batch a power of two."""
    steps = -(-n_samples // check_batch(batch))
    return Layout(steps, batch, n_samples, -(-features // TILE) * TILE, CLASSES)


def _kernel(*refs: Any, shape: Layout, step_size: float, dtype: Any, precision: Any, barriers: bool) -> None:
    """The epoch: for each batch, `pallas_epoch`'s step, its products tiled; the parameters read and written
    through their outputs (aliased to their inputs: one buffer on a GPU, a copy of the input in the interpreter).
    ``barriers``: a barrier between phases, where one phase reads what another wrote to memory (the program's
    threads hold other elements in each phase; the interpreter runs it as one thread and has none). One function:
    a Pallas kernel is one traced body, and its phases share the refs and the barriers between them."""
    x_ref, y_ref = refs[:2]
    w1, b1, w2, b2, w3, b3 = refs[8:14]
    z1, a1, z2, a2, d_z1, d_z2 = refs[14:]

    def sync() -> None:
        if barriers:
            from jax.experimental.pallas import triton as pltriton

            pltriton.debug_barrier()

    b, f, c = shape.batch, shape.features, shape.classes
    f32 = jnp.float32
    all_rows = pl.ds(0, b)

    def dot(u: jax.Array, v: jax.Array, dims: Any) -> jax.Array:
        return jax.lax.dot_general(
            u.astype(dtype), v.astype(dtype), dims, precision=precision, preferred_element_type=f32
        )

    def tile(k: Any) -> Any:
        return pl.ds(pl.multiple_of(k * TILE, TILE), TILE)

    def tiles(n: int, body: Any) -> None:
        """``body(k)`` for each of ``n`` tiles (a loop in the kernel, not unrolled)."""
        jax.lax.fori_loop(0, n, lambda k, carry: (body(k), carry)[1], 0)

    def dense(read: Any, inputs: int, w: Any, bias: Any, z: Any, a: Any) -> None:
        """z = read(k) . w^T + bias and a = relu(z) in the operand type, a tile of outputs at a time."""

        def outputs(j: Any) -> None:
            cols = tile(j)
            acc = jax.lax.fori_loop(
                0,
                inputs // TILE,
                lambda k, acc: acc + dot(read(tile(k)), w[cols, tile(k)], _NT),
                jnp.zeros((b, TILE), f32),
            )
            out = acc + bias[:, cols]
            z[:, cols] = out
            a[:, cols] = jnp.maximum(out, 0.0).astype(a.dtype)

        tiles(HIDDEN // TILE, outputs)

    def update(grad_of: Any, rows: int, cols: int, w: Any) -> None:
        """w -= step_size * grad, a (TILE, TILE) tile at a time."""

        def each(m: Any) -> None:
            def inner(n: Any) -> None:
                w[tile(m), tile(n)] = w[tile(m), tile(n)] - step_size * grad_of(tile(m), tile(n))

            tiles(cols // TILE, inner)

        tiles(rows // TILE, each)

    def bias_update(g: Any, bias: Any) -> None:
        def each(j: Any) -> None:
            cols = tile(j)
            bias[:, cols] = bias[:, cols] - step_size * jnp.sum(g[:, cols].astype(f32), axis=0, keepdims=True)

        tiles(HIDDEN // TILE, each)

    def step(i: Any, carry: Any) -> Any:
        rows = pl.ds(pl.multiple_of(i * b, b), b)
        # forward: activations rounded to the products' operand type, as the model's step does
        dense(lambda ks: x_ref[rows, ks], f, w1, b1, z1, a1)
        sync()
        dense(lambda ks: a1[all_rows, ks], HIDDEN, w2, b2, z2, a2)
        sync()
        logits = jax.lax.fori_loop(
            0,
            HIDDEN // TILE,
            lambda k, acc: acc + dot(a2[all_rows, tile(k)], w3[:, tile(k)], _NT),
            jnp.zeros((b, c), f32),
        )
        logits = logits + b3[...]
        e = jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True))
        softmax = e / jnp.sum(e, axis=1, keepdims=True)
        # backward of -mean(preds * targets) over the batch's real rows and the 10 classes
        real = jnp.minimum(shape.samples - i * b, b).astype(f32)
        d_preds = y_ref[rows, :].astype(f32) * (-1.0 / (real * N_TARGETS))
        d_out = d_preds - softmax * jnp.sum(d_preds, axis=1, keepdims=True)  # held: a (batch, 16) value

        def layer2(j: Any) -> None:  # d_z2 = relu'(z2) * (d_logits . w3), at the weights before this step's update
            cols = tile(j)
            d_a = dot(d_out, w3[:, cols], _NN).astype(dtype).astype(f32)
            d_z2[:, cols] = jnp.where(z2[:, cols] > 0, d_a, 0.0).astype(d_z2.dtype)

        tiles(HIDDEN // TILE, layer2)
        sync()

        def layer1(j: Any) -> None:  # d_z1 = relu'(z1) * (d_z2 . w2)
            cols = tile(j)
            d_a = jax.lax.fori_loop(
                0,
                HIDDEN // TILE,
                lambda k, acc: acc + dot(d_z2[all_rows, tile(k)], w2[tile(k), cols], _NN),
                jnp.zeros((b, TILE), f32),
            )
            d_z1[:, cols] = jnp.where(z1[:, cols] > 0, d_a.astype(dtype).astype(f32), 0.0).astype(d_z1.dtype)

        tiles(HIDDEN // TILE, layer1)
        sync()  # every gradient taken, every read of the weights before their update done

        # the update, every gradient taken: w3, w2, w1 and their biases
        def w3_update(j: Any) -> None:
            cols = tile(j)
            w3[:, cols] = w3[:, cols] - step_size * dot(d_out, a2[all_rows, cols], _TN)

        tiles(HIDDEN // TILE, w3_update)
        b3[...] = b3[...] - step_size * jnp.sum(d_out, axis=0, keepdims=True)
        update(lambda ms, ns: dot(d_z2[all_rows, ms], a1[all_rows, ns], _TN), HIDDEN, HIDDEN, w2)
        bias_update(d_z2, b2)
        update(lambda ms, ns: dot(d_z1[all_rows, ms], x_ref[rows, ns], _TN), HIDDEN, f, w1)
        bias_update(d_z1, b1)
        sync()  # the next step reads the updated weights
        return carry

    jax.lax.fori_loop(0, shape.steps, step, 0)


def cost(shape: Layout, n_params: int, image_bytes: int) -> pl.CostEstimate:
    """What one epoch of the kernel computes and moves at the padded shapes, for XLA's cost analysis."""
    b, f, c, h = shape.batch, shape.features, shape.classes, HIDDEN
    products = 2 * b * (f * h + h * h + h * c) * 2 + 2 * b * (h * h + h * c)
    return pl.CostEstimate(
        flops=shape.steps * products,
        transcendentals=shape.steps * b * c,
        bytes_accessed=shape.steps * b * (f * image_bytes + c * 2) + 2 * 4 * n_params,
    )


def workspaces(shape: Layout, dtype: Any) -> list[jax.ShapeDtypeStruct]:
    """The `WORKSPACES`' shapes: the pre-activations in float32, the rest in the products' operand type."""
    dtypes = {"z1": jnp.float32, "z2": jnp.float32}
    struct = jax.ShapeDtypeStruct
    return [struct((shape.batch, HIDDEN), dtypes.get(name, dtype)) for name in WORKSPACES]  # type: ignore[no-untyped-call]


def epoch_call(shape: Layout, step_size: float, precision: str, interpret: bool = False) -> Any:
    """The jitted epoch ``(params, images, targets) -> params`` of the kernel; ``interpret``: Pallas's interpreter."""
    dtype = BF16 if precision == "bf16" else jnp.float32
    dot_precision = DOT_PRECISION[precision]
    body = functools.partial(
        _kernel, shape=shape, step_size=step_size, dtype=dtype, precision=dot_precision, barriers=not interpret
    )

    def run(params: Params, x: jax.Array, y: jax.Array) -> Params:
        features = params[0][0].shape[1]
        held = kernel_params(params, shape.features, classes=shape.classes)
        extra: dict[str, Any] = {}
        if not interpret:
            from jax.experimental.pallas import triton as pltriton

            extra["compiler_params"] = pltriton.CompilerParams(num_warps=NUM_WARPS, num_stages=1)
        n_params = sum(int(np.prod(p.shape)) for p in held)
        out = pl.pallas_call(
            body,
            out_shape=[
                *(jax.ShapeDtypeStruct(p.shape, p.dtype) for p in held),  # type: ignore[no-untyped-call]
                *workspaces(shape, dtype),
            ],
            input_output_aliases={2 + k: k for k in range(len(held))},  # the params updated in place
            cost_estimate=cost(shape, n_params, x.dtype.itemsize),
            interpret=interpret,
            **extra,
        )(x, y, *held)
        return model_params(cast(Sequence[jax.Array], out[: len(held)]), features)

    return jax.jit(run)

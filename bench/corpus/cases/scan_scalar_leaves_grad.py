"""jax-ml/jax#40150 (https://github.com/jax-ml/jax/issues/40150): "XLA - CPU thunk runtime: `jax.grad` through
`lax.scan` is 60x slower when the carry holds many scalar leaves", found in pyhgf (a JAX package whose model state is
a dictionary of many scalars). Since jaxlib 0.4.32, where the thunk runtime became the default, the gradient runs 60x
slower than on 0.4.31 (on 0.4.32, 28.6 ms with that runtime against 0.47 ms without it, the same optimized HLO);
``--xla_cpu_use_thunk_runtime=false`` undoes it up to 0.6.2; on 0.11.1 still ~35x. Here a program of that form: the
gradient of a loss over a ``lax.scan`` of 200 steps whose carry is a dictionary of 48 float32 scalars, each updated
from itself and its neighbour each step. Releases: 0.4.30, 0.4.31, 0.4.33 (0.4.32 is yanked from the package index)."""

import jax
import jax.numpy as jnp

LEAVES, STEPS = 48, 200


def step(carry, x):
    new = {}
    for i in range(LEAVES):
        a, b = carry[f"s{i}"], carry[f"s{(i + 1) % LEAVES}"]
        new[f"s{i}"] = 0.9 * a + 0.1 * jnp.tanh(b * x + 0.01 * i)
    return new, new["s0"]


def loss(params, xs):
    carry = {f"s{i}": params[i] for i in range(LEAVES)}
    _, ys = jax.lax.scan(step, carry, xs)
    return jnp.sum(ys**2)


gradient = jax.grad(loss)


def make():
    params = jnp.linspace(-1.0, 1.0, LEAVES, dtype=jnp.float32)
    xs = jnp.sin(jnp.arange(STEPS, dtype=jnp.float32) * 0.1)
    return gradient, (params, xs)

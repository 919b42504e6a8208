"""jax-ml/jax#25190 (https://github.com/jax-ml/jax/issues/25190): "Slowdown of jax::lax::while_loop on CPU between
0.4.31 and 0.4.33". The reporter's loop walks an array one element a step, a scalar max and an index increment per
iteration: 2 s on 0.4.31, 42 s on 0.4.33 and later (pmapped over 96 host devices). Here on one device, 2**16 steps.
Releases: 0.4.31 (fast), 0.4.33 (slow; 0.4.32 was withdrawn from the package index). On 0.4.33 the old CPU runtime
(``--xla_cpu_use_thunk_runtime=false``) undoes it (measured here; the thunk runtime became the default in 0.4.32)."""

import jax.numpy as jnp
from jax import lax

STEPS = 2**16


def episode(foo):
    stop = jnp.max(foo)
    return lax.while_loop(
        lambda u: u[0] < stop,
        lambda u: (jnp.maximum(u[0], foo[u[1]]), u[1] + 1),
        (0, 0),
    )[1]


def make():
    return episode, (jnp.arange(STEPS),)

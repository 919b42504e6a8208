"""pyrddlgym-project/pyRDDLGym-jax#16 (https://github.com/pyrddlgym-project/pyRDDLGym-jax/issues/16):
"Incompatibility with jax 0.6.0". Code that updates its parameters with `jax.tree_map` fails on 0.6.0 with
"AttributeError: jax.tree_map was removed in JAX v0.6.0" (deprecated since 0.4.26; the same report came from
waymax, MaxText, cryojax and others). Here a jitted SGD step of a small MLP written that way. Releases: 0.5.3
(runs, with a deprecation warning), 0.6.0 (fails)."""

import jax
import jax.numpy as jnp
import numpy as np

SIZES = (64, 128, 10)


def loss(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


def sgd_step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def make():
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((m, n)).astype(np.float32) * 0.1, np.zeros(n, np.float32))
        for m, n in zip(SIZES[:-1], SIZES[1:])
    ]
    x = rng.standard_normal((256, SIZES[0])).astype(np.float32)
    y = rng.standard_normal((256, SIZES[-1])).astype(np.float32)
    return sgd_step, (params, x, y)

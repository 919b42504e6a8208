"""A user's workload for the explanation tests: a recurrent cell run 2,000 times in one `lax.while_loop`, so that
its operations (a matrix-vector product, an add, a tanh) run inside the loop's body."""

import jax
import jax.numpy as jnp
import numpy as np

STEPS, WIDTH = 2_000, 128


def loop(weights, state):
    def body(carry):
        i, h = carry
        return i + 1, jnp.tanh(weights @ h + 0.5)

    return jax.lax.while_loop(lambda carry: carry[0] < STEPS, body, (0, state))[1]


def make():
    rng = np.random.default_rng(0)
    weights = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    return loop, (weights, np.zeros(WIDTH, np.float32))

"""An example workload for `jaxmlp sweep --workload bench/workloads/scan_heavy.py:make` (not the MLP).

A recurrent cell run for 10,000 steps inside one `lax.scan`: each step is a small matrix-vector product and a
tanh on a 128-wide state, so the time goes into XLA's loop and per-iteration overhead rather than into large
kernels. That is where CPU runtime changes between jaxlib releases showed (the thunk runtime of 0.4.32).
"""

import jax
import jax.numpy as jnp
import numpy as np

STEPS, WIDTH = 10_000, 128


def recurrence(weights, inputs, state):
    def step(h, x):
        h = jnp.tanh(weights @ h + x)
        return h, h.sum()

    final, sums = jax.lax.scan(step, state, inputs)
    return final, sums


def make():
    rng = np.random.default_rng(0)
    weights = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    inputs = rng.standard_normal((STEPS, WIDTH)).astype(np.float32)
    return recurrence, (weights, inputs, np.zeros(WIDTH, np.float32))

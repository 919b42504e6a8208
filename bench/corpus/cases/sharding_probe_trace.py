"""jax-ml/jax#40041 (https://github.com/jax-ml/jax/pull/40041): "Avoid quadratic tracing behaviour". A traced
array's ``.sharding`` raises AttributeError so that ``getattr(x, "sharding", None)`` works, but the error message
walked every equation traced so far (``_origin_msg``, ``find_progenitors``), so code that probes it once an operation
while tracing (flax NNX's ``Variable.set_value`` does, on every assignment) traces in time quadratic in the program's
length: the report's gemma3-27b MaxText model without scanned layers was "prohibitively slow to trace". The message
was cut to its first line; measured here, 0.11.2 is the first release with it (its ``Tracer.sharding`` no longer
calls ``_origin_msg``). Here the report's pattern: 600 small elementwise steps, each result probed once, so the
compile time (trace, lower and XLA) is mostly the probes' on the releases before. Releases: 0.11.0, 0.11.1, 0.11.2,
0.12.0."""

import jax.numpy as jnp

STEPS = 600


def probed_steps(x):
    for _ in range(STEPS):
        x = x * 1.0001 + 0.5
        getattr(x, "sharding", None)  # flax NNX's probe on each assignment: raises AttributeError while tracing
    return x


def make():
    return probed_steps, (jnp.ones((4,), jnp.float32),)

"""jax-ml/jax#37465 (https://github.com/jax-ml/jax/issues/37465): "CPU performance regression". A nearest-neighbour
regulariser (the sum of squared differences along each axis of a 3-D volume) got slower twice on CPU: 0.5.0 ->
0.5.3 by 1.8x and 0.7.2 -> 0.8.0 by 1.4x (256**3 float32 volume, the reporter's timings of the jitted function and
of its gradient). Here the function on a 192**3 volume. On this machine the same release also made its compile
several times longer (not in the report)."""

import jax
import jax.numpy as jnp

SHAPE = (192, 192, 192)


def reg_square(x):
    cost = 0.0
    for i in range(x.ndim):
        xd = jnp.diff(x, axis=i)
        cost += jnp.sum(jnp.square(xd))
    return cost


def make():
    return reg_square, (jax.random.normal(jax.random.PRNGKey(0), SHAPE, dtype="float32"),)

"""jax-ml/jax#31319 (https://github.com/jax-ml/jax/issues/31319): "`cache_miss` caused by `jax.pure_callback`, silent
recompilation". A jitted function that calls ``jax.pure_callback`` missed the C++ fast path of ``jit`` on every call:
each call went back through Python's dispatch (the reporter saw "~an order of mag" slower jitted functions, on CPU
and GPU, "with a wide range of jax versions (back to 0.4.*)"; found through lineax). Fixed by jax-ml/jax#31341
(August 2025); measured here, 0.7.2 is the first release with the fix. Here the reporter's example, its input the
maintainer's smaller repro's (``jnp.arange(5.0)``): a tiny jitted function whose one operation is a ``pure_callback``
to ``np.sin`` on 5 numbers, called through the jitted function itself (its fast path), so each timed call is the time
per call of a tiny jitted function (its program given, so that `jaxmlp sweep explain` can compare its optimized HLO).
Releases: 0.7.0, 0.7.1, 0.7.2."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxmlp.measure.programs import Program
from jaxmlp.measure.workload import Workload


def f_host(x):
    return np.sin(x).astype(x.dtype)


@jax.jit
def f(x):
    result_shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.pure_callback(f_host, result_shape, x, vmap_method="sequential")


def make():
    x = jnp.arange(5.0)
    return Workload(
        "pure_callback_dispatch",
        f,
        (x,),
        lambda: jax.block_until_ready(f(x)),  # compiled by a call: the calls timed go through jit's own cache
        lambda: [Program("pure_callback_dispatch", f, (x,))],  # its HLO, for `jaxmlp sweep explain`
    )

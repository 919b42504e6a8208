"""openxla/xla#35719 (https://github.com/openxla/xla/issues/35719): "Compiling with XLA:CPU causes OOM with unrolled
for loop". A jitted function counts every pair of columns of a table (``ravel_multi_index`` of the pair, then
``bincount``) in a Python loop: each step makes a large index array that the next step does not need, but XLA:CPU
schedules the steps so that every step's index array is allocated at once (the reporter: 10 columns of 10**8 uint8
values, 100 index arrays, killed for memory on CPU, fine without jit and on GPU; the report names no release). Here
the reporter's function on 4 columns of 2 * 10**6 values (16 index arrays of 8 MB; a call takes seconds on 0.5.0 and
0.5.1, whose ``bincount`` is slow); measured here, 0.5.1 is the first release that keeps them all (XLA's temporary
memory 15 MiB on 0.5.0, 130 MiB on 0.5.1 and 0.5.3; at 10**7 values 76 and 649 MiB). The process's peak resident
memory (its ``VmHWM``) is JAX's own, the 8 MB table and the program's temporaries. Releases: 0.5.0, 0.5.1, 0.5.3."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

N = 2_000_000
KS = (35, 27, 42, 18)  # each column's number of categories (the report draws them from 10 to 49)


@functools.partial(jax.jit, static_argnums=1)
def pairwise_bincounts(data, ks):
    results = []
    for kx, x in zip(ks, data):
        for ky, y in zip(ks, data):
            idx = jnp.ravel_multi_index((x, y), (kx, ky), mode="clip")
            results.append(jnp.bincount(idx, length=kx * ky).reshape(kx, ky))
    return tuple(results)


def counts(*data):
    return pairwise_bincounts(data, KS)


def make():
    rng = np.random.default_rng(0)
    return counts, tuple(jnp.asarray(rng.integers(0, k, size=N, dtype=np.uint8)) for k in KS)

"""openxla/xla#45912 (https://github.com/openxla/xla/issues/45912): "Regression in jaxlib 0.7.2, CPU and GPU: donated
buffer no longer updated in place when a loop reads the intermediate value, peak memory grows by a full array copy".
A jitted function whose input is donated computes an elementwise update of it (``exp``), a ``fori_loop`` reads that
intermediate, and a second elementwise update gives the output, which takes the donated buffer. Up to jaxlib 0.7.1
the whole chain ran in place in the donated allocation (``temp_size_in_bytes`` about 0); from 0.7.2 the intermediate
gets a temporary buffer of its own, the size of the whole array, so the peak grows by a full copy (the reporter: on
CPU and GPU, still so on 0.11.0). Here the reporter's function on twice the reporter's size (2**28 float32 numbers,
1 GiB, so that the array, not JAX's own memory, is most of the peak: JAX's own grows by 18 to 21 MiB from 0.7.0 to
0.7.1, 2.6 to 3.1% of the peak at the reporter's size); each call donates a fresh array and keeps only a slice of the
output, so the process's peak resident memory (its ``VmHWM``) is JAX's own, the donated array and whatever temporary
the program needs. Releases: 0.7.0, 0.7.1, 0.7.2."""

import functools

import jax
import jax.numpy as jnp
from jax import lax

from jaxmlp.measure.programs import Program
from jaxmlp.measure.workload import Workload

N = 1 << 28  # float32: 1 GiB (the report: 2**27, 512 MiB)
SPEC = jax.ShapeDtypeStruct((N,), jnp.float32)


@functools.partial(jax.jit, donate_argnums=0)
def update(x_initial):
    x_intermediate = jnp.exp(x_initial)  # exp: not recomputed inside the last fusion, as in the report

    def body(i, s):
        return s + x_intermediate[i * (N // 8)]

    s = lax.fori_loop(0, 8, body, jnp.zeros((), x_initial.dtype))
    return x_intermediate + s  # the output takes the donated buffer


def call():
    """One call: a fresh array donated to ``update``; the 1 GiB output dropped but for a slice."""
    return update(jnp.zeros((N,), jnp.float32))[:8]


def make():
    return Workload(
        "donated_loop_update",
        call,
        (),
        lambda: update.lower(SPEC).compile(),
        lambda: [Program("donated_loop_update", update, (SPEC,))],  # its HLO and temp bytes, for `sweep explain`
    )

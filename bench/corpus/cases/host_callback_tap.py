"""apax-hub/apax#360 (https://github.com/apax-hub/apax/issues/360): "incompatibility with jax 0.4.35". Code that
reports progress from inside a jitted function with `jax.experimental.host_callback` (deprecated since 0.4.26) fails
on 0.4.35, where every function of the module raises NotImplementedError (jax-ml/jax#20385 gives the migration to
`io_callback`; 0.4.34 already runs it through `io_callback`). Here a jitted loss that taps its value with
`host_callback.id_tap`, then waits with `barrier_wait` (the function apax's report names). Releases: 0.4.33, 0.4.34
(run; 0.4.34 about 10x faster here, through `io_callback`), 0.4.35 (fails)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import host_callback

from jaxmlp.measure.workload import Workload

TAPPED = []


def loss(w, x, y):
    value = jnp.mean((jnp.tanh(x @ w) - y) ** 2)
    return host_callback.id_tap(lambda v, _: TAPPED.append(float(v)), value)


_jitted = jax.jit(loss)


def tapped_loss(w, x, y):
    out = _jitted(w, x, y)
    host_callback.barrier_wait()
    return out


def make():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 64)).astype(np.float32) * 0.05
    x = rng.standard_normal((512, 256)).astype(np.float32)
    y = rng.standard_normal((512, 64)).astype(np.float32)
    return Workload("host_callback_tap", tapped_loss, (w, x, y), lambda: _jitted.lower(w, x, y).compile())

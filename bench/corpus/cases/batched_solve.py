"""jax-ml/jax#36799 (https://github.com/jax-ml/jax/issues/36799), a comment in the thread: "I see a x2 slowdown
between 0.4.31 and 0.4.33 for many small batched solves also on float32". The program is the one the same
commenter filed as jax-ml/jax#36927: 86,268 small (3x3, float32) systems solved at once by `jnp.linalg.solve`.
Releases: 0.4.31 (fast), 0.4.33 (slower); ``--xla_cpu_use_thunk_runtime=false`` undoes it on 0.4.33 (measured here).
(#36927's own finding, 33.3 ms on 0.9.2 and 87 ms on 0.10.0, did not reproduce on this machine.)"""

import jax
import jax.numpy as jnp

BATCH = 182 * 474


def make():
    a = jax.random.normal(jax.random.key(0), (BATCH, 3, 3), dtype=jnp.float32)
    a = a @ jnp.swapaxes(a, -1, -2) + 1e-2 * jnp.eye(3, dtype=jnp.float32)
    b = jax.random.normal(jax.random.key(1), (BATCH, 3, 1), dtype=jnp.float32)
    return jnp.linalg.solve, (a, b)

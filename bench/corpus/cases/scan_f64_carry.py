"""jax-ml/jax#36799 (https://github.com/jax-ml/jax/issues/36799): "lax.scan with float64 3x3 matrix carry is ~10x
slower on CPU in JAX 0.4.33 vs 0.4.31 (float32 unaffected)". Found in tinygp's quasiseparable Cholesky: an O(n)
`lax.scan` whose carry is a float64 3x3 matrix; the reporter measured 10.2x at n=2000 (0.9.1 against 0.4.31) and
bisected it to 0.4.33, where ``--xla_cpu_use_thunk_runtime=false`` undoes it (on releases that still have the old
runtime). The reporter's reproducer is not copied here: this is a scan of the same form, a 3x3 float64 carry
updated by small matrix products each step, n=2000."""

import jax
import jax.numpy as jnp
import numpy as np

N, M = 2000, 3


def cholesky_scan(p, q, a, d):
    def step(carry, data):
        pk, qk, ak, dk = data
        ck = jnp.sqrt(dk - pk @ carry @ pk)
        wk = (qk - ak @ carry @ pk) / ck
        carry = ak @ carry @ ak.T + jnp.outer(wk, wk)
        return carry, (ck, wk)

    return jax.lax.scan(step, jnp.zeros((M, M), p.dtype), (p, q, a, d))


def make():
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    p = rng.standard_normal((N, M)) * 0.1
    q = rng.standard_normal((N, M)) * 0.1
    a = np.tile(np.eye(M) * 0.5, (N, 1, 1)) + rng.standard_normal((N, M, M)) * 0.01
    d = np.full(N, 4.0)
    return cholesky_scan, tuple(jnp.asarray(x, jnp.float64) for x in (p, q, a, d))

"""jax-ml/jax#26021 (https://github.com/jax-ml/jax/issues/26021): "CPU Slowdown introduced in 0.4.32 and in
following versions". The reporter's speed test (cbfpy: a control barrier function's small quadratic program solved
each control step on a CPU with qpax, a primal-dual interior-point solver in JAX) ran at about 1/3 the speed from
0.4.32 (0.4.33 and later alike) against 0.4.31, and setting ``--xla_cpu_use_thunk_runtime=false`` "does not fix the
problem, and in fact makes the issue much worse"; on 0.6.0 still 2-3x slower. The reporter's test needs cbfpy and
qpax: this is a program of the same form, a sequence of small QPs (8 variables, 12 inequalities, float64) each
solved by 12 primal-dual interior-point iterations in a ``fori_loop`` (the KKT system solved by ``jnp.linalg.solve``), a
``lax.scan`` over 50 control steps. Releases: 0.4.30, 0.4.31, 0.4.33 (0.4.32 is yanked from the package index)."""

import jax
import jax.numpy as jnp
import numpy as np

N, M, STEPS, ITERATIONS = 8, 12, 50, 12


def solve_qp(q_mat, q, g_mat, h):
    """min 1/2 x'Qx + q'x subject to Gx <= h, by primal-dual interior-point iterations on the KKT system."""

    def iteration(_, xsz):
        x, s, z = xsz
        r_dual = q_mat @ x + q + g_mat.T @ z
        r_prim = g_mat @ x + s - h
        mu = s @ z / M
        r_cent = s * z - 0.1 * mu
        w = z / s
        kkt = q_mat + g_mat.T @ (w[:, None] * g_mat)
        rhs = -(r_dual + g_mat.T @ ((z * r_prim - r_cent) / s))
        dx = jnp.linalg.solve(kkt, rhs)
        ds = -r_prim - g_mat @ dx
        dz = -(r_cent + z * ds) / s
        alpha = jnp.minimum(1.0, 0.99 * jnp.min(jnp.where(dz < 0, -z / dz, jnp.inf)))
        alpha = jnp.minimum(alpha, 0.99 * jnp.min(jnp.where(ds < 0, -s / ds, jnp.inf)))
        return x + alpha * dx, s + alpha * ds, z + alpha * dz

    return jax.lax.fori_loop(0, ITERATIONS, iteration, (jnp.zeros(N), jnp.ones(M), jnp.ones(M)))[0]


def control_loop(q_mat, g_mat, h, targets):
    def step(state, target):
        u = solve_qp(q_mat, -(q_mat @ target) + 0.1 * state, g_mat, h + 0.01 * jnp.sum(state))
        return 0.9 * state + 0.1 * u, u

    return jax.lax.scan(step, jnp.zeros(N), targets)


def make():
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N))
    q_mat = a @ a.T + N * np.eye(N)
    g_mat = rng.standard_normal((M, N))
    h = np.abs(rng.standard_normal(M)) + 1.0
    targets = rng.standard_normal((STEPS, N))
    return control_loop, tuple(jnp.asarray(v, jnp.float64) for v in (q_mat, g_mat, h, targets))

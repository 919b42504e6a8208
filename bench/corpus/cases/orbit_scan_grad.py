"""kemasuda/jnkepler#18 (https://github.com/kemasuda/jnkepler/issues/18): "Severe CPU slowdown on JAX >=0.4.32 due to
thunk runtime", in the tracker of jnkepler, a JAX package that fits planetary transit times by integrating the
planets' orbits. Its runtime benchmark, on jax 0.4.31 against 0.4.32: the value 1.4 ms -> 3.0 ms a call, the gradient
7.0 ms -> 100 ms (x14); with ``--xla_cpu_use_thunk_runtime=false`` on 0.4.32, 1.2 ms and 5.9 ms (the flag undoes it).
The package's documentation pins jax < 0.4.32. The benchmark is not copied here (it needs jnkepler): this is a program
of the same form, the gradient of a loss over a symplectic N-body integration in float64 (a ``lax.scan`` step a
Kepler drift of each planet, its Kepler equation solved by Newton's method, then the planets' mutual kicks; 3
planets, 300 steps, 4 Newton iterations), the many small kernels the report names. Releases: 0.4.30, 0.4.31,
0.4.33 (0.4.32 is yanked from the package index)."""

import jax
import jax.numpy as jnp
import numpy as np

STEPS, DT, NEWTON = 300, 1.0, 4
G = 2.959122082855911e-4  # AU^3 / (solar mass day^2)


def kepler_drift(x, v, mu, dt):
    """Each planet moved ``dt`` along its two-body orbit (Danby's f and g functions of the eccentric anomaly)."""
    r0 = jnp.sqrt(jnp.sum(x * x, axis=-1))
    a = 1.0 / (2.0 / r0 - jnp.sum(v * v, axis=-1) / mu)
    n = jnp.sqrt(mu / a**3)
    ec, es = 1.0 - r0 / a, jnp.sum(x * v, axis=-1) / jnp.sqrt(mu * a)
    de = n * dt
    for _ in range(NEWTON):
        s, c = jnp.sin(de), jnp.cos(de)
        f = de - ec * s + es * (1.0 - c) - n * dt
        de = de - f / (1.0 - ec * c + es * s)
    s, c = jnp.sin(de), jnp.cos(de)
    r = a * (1.0 - ec * c + es * s)
    f, g = 1.0 - a / r0 * (1.0 - c), dt + (s - de) / n
    fdot, gdot = -a * a * n * s / (r * r0), 1.0 - a / r * (1.0 - c)
    return f[:, None] * x + g[:, None] * v, fdot[:, None] * x + gdot[:, None] * v


def kicks(x, m):
    d = x[None, :, :] - x[:, None, :]
    r2 = jnp.sum(d * d, axis=-1) + jnp.eye(x.shape[0])
    w = m[None, :] / (r2 * jnp.sqrt(r2)) * (1.0 - jnp.eye(x.shape[0]))
    return G * jnp.einsum("ij,ijk->ik", w, d)


def sky_positions(params):
    x0, v0, m = params
    mu = G * (1.0 + m)

    def step(carry, _):
        x, v = carry
        v = v + 0.5 * DT * kicks(x, m)
        x, v = kepler_drift(x, v, mu, DT)
        v = v + 0.5 * DT * kicks(x, m)
        return (x, v), x[:, 0]

    _, xs = jax.lax.scan(step, (x0, v0), None, length=STEPS)
    return xs


def loss(params):
    return jnp.sum(jnp.tanh(sky_positions(params) / 0.01) ** 2)


gradient = jax.grad(loss)


def make():
    jax.config.update("jax_enable_x64", True)
    a = np.array([0.1, 0.2, 0.35])
    x0, v0 = np.zeros((3, 3)), np.zeros((3, 3))
    x0[:, 0] = a
    v0[:, 1] = np.sqrt(G / a) * 1.02
    m = np.array([3e-5, 1e-5, 2e-5])
    return gradient, ((jnp.asarray(x0), jnp.asarray(v0), jnp.asarray(m)),)

"""jax-ml/jax#26145 (https://github.com/jax-ml/jax/issues/26145): "CPU slowdown with new runtime (v0.4.32 and
newer)". The reporter's differentiable neuron simulator (jaxley, float64 ODEs of ion channels, exponentials
throughout) on a CPU: run time 2.07 s on jax 0.4.31, 11.3 s on 0.5.0, 2.38 s on 0.6.0 (compile 7.7 s, 13.6 s, 3.9
s); a maintainer answers that the main change they know of "was to make the exponential function on float64 much
faster". The simulator needs jaxley: this is a program of the same form without it, an adaptive ODE solve in float64
whose vector field is an MLP with tanh and exp activations and a linearly interpolated input (Tsit5's tableau, an
embedded error estimate and a PI step-size controller accepting or rejecting each step, in a ``lax.while_loop``); what
is timed is its steady call, which should fall at 0.6.0. Releases: 0.5.0, 0.5.3, 0.6.0."""

import jax
import jax.numpy as jnp
import numpy as np

WIDTH, STATE, KNOTS = 32, 4, 64
C = (0.161, 0.327, 0.9, 0.9800255409045097, 1.0, 1.0)
A = (
    (0.161,),
    (-0.008480655492356989, 0.335480655492357),
    (2.897153057105493, -6.359448489975075, 4.3622954328695815),
    (5.325864828439257, -11.748883564062828, 7.4955393428898365, -0.09249506636175525),
    (5.86145544294642, -12.92096931784711, 8.159367898576159, -0.071584973281401, -0.028269050394068383),
    (0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081, 2.324710524099774),
)
B_ERR = (-0.00178001105222577714, -0.0008164344596567469, 0.007880878010261995, -0.1447110071732629,
         0.5823571654525552, -0.45808210592918697, 1.0 / 66.0)  # fmt: skip


def field(t, y, params):
    w1, b1, w2, b2, w3, ts, us = params
    u = jnp.interp(t, ts, us)
    h = jnp.tanh(w1 @ jnp.concatenate([y, jnp.array([u])]) + b1)
    h = jnp.exp(-(h**2)) * jnp.tanh(w2 @ h + b2)
    return w3 @ h - 0.1 * y


def solve(y0, params, t1=10.0):
    def step(state):
        t, y, dt, steps = state
        dt = jnp.minimum(dt, t1 - t)
        ks = [field(t, y, params)]
        for c, row in zip(C, A):
            ks.append(field(t + c * dt, y + dt * sum(a * k for a, k in zip(row, ks)), params))
        y_new = y + dt * sum(a * k for a, k in zip(A[-1], ks))
        err = dt * sum(b * k for b, k in zip(B_ERR, ks + [field(t + dt, y_new, params)]))
        scale = 1e-8 + 1e-6 * jnp.maximum(jnp.abs(y), jnp.abs(y_new))
        norm = jnp.sqrt(jnp.mean((err / scale) ** 2))
        accept = norm <= 1.0
        factor = jnp.clip(0.9 * norm ** (-0.7 / 5) * 1.0, 0.2, 10.0)
        return (jnp.where(accept, t + dt, t), jnp.where(accept, y_new, y), dt * factor, steps + 1)

    state = (0.0, y0, 0.01, 0)
    return jax.lax.while_loop(lambda s: (s[0] < t1) & (s[3] < 4096), step, state)[1]


def make():
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    params = (
        rng.standard_normal((WIDTH, STATE + 1)) / 3,
        np.zeros(WIDTH),
        rng.standard_normal((WIDTH, WIDTH)) / 6,
        np.zeros(WIDTH),
        rng.standard_normal((STATE, WIDTH)) / 6,
        np.linspace(0.0, 10.0, KNOTS),
        np.sin(np.linspace(0.0, 10.0, KNOTS)),
    )
    params = tuple(jnp.asarray(p, jnp.float64) for p in params)
    y0 = jnp.ones(STATE, jnp.float64)
    return solve, (y0, params)

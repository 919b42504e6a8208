"""jax-ml/jax#31282 (https://github.com/jax-ml/jax/issues/31282): "Slowdown in loops from 0.7.0 to 0.7.1". Found by
Equinox's loop speed tests (patrick-kidger/equinox#1088): a `lax.scan` that writes one element of a large buffer a
step (a scatter under `vmap`), linearized. The reporter: 0.3 s on 0.7.0, 10 s on 0.7.1 (100,000 steps; the thread
suspects the in-place update became a copy of the buffer). Equinox then excluded 0.7.0 and 0.7.1 and moved to 0.7.2.
Here 10,000 steps on a 10,000-element buffer, batch 2 (the copies make 0.7.1's time and memory grow with the
square). Releases: 0.7.0 (fast), 0.7.1 (slow), 0.7.2 (fast again)."""

import jax
import jax.lax as lax
import jax.numpy as jnp
import jax.random as jr

SIZE = 10_000


@jax.vmap
def equinox_pattern(init_step, init_xs):
    def loop_fn(xs0):
        def body(carry, _):
            step, xs = carry
            i = jr.randint(jr.PRNGKey(step), shape=(), minval=0, maxval=step + 1)
            xs = xs.at[step].set(2 * jnp.tanh(xs[i]))
            return (step + 1, xs), None

        (_, xs_final), _ = lax.scan(body, (init_step, xs0), None, length=SIZE)
        return xs_final

    return jax.linearize(loop_fn, init_xs)[1](jnp.ones_like(init_xs))


def make():
    return equinox_pattern, (jnp.zeros(2, jnp.int32), jnp.zeros((2, SIZE)))

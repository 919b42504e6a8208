"""Training epochs: one definition of each input pipeline, shared by every caller.

`jaxmlp train`, the benchmarks, the profiler and the version sweep all run an
epoch through the functions here. Each takes params and returns the new params
once they are ready on the device (an epoch's clock may stop right after).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import jax
import jax.numpy as jnp

from jaxmlp.model import N_TARGETS, STEP_SIZE, Params, one_hot, update
from jaxmlp.timing import compile_seconds

Step = Callable[[Params, jax.Array, jax.Array], Params]


class CompiledStep:
    """The jitted `update`, compiled ahead of time for each batch size an epoch yields.

    Calling it runs the executable for the batch's size, so no compilation lands
    inside an epoch; an unforeseen size is compiled on first use (and shows up in
    the epoch's compile time).
    """

    def __init__(self, step_size: float = STEP_SIZE):
        self.step_size = float(step_size)
        self._executables: dict[tuple[int, ...], Callable] = {}

    def compile(self, params: Params, sizes: Sequence[int], n_features: int = 784) -> float:
        """Lower and compile for each batch size; returns the seconds it took."""
        with compile_seconds() as spent:
            for size in sizes:
                x = jax.ShapeDtypeStruct((size, n_features), jnp.float32)
                y = jax.ShapeDtypeStruct((size, N_TARGETS), jnp.float32)
                self._executables[x.shape] = update.lower(params, x, y, self.step_size).compile()
        return spent.seconds

    def __call__(self, params: Params, x, y) -> Params:
        executable = self._executables.get(x.shape)
        if executable is None:
            executable = self._executables[x.shape] = update.lower(params, x, y, self.step_size).compile()
        return executable(params, x, y, self.step_size)


def seed_epoch(params: Params, loader: Iterable, step: Step) -> Params:
    """The tutorial's epoch as written: numpy batches from the DataLoader, one-hot, one jitted step each."""
    for x, y in loader:
        y = one_hot(y, N_TARGETS)
        params = step(params, x, y)
    return jax.block_until_ready(params)


PIPELINES: dict[str, Callable] = {"seed": seed_epoch}

"""The step and the loops of steps every epoch is made of; each loop returns the params once ready on the device."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from jaxmlp.compat import compiled_facts, cost_analysis
from jaxmlp.model import (
    DEFAULT_BF16_STEP,
    N_TARGETS,
    STEP_SIZE,
    Params,
    data_dtype,
    one_hot,
    precision_scope,
    step_function,
    update,
)


class CompiledStep:
    """The jitted `update` compiled ahead for each batch size; an unforeseen size compiles on first use."""

    def __init__(self, step_size: float = STEP_SIZE, precision: str = "f32", bf16_step: str = DEFAULT_BF16_STEP):
        self.step_size = float(step_size)
        self.precision = precision
        self.update = update if precision == "f32" else jit_step(precision, bf16_step)
        self._executables: dict[tuple[int, ...], Any] = {}

    def _compile(
        self,
        params: Params,
        x: jax.Array | np.ndarray | jax.ShapeDtypeStruct,
        y: jax.Array | np.ndarray | jax.ShapeDtypeStruct,
    ) -> Any:
        with precision_scope(self.precision):
            executable = self.update.lower(params, x, y, self.step_size).compile()
        self._executables[tuple(x.shape)] = executable
        return executable

    def compile(self, params: Params, sizes: Sequence[int], n_features: int = 784, dtype: Any = jnp.float32) -> float:
        """Lower and compile for each batch size (images of ``dtype``); returns the wall time it took, in seconds."""
        start = time.perf_counter()
        for size in sizes:
            # jax.ShapeDtypeStruct is unannotated, hence the ignores
            x = jax.ShapeDtypeStruct((size, n_features), dtype)  # type: ignore[no-untyped-call]
            y = jax.ShapeDtypeStruct((size, N_TARGETS), jnp.float32)  # type: ignore[no-untyped-call]
            self._compile(params, x, y)
        return time.perf_counter() - start

    def compiled_for(self, batch_size: int, n_features: int = 784) -> bool:
        """Whether the step is compiled for ``batch_size``."""
        return (batch_size, n_features) in self._executables

    def facts(self, batch_size: int, n_features: int = 784) -> dict[str, Any]:
        """XLA's cost and memory analysis of the step compiled for ``batch_size`` (`compat.compiled_facts`)."""
        executable = self._executables.get((batch_size, n_features))
        return {} if executable is None else compiled_facts(executable)

    def cost(self, batch_size: int, what: str = "flops", n_features: int = 784) -> float | None:
        """XLA's cost analysis of the step compiled for ``batch_size``: ``what`` (``flops``, ``bytes accessed``)."""
        executable = self._executables.get((batch_size, n_features))
        return None if executable is None else cost_analysis(executable).get(what)

    def flops(self, batch_size: int, n_features: int = 784) -> float | None:
        """FLOPs of one step at ``batch_size`` (`cost`)."""
        return self.cost(batch_size, "flops", n_features)

    def __call__(self, params: Params, x: jax.Array | np.ndarray, y: jax.Array | np.ndarray) -> Params:
        executable = self._executables.get(tuple(x.shape)) or self._compile(params, x, y)
        return cast(Params, executable(params, x, y, self.step_size))


def batch_sizes(n_samples: int, batch_size: int) -> list[int]:
    """The distinct batch sizes of an in-order epoch: ``[batch_size]``, plus the remainder."""
    sizes = [min(batch_size, n_samples)]
    if n_samples > batch_size and n_samples % batch_size:
        sizes.append(n_samples % batch_size)
    return sizes


def slices(n_samples: int, batch_size: int) -> list[slice]:
    """The batches of an in-order epoch, the last one smaller if ``batch_size`` does not divide."""
    return [slice(start, min(start + batch_size, n_samples)) for start in range(0, n_samples, batch_size)]


def seed_epoch(params: Params, loader: Iterable[tuple[Any, Any]], step: Callable[[Params, Any, Any], Params]) -> Params:
    """The tutorial's epoch as written: numpy batches from the DataLoader, one-hot, one jitted step each."""
    for x, y in loader:
        y = one_hot(y, N_TARGETS)
        params = step(params, x, y)
    return cast(Params, jax.block_until_ready(params))  # type: ignore[no-untyped-call]  # unannotated in jax


def run_steps(params: Params, batches: Iterable[tuple[Any, Any]], step: Callable[[Params, Any, Any], Params]) -> Params:
    """One step per ``(x, y)`` batch (images ``(B, 784)``, one-hot targets ``(B, 10)``), in order."""
    for x, y in batches:
        params = step(params, x, y)
    return cast(Params, jax.block_until_ready(params))  # type: ignore[no-untyped-call]  # unannotated in jax


def device_batches(
    images: np.ndarray, targets: np.ndarray, batches: Iterable[slice], device: jax.Device, depth: int
) -> Iterator[tuple[jax.Array, jax.Array]]:
    """Batches put on ``device`` by a background thread, up to ``depth`` ahead of the consumer."""
    ready: queue.Queue[Any] = queue.Queue(maxsize=depth)  # batches, then the end or an exception
    done = object()
    stop = threading.Event()

    def produce() -> None:
        try:
            for s in batches:
                item = jax.device_put((images[s], targets[s]), device)
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except BaseException as e:  # handed to the consumer, raised there
            ready.put(e)
            return
        ready.put(done)

    worker = threading.Thread(target=produce, name="jaxmlp-prefetch", daemon=True)
    worker.start()
    try:
        while (item := ready.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


def jit_step(precision: str, bf16_step: str = DEFAULT_BF16_STEP) -> Any:
    """The jitted SGD step of ``precision`` (`jaxmlp.model.step_function`); ``f32``: the tutorial's `update`."""
    return update if precision == "f32" else _jitted(step_function(precision, bf16_step))


SCAN_UNROLL = {("tpu", "f32"): 1, ("tpu", "bf16"): 4}
"""Steps per iteration of the epoch's scan per backend and precision, the fastest measured (1 where not named)."""


def scan_unroll(platform: str, precision: str = "f32") -> int:
    """`SCAN_UNROLL` of a JAX backend and precision."""
    return SCAN_UNROLL.get((platform, precision), 1)


def sgd_scan(
    params: Params,
    xs: jax.Array,
    ys: jax.Array,
    step_size: float,
    precision: str = "f32",
    bf16_step: str = DEFAULT_BF16_STEP,
    unroll: int = 1,
) -> Params:
    """``len(xs)`` SGD steps of ``precision`` in one XLA program, ``unroll`` steps an iteration."""
    step = step_function(precision, bf16_step)

    def body(p: Params, batch: tuple[jax.Array, jax.Array]) -> tuple[Params, None]:
        return step(p, *batch, step_size), None

    return jax.lax.scan(body, params, (xs, ys), unroll=unroll)[0]


scan_steps = jax.jit(sgd_scan, static_argnames=("precision", "bf16_step", "unroll"))


def padded_batches(
    images: np.ndarray, targets: np.ndarray, batch_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An in-order epoch's batches as one scan takes them, the last padded, and each batch's step-size factor."""
    steps, rest = -(-len(images) // batch_size), len(images) % batch_size
    xs = np.zeros((steps * batch_size, *images.shape[1:]), images.dtype)
    ys = np.zeros((steps * batch_size, *targets.shape[1:]), targets.dtype)
    xs[: len(images)], ys[: len(targets)] = images, targets
    factors = np.ones(steps, np.float32)
    if rest:
        factors[-1] = batch_size / rest
    return xs.reshape(steps, batch_size, -1), ys.reshape(steps, batch_size, -1), factors


def sgd_epoch(
    params: Params,
    xs: jax.Array,
    ys: jax.Array,
    factors: jax.Array,
    step_size: float,
    precision: str = "f32",
    bf16_step: str = DEFAULT_BF16_STEP,
    unroll: int = 1,
) -> Params:
    """An in-order epoch as one `lax.scan` over `padded_batches`' batches, ``unroll`` steps an iteration."""
    step = step_function(precision, bf16_step)

    def body(p: Params, batch: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[Params, None]:
        x, y, factor = batch
        scaled: Any = step_size * factor  # a traced scalar, as the step size of every jitted step is
        return step(p, x, y, scaled), None

    return jax.lax.scan(body, params, (xs, ys, factors), unroll=unroll)[0]


epoch_steps = jax.jit(sgd_epoch, static_argnames=("precision", "bf16_step", "unroll"))

_JITTED: dict[Any, Any] = {}


def _jitted(function: Any) -> Any:
    """One `jax.jit` of ``function`` a process (its compiled programs cached by JAX as `update`'s are)."""
    return _JITTED.setdefault(function, jax.jit(function))


def images_for(images: np.ndarray, precision: str) -> np.ndarray:
    """``images`` in the dtype ``precision`` keeps them in, converted once where the data is prepared."""
    return np.ascontiguousarray(images, dtype=data_dtype(precision))

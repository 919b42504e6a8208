"""The epochs of the pipelines that slice the split's arrays on the JAX side: ``batched``, ``prefetch``, ``scan`` and
``pallas``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import jax
import numpy as np

from jaxmlp.compat import compiled_facts
from jaxmlp.model import Params, precision_scope
from jaxmlp.pipelines import tolerances
from jaxmlp.pipelines.epoch_base import ArrayEpoch, Progress, wrap
from jaxmlp.pipelines.steps import device_batches, run_steps, scan_epoch, scan_steps, scan_unroll


class BatchedEpoch(ArrayEpoch):
    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        batches = ((self.images[s], self.targets[s]) for s in self.batches)
        return run_steps(params, wrap(progress, batches, self.n_steps), self.step)


class PrefetchEpoch(ArrayEpoch):
    depth = 2

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        batches = device_batches(self.images, self.targets, self.batches, self.device, self.depth)
        return run_steps(params, wrap(progress, batches, self.n_steps), self.step)


class ScanEpoch(ArrayEpoch):
    def __init__(self, *args: Any):
        super().__init__(*args)
        n_full = self.n_samples // self.batch_size
        cut = n_full * self.batch_size
        shape = (n_full, self.batch_size)
        self.xs = self._batches(self.images[:cut].reshape(*shape, -1))
        self.ys = self._batches(self.targets[:cut].reshape(*shape, -1))
        self.remainder: tuple[jax.Array, jax.Array] | None = None
        if cut < self.n_samples:
            self.remainder = (self._whole(self.images[cut:]), self._whole(self.targets[cut:]))
        self.scan: jax.stages.Compiled | None = None
        self.last_step: Callable[..., Params] | None = None  # the smaller last batch's step, where not `step`

    def _batches(self, array: np.ndarray) -> jax.Array:
        """The epoch's full batches ``(S, B, ...)`` on the device(s)."""
        return cast(jax.Array, jax.device_put(array, self.device))

    def _whole(self, array: np.ndarray) -> jax.Array:
        return cast(jax.Array, jax.device_put(array, self.device))

    @property
    def unroll(self) -> int:
        return scan_unroll(self.platform)

    def training(self) -> dict[str, Any]:
        return {**super().training(), "scan_unroll": self.unroll}

    def _compile_scan(self, params: Params) -> jax.stages.Compiled:
        with precision_scope(self.precision):
            return scan_steps.lower(
                params,
                self.xs,
                self.ys,
                self.step_size,
                precision=self.precision,
                bf16_step=self.bf16_step,
                unroll=self.unroll,
            ).compile()

    def compile(self, params: Params) -> float:
        """What the epoch runs: the scan over its full batches and the step at the smaller last batch's size."""
        self._keep_shapes(params)
        start = time.perf_counter()
        if self.remainder is not None:
            self.step.compile(params, [len(self.remainder[0])], dtype=self.data_dtype)
        self.scan = self._compile_scan(params)
        return time.perf_counter() - start

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if self.scan is None:
            self.compile(params)
        return scan_epoch(params, self.xs, self.ys, self.remainder, self._run_scan, self.last_step or self.step)

    def facts(self) -> dict[str, Any]:
        scan = {} if self.scan is None else compiled_facts(self.scan)
        return {**super().facts(), **{key.replace("xla_", "xla_scan_", 1): v for key, v in scan.items()}}

    def _run_scan(self, params: Params, xs: jax.Array, ys: jax.Array) -> Params:
        assert self.scan is not None  # compiled by __call__ first
        return cast(Params, self.scan(params, xs, ys, self.step_size))


class PallasEpoch(ArrayEpoch):
    """The whole epoch as one Pallas kernel (`pallas_epoch`): the images and targets padded and put on the device
    once, the kernel compiled ahead; ``interpret`` runs it in Pallas's interpreter (any backend: the tests)."""

    def __init__(self, *args: Any, interpret: bool = False):
        super().__init__(*args)
        from jaxmlp.pipelines import pallas_epoch

        self.kernel = pallas_epoch
        self.interpret = interpret
        if self.precision != "bf16":  # float32 in another order: its exponentials and sums are the kernel's own
            self.tolerance = tolerances.reordered(self.n_steps)
        self.shape = pallas_epoch.layout(self.n_samples, self.batch_size, self.images.shape[1])
        padded = pallas_epoch.pad_batches(self.images, self.targets, self.shape)
        self.xs, self.ys = (cast(jax.Array, jax.device_put(a, self.device)) for a in padded)
        self.compiled: jax.stages.Compiled | None = None

    def compile(self, params: Params) -> float:
        """The kernel's epoch, compiled ahead (the one-device step that gives the FLOPs only when asked for)."""
        self._keep_shapes(params)
        start = time.perf_counter()
        call = self.kernel.epoch_call(self.shape, self.step_size, self.precision, self.interpret)
        with precision_scope(self.precision):
            self.compiled = call.lower(params, self.xs, self.ys).compile()
        return time.perf_counter() - start

    @property
    def bytes_accessed(self) -> float | None:
        """The bytes the kernel moves in an epoch, as its blocks define them: its batches read once, its parameters
        read and written once (`pallas_epoch.cost`)."""
        shapes = jax.eval_shape(lambda p: self.kernel.kernel_params(p, self.shape.features), self.abstract_params)
        n_params = sum(int(np.prod(p.shape)) for p in shapes)
        return float(self.kernel.cost(self.shape, n_params, self.xs.dtype.itemsize).bytes_accessed)

    def facts(self) -> dict[str, Any]:
        kernel = {} if self.compiled is None else compiled_facts(self.compiled)
        return {**super().facts(), **{key.replace("xla_", "xla_kernel_", 1): v for key, v in kernel.items()}}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if self.compiled is None:
            self.compile(params)
        assert self.compiled is not None
        return cast(Params, jax.block_until_ready(self.compiled(params, self.xs, self.ys)))  # type: ignore[no-untyped-call]

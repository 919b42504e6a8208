"""The epochs of the pipelines that slice the split's arrays on the JAX side (``batched``, ``scan``, ...)."""

from __future__ import annotations

import functools
import re
import time
from typing import Any, cast

import jax
import numpy as np

from jaxmlp.compat import compiled_facts, optimized_hlo
from jaxmlp.model import Params, precision_scope
from jaxmlp.pipelines import tolerances
from jaxmlp.pipelines.epoch_base import ArrayEpoch, Progress, wrap
from jaxmlp.pipelines.steps import device_batches, padded_batches, run_steps, scan_unroll, sgd_epoch
from jaxmlp.registry import COMMAND_BUFFER_VARIANTS, COMMAND_BUFFERS

COMMAND_BUFFER_FLAG = "xla_gpu_enable_command_buffer"


def command_buffer_options(pipeline: str) -> dict[str, str | bool]:
    """The XLA compile options that set ``pipeline``'s command buffers for this compile alone; none for XLA's own."""
    types = COMMAND_BUFFERS.get(pipeline)
    return {} if types is None else {COMMAND_BUFFER_FLAG: ",".join(known_command_types(types))}


@functools.cache
def known_command_types(types: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``types`` this XLA knows, each tried alone on a one-operation program, once a process."""

    def known(kind: str) -> bool:
        try:
            jax.jit(lambda x: x + 1).lower(np.float32(0)).compile(compiler_options={COMMAND_BUFFER_FLAG: kind})
        except Exception as e:  # XLA's INVALID_ARGUMENT, as JaxRuntimeError (XlaRuntimeError before 0.4.36)
            if kind in str(e):
                return False
            raise
        return True

    return tuple(kind for kind in types if known(kind))


def command_buffer_count(hlo_text: str) -> int:
    """How many command buffers XLA:GPU made of a program, from its optimized HLO (0 off a GPU)."""
    return len(re.findall(r"^\s*%?command_buffer(?:\.\d+)?\s", hlo_text, re.MULTILINE))


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
    """The epoch as one XLA program (`steps.sgd_epoch`), with the pipeline's command buffers."""

    def __init__(self, *args: Any):
        super().__init__(*args)
        self._prepare()
        xs, ys, factors = padded_batches(self.images, self.targets, self.batch_size)
        self.xs, self.ys, self.factors = self._batches(xs), self._batches(ys), self._whole(factors)
        self.scan: jax.stages.Compiled | None = None

    def _prepare(self) -> None:
        """What the batches' placement needs before they are placed (one device: nothing)."""

    def _batches(self, array: np.ndarray) -> jax.Array:
        """The epoch's full batches ``(S, B, ...)`` on the device(s)."""
        return cast(jax.Array, jax.device_put(array, self.device))

    def _whole(self, array: np.ndarray) -> jax.Array:
        return cast(jax.Array, jax.device_put(array, self.device))

    @property
    def unroll(self) -> int:
        return scan_unroll(self.platform, self.precision)

    def training(self) -> dict[str, Any]:
        trained = {**super().training(), "scan_unroll": self.unroll}
        if self.platform == "gpu" and self.pipeline in COMMAND_BUFFERS:  # only XLA:GPU has command buffers
            flag = command_buffer_options(self.pipeline).get(COMMAND_BUFFER_FLAG)
            trained.update(command_buffer=COMMAND_BUFFER_VARIANTS[self.pipeline], **{COMMAND_BUFFER_FLAG: flag})
        return trained

    def _scan(self, **shardings: Any) -> Any:
        """`steps.sgd_epoch` jitted with this epoch's settings (and ``shardings``: `jax.jit`'s)."""
        epoch = functools.partial(sgd_epoch, precision=self.precision, bf16_step=self.bf16_step, unroll=self.unroll)
        return jax.jit(epoch, **shardings)

    def _compile_scan(self, params: Params) -> jax.stages.Compiled:
        options = command_buffer_options(self.pipeline)
        with precision_scope(self.precision):
            lowered = self._scan().lower(params, self.xs, self.ys, self.factors, self.step_size)
            return cast(jax.stages.Compiled, lowered.compile(compiler_options=options or None))

    def compile(self, params: Params) -> float:
        """The epoch's one program, the scan over its batches."""
        self._keep_shapes(params)
        start = time.perf_counter()
        self.scan = self._compile_scan(params)
        return time.perf_counter() - start

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if self.scan is None:
            self.compile(params)
        assert self.scan is not None
        new = self.scan(params, self.xs, self.ys, self.factors, self.step_size)
        return cast(Params, jax.block_until_ready(new))  # type: ignore[no-untyped-call]  # unannotated in jax

    def facts(self) -> dict[str, Any]:
        scan = {} if self.scan is None else compiled_facts(self.scan)
        if self.scan is not None and self.platform == "gpu":
            scan["xla_command_buffers"] = command_buffer_count(optimized_hlo(self.scan) or "")
        return {**super().facts(), **{key.replace("xla_", "xla_scan_", 1): v for key, v in scan.items()}}


class KernelEpoch(ArrayEpoch):
    """An epoch that is one Pallas kernel over data put on the device once; ``interpret``: Pallas's interpreter."""

    interpret = False
    data: list[jax.Array]
    compiled: jax.stages.Compiled | None = None

    def _epoch_call(self) -> Any:
        """The jitted epoch ``(params, *self.data) -> params``."""
        raise NotImplementedError

    def compile(self, params: Params) -> float:
        """The kernel's epoch, compiled ahead (the one-device step that gives the FLOPs only when asked for)."""
        self._keep_shapes(params)
        start = time.perf_counter()
        call = self._epoch_call()
        with precision_scope(self.precision):
            self.compiled = call.lower(params, *self.data).compile()
        return time.perf_counter() - start

    def facts(self) -> dict[str, Any]:
        kernel = {} if self.compiled is None else compiled_facts(self.compiled)
        return {**super().facts(), **{key.replace("xla_", "xla_kernel_", 1): v for key, v in kernel.items()}}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if self.compiled is None:
            self.compile(params)
        assert self.compiled is not None
        return cast(Params, jax.block_until_ready(self.compiled(params, *self.data)))  # type: ignore[no-untyped-call]


class PallasEpoch(KernelEpoch):
    """The whole epoch as one Pallas kernel on a TPU; ``form`` the kernel's form (None: the precision's)."""

    def __init__(self, *args: Any, interpret: bool = False, form: Any = None):
        super().__init__(*args)
        from jaxmlp.pipelines import pallas_epoch

        self.kernel = pallas_epoch
        self.interpret = interpret
        self.form = pallas_epoch.form_for(self.precision, form)
        if self.precision != "bf16":  # float32 in another order: its exponentials and sums are the kernel's own
            self.tolerance = tolerances.reordered(self.n_steps)
        self.shape = pallas_epoch.layout(self.n_samples, self.batch_size, self.images.shape[1])
        inputs = pallas_epoch.kernel_inputs(self.images, self.targets, self.shape, self.form)
        self.data = [cast(jax.Array, jax.device_put(a, self.device)) for a in inputs]
        self.xs, self.ys = self.data[:2]

    def training(self) -> dict[str, Any]:
        return {**super().training(), "pallas_form": self.kernel.form_name(self.form)}

    def _epoch_call(self) -> Any:
        return self.kernel.epoch_call(self.shape, self.step_size, self.precision, self.interpret, self.form)

    @property
    def bytes_accessed(self) -> float | None:
        """The bytes the kernel moves in an epoch as its blocks define them (`pallas_epoch.cost`)."""
        shapes = jax.eval_shape(lambda p: self.kernel.kernel_params(p, self.shape.features), self.abstract_params)
        n_params = sum(int(np.prod(p.shape)) for p in shapes)
        return float(self.kernel.cost(self.shape, n_params, self.xs.dtype.itemsize, self.form).bytes_accessed)


class PallasGpuEpoch(KernelEpoch):
    """The whole epoch as one Pallas kernel on a GPU (`pallas_gpu`), its data padded and put on the device once."""

    def __init__(self, *args: Any, interpret: bool = False):
        super().__init__(*args)
        from jaxmlp.pipelines import pallas_epoch, pallas_gpu

        self.kernel = pallas_gpu
        self.interpret = interpret
        if self.precision != "bf16":  # float32 in another order: its tiles' sums and exponentials are its own
            self.tolerance = tolerances.reordered(self.n_steps)
        self.shape = pallas_gpu.layout(self.n_samples, self.batch_size, self.images.shape[1])
        inputs = pallas_epoch.pad_batches(self.images, self.targets, self.shape)
        self.data = [cast(jax.Array, jax.device_put(a, self.device)) for a in inputs]
        self.xs, self.ys = self.data

    def training(self) -> dict[str, Any]:
        gpu = self.kernel
        return {**super().training(), "pallas_form": f"triton, 1 program, tiles {gpu.TILE}, {gpu.NUM_WARPS} warps"}

    def _epoch_call(self) -> Any:
        return self.kernel.epoch_call(self.shape, self.step_size, self.precision, self.interpret)

    @property
    def bytes_accessed(self) -> float | None:
        """The bytes the kernel moves through memory in an epoch (`pallas_gpu.cost`)."""
        from jaxmlp.pipelines.pallas_epoch import kernel_params

        classes = self.shape.classes
        shapes = jax.eval_shape(lambda p: kernel_params(p, self.shape.features, classes=classes), self.abstract_params)
        n_params = sum(int(np.prod(p.shape)) for p in shapes)
        return float(self.kernel.cost(self.shape, n_params, self.xs.dtype.itemsize).bytes_accessed)

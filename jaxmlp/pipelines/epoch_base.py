"""What every epoch is (`Epoch`, `ArrayEpoch`) and the checks made before one is built."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import jax
import numpy as np

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.model import N_TARGETS, Params, bf16_step_for, epoch_flops, one_hot
from jaxmlp.pipelines.steps import CompiledStep, batch_sizes, images_for, slices
from jaxmlp.registry import GPU_ONLY_PRECISIONS, PIPELINE_BACKENDS, PRECISIONS

BF16_TOLERANCE = 5e-2
"""How close a bf16 epoch's params are to the bf16 ``scan`` epoch's (docs/questions/loaders.md)."""


def check_precision(precision: str, platform: str) -> str:
    """``precision`` where ``platform`` (a JAX backend) has it, else a `JaxmlpError` in one line."""
    errors.one_of("--precision", precision, PRECISIONS)
    if precision in GPU_ONLY_PRECISIONS and platform != "gpu":
        raise JaxmlpError(
            f"--precision {precision} needs a GPU backend (TF32 is a GPU tensor-core mode); on "
            f"{platform}: use --precision f32 or bf16"
        )
    return precision


_COMMAND_BUFFERS = (
    "sets XLA:GPU's command buffers (CUDA graphs, --xla_gpu_enable_command_buffer), which only a GPU backend has"
)
BACKEND_REASONS = {
    "pallas": "is a Pallas kernel written for a TPU (Mosaic) and a GPU (Triton); elsewhere it runs only in Pallas's "
    "interpreter, as its tests do",
    "scan_cb_off": _COMMAND_BUFFERS,
    "scan_cb_loops": _COMMAND_BUFFERS,
    "torch_graph": "replays each step from a CUDA graph (torch.cuda.graphs), which only a CUDA GPU has",
}
"""Why each `PIPELINE_BACKENDS` pipeline runs only there, for the line that refuses it elsewhere."""

FALLBACKS = {"torch_graph": "torch"}
"""The pipeline to use instead where one is refused (else ``scan``)."""


def check_backend(pipeline: str, platform: str) -> None:
    """Nothing where ``pipeline`` runs on ``platform`` (a JAX backend), else a `JaxmlpError` in one line."""
    backends = PIPELINE_BACKENDS.get(pipeline)
    if backends is not None and platform not in backends:
        where = " or ".join(b.upper() for b in backends)
        raise JaxmlpError(
            f"the {pipeline} pipeline {BACKEND_REASONS[pipeline]}, and this backend is {platform}: run it on a "
            f"{where} host; here use --pipeline {FALLBACKS.get(pipeline, 'scan')}"
        )


Progress = Callable[[Iterable[Any], int], Iterable[Any]]
"""``progress(batches, total)``: what may wrap the batches of an epoch as its step loop consumes them."""


class Epoch:
    """One pipeline's epoch: ``compile(params)`` returns its seconds, ``epoch(params)`` the new params once ready."""

    tolerance = 1e-5
    data_dtype: Any = np.float32  # the images' dtype the step is compiled for (loader pipelines: float32)

    def __init__(
        self,
        pipeline: str,
        n_samples: int,
        batch_size: int,
        step_size: float,
        precision: str = "f32",
        platform: str = "cpu",
    ):
        self.pipeline = pipeline
        self.n_samples = n_samples
        self.batch_size = batch_size
        self.step_size = float(step_size)
        self.precision = precision
        self.platform = platform
        self.bf16_step = bf16_step_for(platform)  # the bf16 step's form this backend trains with
        if precision == "bf16":
            self.tolerance = BF16_TOLERANCE
        self.step = CompiledStep(step_size, precision, self.bf16_step)
        self.sizes = batch_sizes(n_samples, batch_size)
        self.n_steps = len(slices(n_samples, batch_size))
        self.abstract_params: Any = None  # the params' shapes, kept by `compile` for `_analysed`

    def _keep_shapes(self, params: Params) -> None:
        shape = lambda a: jax.ShapeDtypeStruct(np.shape(a), a.dtype)  # type: ignore[no-untyped-call]  # noqa: E731
        self.abstract_params = jax.tree_util.tree_map(shape, params)

    def _analysed(self, sizes: Sequence[int]) -> CompiledStep:
        """The one-device step compiled at ``sizes`` for XLA's analyses when first asked, outside every timed region."""
        missing = [size for size in sizes if not self.step.compiled_for(size)]
        if missing and self.abstract_params is not None:
            self.step.compile(self.abstract_params, missing, dtype=self.data_dtype)
        return self.step

    def _per_epoch(self, what: str) -> float | None:
        """XLA's count ``what`` (`CompiledStep.cost`) of the one-device step, summed over the epoch's steps."""
        n_full = self.n_samples // self.batch_size
        step = self._analysed(self.sizes)
        per_size = {size: step.cost(size, what) for size in self.sizes}
        if any(f is None or f < 0 for f in per_size.values()):  # XLA says -1 for what it could not count
            return None
        known = cast(dict[int, float], per_size)  # none of them None
        total = n_full * known[self.batch_size]
        if self.n_samples % self.batch_size:
            total += known[self.n_samples % self.batch_size]
        return float(total)

    @property
    def flops(self) -> float:
        """The epoch's FLOPs counted from the model, the same on every backend and release."""
        return float(epoch_flops(self.n_samples, self.batch_size))

    @property
    def xla_flops(self) -> float | None:
        """XLA's count of the epoch's FLOPs (it varies by backend); None where XLA could not count."""
        return self._per_epoch("flops")

    @property
    def bytes_accessed(self) -> float | None:
        """The bytes an epoch moves by XLA's count of the one-device step, summed over its steps."""
        return self._per_epoch("bytes accessed")

    def training(self) -> dict[str, Any]:
        """How this epoch trains, for its results: the bf16 step's form, the scan's unroll."""
        return {"bf16_step": self.bf16_step} if self.precision == "bf16" else {}

    def compile(self, params: Params) -> float:
        self._keep_shapes(params)
        return self.step.compile(params, self.sizes, dtype=self.data_dtype)

    def facts(self) -> dict[str, Any]:
        """What XLA says about the step at full batch size (`_analysed`)."""
        return self._analysed([self.batch_size]).facts(self.batch_size)

    def place(self, params: Params) -> Params:
        """``params`` where this epoch's programs take them, for a caller that places them once."""
        return params

    def local(self, params: Params) -> Params:
        """Params this process can evaluate on its own device (the sharded epoch's are spread over a mesh)."""
        return params

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        """One epoch, returning once the new params are ready; ``progress`` may wrap its batches (`Progress`)."""
        raise NotImplementedError


def wrap(progress: Progress | None, iterable: Iterable[Any], total: int) -> Iterable[Any]:
    return iterable if progress is None else progress(iterable, total)


class ArrayEpoch(Epoch):
    bf16_images = True  # a bf16 epoch keeps a bfloat16 copy of the images (`steps.images_for`)

    def __init__(
        self,
        pipeline: str,
        images: np.ndarray,
        labels: np.ndarray,
        batch_size: int,
        step_size: float,
        device: jax.Device,
        precision: str = "f32",
    ):
        super().__init__(pipeline, len(images), batch_size, step_size, precision, device.platform)
        self.device = device
        self.images = images_for(images, precision if self.bf16_images else "f32")
        self.data_dtype = self.images.dtype
        self.targets = np.asarray(one_hot(np.asarray(labels), N_TARGETS))
        self.batches = slices(self.n_samples, batch_size)

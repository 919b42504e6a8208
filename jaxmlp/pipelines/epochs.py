"""Training epochs: one definition of each input pipeline, shared by every caller.

`jaxmlp train`, the benchmarks, the profiler and the version sweep all build an
epoch with `make_epoch` and call it. Every pipeline feeds the same batches in the
same order (the tutorial's: no shuffling, the last batch smaller), so all of them
compute the same parameters; they differ only in how batches reach the step:

- ``seed``: the tutorial as written: torch `DataLoader` batches (numpy), one-hot
  per batch, one jitted step per batch.
- ``seed_batched``: the same DataLoader reading a batch at a time
  (`jaxmlp.pipelines.data.BatchReads`): no per-sample ``__getitem__`` and collate.
- ``grain``: the same with Grain (`jaxmlp.pipelines.grain_input`) over the
  split's arrays: the same batches.
- ``hf``: the same with Hugging Face ``datasets`` (`jaxmlp.pipelines.hf_input`):
  an in-memory Arrow table of the split read with ``with_format("numpy")``.
- ``batched``: the split converted to arrays once; batches are slices of them.
- ``prefetch``: like ``batched``, but a background thread `device_put`s batches
  ahead of the step (``depth`` in flight).
- ``scan``: the whole epoch as ONE jitted `lax.scan` over device-resident
  batches: one dispatch per epoch.
- ``pallas``: the whole epoch as ONE Pallas kernel on a TPU (`jaxmlp.pipelines.pallas_epoch`): the parameters
  resident in the chip's VMEM, forward, backward and update of every batch inside; refused off a TPU (its tests run
  it in Pallas's interpret mode).
- ``sharded``: the scan epoch data-parallel over a 1-D mesh of devices (every
  device JAX sees, in every process of a `jax.distributed` run): each full batch
  split along its batch axis, params replicated, the scan jitted with explicit
  shardings, so XLA all-reduces the gradients; the smaller last batch replicated.
- ``torch``: the same MLP and SGD step in PyTorch (`jaxmlp.pipelines.torch_mlp`),
  eager, from a copy of the JAX params, over the same slices of the same arrays.
- ``torch_compile``: that step's loss through ``torch.compile`` (compiled ahead,
  timed apart; where it cannot work, a `JaxmlpError` says why).

Every pipeline trains in a precision (`registry.PRECISIONS`): ``f32``; ``bf16``, the
mixed-precision step (`jaxmlp.model.sgd_update_bf16`; the array pipelines keep a
bfloat16 copy of the images, made once here, the loader pipelines cast each batch
in the step; torch under ``torch.autocast``); ``tf32`` on GPUs only.

An epoch returns the new params once they are ready on the device, so a clock
may stop right after it. The JAX pipelines compute the same params to float32
rounding (``tolerance``, 1e-5); the torch pipelines and the Pallas kernel to `tolerances.reordered`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import jax
import numpy as np

from jaxmlp.compat import compiled_facts
from jaxmlp.errors import JaxmlpError
from jaxmlp.model import N_TARGETS, STEP_SIZE, Params, bf16_step_for, one_hot, precision_scope, step_function
from jaxmlp.pipelines import tolerances
from jaxmlp.pipelines.loaders import as_arrays, make_loader, missing_package
from jaxmlp.pipelines.steps import (
    CompiledStep,
    batch_sizes,
    device_batches,
    images_for,
    run_steps,
    scan_epoch,
    scan_steps,
    scan_unroll,
    seed_epoch,
    sgd_scan,
    slices,
)
from jaxmlp.registry import GPU_ONLY_PRECISIONS, LOADER_PIPELINES, PIPELINE_BACKENDS, PIPELINES, PRECISIONS

BF16_TOLERANCE = 5e-2
"""How close a bf16 epoch's params are to the bf16 ``scan`` epoch's (`max_relative_difference`): the same products
in the same order, but an activation rounded to bfloat16 (8 bits) flips where float32 accumulations differ in their
last bit (the loader pipelines' per-batch step against the scan's fused loop), and SGD on unscaled pixels amplifies
it over the epoch. Measured on MNIST (`tests/test_pipelines.py`); a wrong step (the last batch left out, float32
products) is further off than this, and the test accuracy is held too."""


def check_precision(precision: str, platform: str) -> str:
    """``precision`` where ``platform`` (a JAX backend) has it, else a `JaxmlpError` in one line."""
    if precision not in PRECISIONS:
        raise JaxmlpError(f"unknown --precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
    if precision in GPU_ONLY_PRECISIONS and platform != "gpu":
        raise JaxmlpError(
            f"--precision {precision} needs a GPU backend (TF32 is a GPU tensor-core mode); on "
            f"{platform}: use --precision f32 or bf16"
        )
    return precision


def check_backend(pipeline: str, platform: str) -> None:
    """Nothing where ``pipeline`` runs on ``platform`` (a JAX backend), else a `JaxmlpError` in one line."""
    backends = PIPELINE_BACKENDS.get(pipeline)
    if backends is not None and platform not in backends:
        raise JaxmlpError(
            f"the {pipeline} pipeline is a TPU kernel (Pallas's Mosaic backend) and this backend is {platform}: run "
            "it on a TPU host (on a GPU Pallas lowers through Triton, for which this kernel's blocks are not "
            "written; elsewhere it runs only in Pallas's interpreter, as its tests do); here use --pipeline scan"
        )


# --- building an epoch for a pipeline ---------------------------------------------

Progress = Callable[[Iterable[Any], int], Iterable[Any]]
"""``progress(batches, total)``: what may wrap the batches of an epoch as its step loop consumes them."""


class Epoch:
    """One pipeline's epoch over a training split, ready to compile and run.

    ``epoch.compile(params)`` compiles every executable the epoch runs and
    returns the seconds it took; ``epoch(params)`` runs one epoch and returns
    the new params once they are ready. ``flops`` is the epoch's FLOP count
    from XLA's cost analysis of the one-device step (known after `compile`;
    where the epoch does not run that step at a batch size, it is compiled
    when first asked, untimed: `_analysed`).
    ``tolerance`` is how close (`max_relative_difference`) its params are to
    the ``scan`` epoch's after an epoch.
    """

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
        """The one-device step compiled at ``sizes`` for XLA's analyses (the FLOPs, the facts): where the epoch did
        not compile it to run it (the scan's full batches, the sharded and torch epochs), compiled here, when first
        asked, outside `compile`'s time and every epoch's."""
        missing = [size for size in sizes if not self.step.compiled_for(size)]
        if missing and self.abstract_params is not None:
            self.step.compile(self.abstract_params, missing, dtype=self.data_dtype)
        return self.step

    def _per_epoch(self, what: str) -> float | None:
        """XLA's count ``what`` (`CompiledStep.cost`) of the one-device step, summed over the epoch's steps."""
        n_full = self.n_samples // self.batch_size
        step = self._analysed(self.sizes)
        per_size = {size: step.cost(size, what) for size in self.sizes}
        if any(f is None for f in per_size.values()):
            return None
        known = cast(dict[int, float], per_size)  # none of them None
        total = n_full * known[self.batch_size]
        if self.n_samples % self.batch_size:
            total += known[self.n_samples % self.batch_size]
        return float(total)

    @property
    def flops(self) -> float | None:
        return self._per_epoch("flops")

    @property
    def bytes_accessed(self) -> float | None:
        """The bytes an epoch moves by XLA's count of the one-device step (every operation's operands and results
        as if from memory), summed over its steps: the roofline's bytes of an epoch of steps."""
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
        """``params`` where this epoch's programs take them (the sharded epoch: replicated over its mesh). An
        epoch places what it is given itself; a caller that times many epochs from the same params places them
        once, so that no epoch's time holds the copy."""
        return params

    def local(self, params: Params) -> Params:
        """Params this process can evaluate on its own device (the sharded epoch's are spread over a mesh)."""
        return params

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        """One epoch; returns once the new params are ready.

        ``progress(batches, total)`` may wrap the iterable of batches as the step
        loop consumes it (a progress bar, profiler step markers); stopping it
        early ends the epoch early. The scan pipeline has no per-batch loop on
        the host and ignores it.
        """
        raise NotImplementedError


def _wrap(progress: Progress | None, iterable: Iterable[Any], total: int) -> Iterable[Any]:
    return iterable if progress is None else progress(iterable, total)


class _LoaderEpoch(Epoch):
    """The tutorial's epoch: host batches from a loader (`make_loader`), one-hot per batch, one step each."""

    def __init__(
        self,
        pipeline: str,
        dataset: Any,
        batch_size: int,
        step_size: float,
        workers: int,
        precision: str = "f32",
        platform: str = "cpu",
    ):
        super().__init__(pipeline, len(dataset), batch_size, step_size, precision, platform)
        self.loader = make_loader(pipeline, dataset, batch_size, workers)

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        return seed_epoch(params, _wrap(progress, self.loader, self.n_steps), self.step)


class _ArrayEpoch(Epoch):
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


class _BatchedEpoch(_ArrayEpoch):
    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        batches = ((self.images[s], self.targets[s]) for s in self.batches)
        return run_steps(params, _wrap(progress, batches, self.n_steps), self.step)


class _PrefetchEpoch(_ArrayEpoch):
    depth = 2

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        batches = device_batches(self.images, self.targets, self.batches, self.device, self.depth)
        return run_steps(params, _wrap(progress, batches, self.n_steps), self.step)


class _ScanEpoch(_ArrayEpoch):
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


class PallasEpoch(_ArrayEpoch):
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


MESH_AXIS = "data"
"""The one axis of the sharded pipeline's mesh: the batch is split along it."""


def check_divides(batch_size: int, n_devices: int) -> None:
    """A batch splits evenly over the devices, or a `JaxmlpError` naming both numbers."""
    if batch_size % n_devices:
        raise JaxmlpError(
            f"--batch-size {batch_size} does not split evenly over {n_devices} devices: choose a multiple of "
            f"{n_devices} (e.g. {max(n_devices, batch_size // n_devices * n_devices)})"
        )


class _ShardedEpoch(_ScanEpoch):
    """The scan epoch, data-parallel: a `Mesh` of every device of ``device``'s platform (across processes, in a
    `jax.distributed` run); each full batch sharded along its batch axis, params and the smaller last batch
    replicated; the scan and the last step jitted with those shardings (XLA all-reduces the gradients). Built
    from the whole split on every process: each process places only its own devices' shards."""

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
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        self.devices = jax.devices(device.platform)  # every process's, in a distributed run
        check_divides(batch_size, len(self.devices))
        self.mesh = Mesh(np.array(self.devices), (MESH_AXIS,))
        # jax's PartitionSpec is unannotated, hence the ignores
        self.replicated = NamedSharding(self.mesh, PartitionSpec())  # type: ignore[no-untyped-call]
        self.by_batch = NamedSharding(self.mesh, PartitionSpec(None, MESH_AXIS))  # type: ignore[no-untyped-call]
        super().__init__(pipeline, images, labels, batch_size, step_size, device, precision)

    @staticmethod
    def _placed(array: np.ndarray, sharding: jax.sharding.Sharding) -> jax.Array:
        return jax.make_array_from_callback(array.shape, sharding, lambda index: array[index])

    def _batches(self, array: np.ndarray) -> jax.Array:
        return self._placed(array, self.by_batch)

    def _whole(self, array: np.ndarray) -> jax.Array:
        return self._placed(array, self.replicated)

    def place(self, params: Params) -> Params:
        """``params`` replicated over the mesh (those from the previous epoch already are)."""
        if all(getattr(leaf, "sharding", None) == self.replicated for leaf in jax.tree_util.tree_leaves(params)):
            return params
        return cast(
            Params, jax.tree_util.tree_map(lambda leaf: self._placed(np.asarray(leaf), self.replicated), params)
        )

    def local(self, params: Params) -> Params:
        """This process's copy of replicated ``params`` (host arrays), for evaluating and saving."""
        return cast(Params, jax.tree_util.tree_map(lambda leaf: np.asarray(leaf.addressable_data(0)), params))

    def sharded_step(self, params: Params) -> tuple[Callable[..., Params], tuple[Any, ...]]:
        """One full batch's data-parallel SGD step: (the step jitted with its shardings, its arguments: params
        replicated, the first batch split along its rows)."""
        from jax.sharding import NamedSharding, PartitionSpec

        rows = NamedSharding(self.mesh, PartitionSpec(MESH_AXIS))  # type: ignore[no-untyped-call]  # unannotated in jax
        x, y = (self._placed(a[: self.batch_size], rows) for a in (self.images, self.targets))
        rep = self.replicated
        step = jax.jit(
            step_function(self.precision, self.bf16_step), in_shardings=(rep, rows, rows, rep), out_shardings=rep
        )
        return step, (self.place(params), x, y, self.step_size)

    def _compile_scan(self, params: Params) -> jax.stages.Compiled:
        params = self.place(params)
        rep, batches = self.replicated, self.by_batch
        scan = jax.jit(
            functools.partial(sgd_scan, precision=self.precision, bf16_step=self.bf16_step, unroll=self.unroll),
            in_shardings=(rep, batches, batches, rep),
            out_shardings=rep,
        )
        with precision_scope(self.precision):
            if self.remainder is not None:
                last = jax.jit(step_function(self.precision, self.bf16_step), in_shardings=rep, out_shardings=rep)
                tail = last.lower(params, *self.remainder, self.step_size).compile()
                self.last_step = lambda p, x, y: tail(p, x, y, self.step_size)
            return scan.lower(params, self.xs, self.ys, self.step_size).compile()

    def compile(self, params: Params) -> float:
        """The sharded programs' compile time (the one-device step, which gives the epoch's FLOPs, only when they
        are asked for: `_analysed`)."""
        self._keep_shapes(self.local(params))  # one device, whatever the placement
        start = time.perf_counter()
        self.scan = self._compile_scan(params)
        return time.perf_counter() - start

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        return super().__call__(self.place(params), progress)


class _TorchEpoch(_ArrayEpoch):
    """The tutorial's MLP and SGD step in PyTorch (`torch_mlp`) over the same batches: ``torch.from_numpy`` views
    of the same float32 arrays, sliced in the same order. Takes JAX params (or its own, from `place`), trains a copy
    and returns host numpy arrays. torch's intra-op threads are set to this process's CPU affinity, as XLA's are."""

    compiled = False
    bf16_images = False  # torch takes float32 images and casts them under autocast

    def __init__(self, *args: Any):
        super().__init__(*args)
        from jaxmlp.pipelines import torch_mlp

        self.torch = torch_mlp
        self.tolerance = tolerances.reordered(self.n_steps)  # float32 rounding, amplified over the epoch's steps
        self.torch_device = torch_mlp.device_for(self.device.platform)
        torch_mlp.use_cpu_threads(torch_mlp.cpu_threads())
        self.x = torch_mlp.as_tensor(self.images, self.torch_device)  # a view of the same array on the CPU
        self.y = torch_mlp.as_tensor(np.array(self.targets, dtype=np.float32), self.torch_device)  # writable: a copy
        self.loss: torch_mlp.LossFunction = torch_mlp.loss_of(self.precision, self.torch_device)
        self.eager_loss = self.loss

    def compile(self, params: Params) -> float:
        """Nothing to compile in eager (the JAX step that gives the epoch's FLOPs, the same math, only when they
        are asked for: `_analysed`)."""
        self._keep_shapes(params)
        return 0.0

    def place(self, params: Params) -> Params:
        return cast(Params, self.torch.to_torch(params, self.torch_device))

    def local(self, params: Params) -> Params:
        return cast(Params, self.torch.to_numpy(cast(Any, params))) if self.torch.is_torch(params) else params

    def facts(self) -> dict[str, Any]:
        return {**self.torch.facts(self.torch_device), "torch_compiled": self.compiled}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        weights = self.torch.to_torch(params, self.torch_device)  # a copy: 670k floats, well under 1 ms
        batches = ((self.x[s], self.y[s]) for s in self.batches)
        for x, y in _wrap(progress, batches, self.n_steps):
            self.torch.sgd_step(weights, x, y, self.step_size, self.loss)
        self.torch.synchronize(self.torch_device)  # the CPU: already done (torch is synchronous there)
        return cast(Params, self.torch.to_numpy(weights))  # materialised: host arrays


class _TorchCompileEpoch(_TorchEpoch):
    compiled = True

    def compile(self, params: Params) -> float:
        """The loss compiled by ``torch.compile`` (forward, and its backward by AOTAutograd) for each batch size of
        the epoch, on copies of ``params``: the first calls, timed here and in no epoch. A `JaxmlpError` saying why
        where it cannot compile here."""
        super().compile(params)
        start = time.perf_counter()
        self.loss = self.torch.compiled_loss(self.eager_loss)
        firsts = [self.batches[0], *([self.batches[-1]] if len(self.sizes) > 1 else [])]
        self.torch.warm_up(self.place(params), [(self.x[s], self.y[s]) for s in firsts], self.loss)
        self.torch.synchronize(self.torch_device)
        return time.perf_counter() - start

    def facts(self) -> dict[str, Any]:
        return {**super().facts(), "torch_compile_cache": self.torch.compile_cache()}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if self.loss is self.eager_loss:
            self.compile(params)
        return super().__call__(params, progress)


def make_epoch(
    pipeline: str,
    dataset: Any,
    *,
    batch_size: int = 128,
    step_size: float = STEP_SIZE,
    workers: int = 0,
    device: jax.Device | None = None,
    precision: str = "f32",
) -> Epoch:
    """The epoch of ``pipeline`` over ``dataset`` (a split like torchvision's `MNIST`).

    ``workers`` applies to the `WORKER_PIPELINES` only (their loaders' worker processes); ``device`` to the
    array pipelines (where their batches go; JAX's default device if None; the torch pipelines: torch's CPU, or
    its CUDA GPU for a JAX GPU); ``precision`` to all (`registry.PRECISIONS`; ``tf32`` on a GPU only, else a
    `JaxmlpError`).
    """
    if why := missing_package(pipeline):
        raise JaxmlpError(why)
    device = device or jax.local_devices()[0]
    check_precision(precision, device.platform)
    check_backend(pipeline, device.platform)
    if pipeline in LOADER_PIPELINES and pipeline != "batched":  # batched: its own epoch, one-hot once
        return _LoaderEpoch(pipeline, dataset, batch_size, step_size, workers, precision, device.platform)
    images, labels = as_arrays(dataset)
    kinds: dict[str, type[_ArrayEpoch]] = {
        "batched": _BatchedEpoch,
        "prefetch": _PrefetchEpoch,
        "scan": _ScanEpoch,
        "sharded": _ShardedEpoch,
        "pallas": PallasEpoch,
        "torch": _TorchEpoch,
        "torch_compile": _TorchCompileEpoch,
    }
    if pipeline not in kinds:
        raise ValueError(f"unknown pipeline {pipeline!r}: choose one of {', '.join(PIPELINES)}")
    return kinds[pipeline](pipeline, images, labels, batch_size, step_size, device, precision)

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
- ``sharded``: the scan epoch data-parallel over a 1-D mesh of devices (every
  device JAX sees, in every process of a `jax.distributed` run): each full batch
  split along its batch axis, params replicated, the scan jitted with explicit
  shardings, so XLA all-reduces the gradients; the smaller last batch replicated.

An epoch returns the new params once they are ready on the device, so a clock
may stop right after it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmlp.compat import compiled_facts, cost_analysis
from jaxmlp.errors import JaxmlpError
from jaxmlp.model import N_TARGETS, STEP_SIZE, Params, one_hot, sgd_update, update
from jaxmlp.registry import LOADER_PIPELINES, OPTIONAL, PIPELINES


class CompiledStep:
    """The jitted `update`, compiled ahead of time for each batch size an epoch yields.

    Calling it runs the executable for the batch's size, so no compilation lands
    inside an epoch; an unforeseen size is compiled on first use (and shows up in
    the epoch's compile time).
    """

    def __init__(self, step_size: float = STEP_SIZE):
        self.step_size = float(step_size)
        self._executables: dict[tuple[int, ...], Any] = {}

    def _compile(self, params: Params, x, y):
        executable = update.lower(params, x, y, self.step_size).compile()
        self._executables[tuple(x.shape)] = executable
        return executable

    def compile(self, params: Params, sizes: Sequence[int], n_features: int = 784) -> float:
        """Lower and compile for each batch size; returns the wall time it took, in seconds."""
        start = time.perf_counter()
        for size in sizes:
            x = jax.ShapeDtypeStruct((size, n_features), jnp.float32)
            y = jax.ShapeDtypeStruct((size, N_TARGETS), jnp.float32)
            self._compile(params, x, y)
        return time.perf_counter() - start

    def facts(self, batch_size: int, n_features: int = 784) -> dict:
        """XLA's cost and memory analysis of the step compiled for ``batch_size`` (`compat.compiled_facts`)."""
        executable = self._executables.get((batch_size, n_features))
        return {} if executable is None else compiled_facts(executable)

    def flops(self, batch_size: int, n_features: int = 784) -> float | None:
        """FLOPs of one step at ``batch_size``, from XLA's cost analysis of the compiled step."""
        executable = self._executables.get((batch_size, n_features))
        return None if executable is None else cost_analysis(executable).get("flops")

    def __call__(self, params: Params, x, y) -> Params:
        executable = self._executables.get(tuple(x.shape)) or self._compile(params, x, y)
        return executable(params, x, y, self.step_size)


def batch_sizes(n_samples: int, batch_size: int) -> list[int]:
    """The distinct batch sizes of an in-order epoch: ``[batch_size]``, plus the remainder."""
    sizes = [min(batch_size, n_samples)]
    if n_samples > batch_size and n_samples % batch_size:
        sizes.append(n_samples % batch_size)
    return sizes


def slices(n_samples: int, batch_size: int) -> list[slice]:
    """The batches of an in-order epoch, the last one smaller if ``batch_size`` does not divide."""
    return [slice(start, min(start + batch_size, n_samples)) for start in range(0, n_samples, batch_size)]


# --- the epochs themselves ------------------------------------------------------


def seed_epoch(params: Params, loader, step: Callable) -> Params:
    """The tutorial's epoch as written: numpy batches from the DataLoader, one-hot, one jitted step each."""
    for x, y in loader:
        y = one_hot(y, N_TARGETS)
        params = step(params, x, y)
    return jax.block_until_ready(params)


def run_steps(params: Params, batches: Iterable, step: Callable) -> Params:
    """One step per ``(x, y)`` batch (images ``(B, 784)``, one-hot targets ``(B, 10)``), in order."""
    for x, y in batches:
        params = step(params, x, y)
    return jax.block_until_ready(params)


def _device_batches(images, targets, batches, device, depth: int) -> Iterator:
    """Batches put on ``device`` by a background thread, up to ``depth`` ahead of the consumer."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def produce():
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


def _scan_steps(params: Params, xs, ys, step_size):
    """``len(xs)`` SGD steps in one XLA program: xs ``(S, B, 784)``, ys ``(S, B, 10)``."""

    def body(p, batch):
        return sgd_update(p, *batch, step_size), None

    return jax.lax.scan(body, params, (xs, ys))[0]


scan_steps = jax.jit(_scan_steps)


def scan_epoch(params: Params, xs, ys, remainder, scan: Callable, step: Callable) -> Params:
    """All full batches as one scanned program, then the smaller last batch (if any) with the step."""
    params = scan(params, xs, ys)
    if remainder is not None:
        params = step(params, *remainder)
    return jax.block_until_ready(params)


# --- building an epoch for a pipeline ---------------------------------------------


class Epoch:
    """One pipeline's epoch over a training split, ready to compile and run.

    ``epoch.compile(params)`` compiles every executable the epoch runs and
    returns the seconds it took; ``epoch(params)`` runs one epoch and returns
    the new params once they are ready. ``flops`` is the epoch's FLOP count
    from XLA's cost analysis of the compiled step (known after `compile`).
    """

    def __init__(self, pipeline: str, n_samples: int, batch_size: int, step_size: float):
        self.pipeline = pipeline
        self.n_samples = n_samples
        self.batch_size = batch_size
        self.step_size = float(step_size)
        self.step = CompiledStep(step_size)
        self.sizes = batch_sizes(n_samples, batch_size)
        self.n_steps = len(slices(n_samples, batch_size))

    @property
    def flops(self) -> float | None:
        n_full = self.n_samples // self.batch_size
        per_size = {size: self.step.flops(size) for size in self.sizes}
        if any(f is None for f in per_size.values()):
            return None
        total = n_full * per_size[self.batch_size]
        if self.n_samples % self.batch_size:
            total += per_size[self.n_samples % self.batch_size]
        return float(total)

    def compile(self, params: Params) -> float:
        return self.step.compile(params, self.sizes)

    def facts(self) -> dict:
        """What XLA says about the programs this epoch runs (the step at full batch size)."""
        return self.step.facts(self.batch_size)

    def place(self, params: Params) -> Params:
        """``params`` where this epoch's programs take them (the sharded epoch: replicated over its mesh). An
        epoch places what it is given itself; a caller that times many epochs from the same params places them
        once, so that no epoch's time holds the copy."""
        return params

    def local(self, params: Params) -> Params:
        """Params this process can evaluate on its own device (the sharded epoch's are spread over a mesh)."""
        return params

    def __call__(self, params: Params, progress: Callable | None = None) -> Params:
        """One epoch; returns once the new params are ready.

        ``progress(batches, total)`` may wrap the iterable of batches as the step
        loop consumes it (a progress bar, profiler step markers); stopping it
        early ends the epoch early. The scan pipeline has no per-batch loop on
        the host and ignores it.
        """
        raise NotImplementedError


def _wrap(progress, iterable, total):
    return iterable if progress is None else progress(iterable, total)


def as_arrays(dataset) -> tuple[np.ndarray, np.ndarray]:
    """A whole split converted once: images ``(N, 784)`` float32 (unscaled) and labels ``(N,)`` int32.

    ``dataset`` has ``data`` (N x 28 x 28 uint8) and ``targets``, like torchvision's `MNIST`.
    """
    images = np.asarray(dataset.data).reshape(len(dataset.data), -1).astype(np.float32)
    return images, np.asarray(dataset.targets).astype(np.int32)


class ArraySlices:
    """The ``batched`` pipeline's input alone: in-order batches ``(images, labels)`` sliced from the arrays."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, batch_size: int):
        self.images, self.labels, self.batches = images, labels, slices(len(images), batch_size)

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return ((self.images[s], self.labels[s]) for s in self.batches)


def make_loader(pipeline: str, dataset, batch_size: int, workers: int = 0) -> Iterable:
    """The loader of a `LOADER_PIPELINES` pipeline over ``dataset``: an iterable, once per epoch, of the
    tutorial's batches ``(images (B, 784) float32, labels (B,))`` on the host. ``workers`` applies to the
    `WORKER_PIPELINES` (torch's or Grain's worker processes, spawned)."""
    if pipeline in ("seed", "seed_batched"):
        from jaxmlp.pipelines import data  # torch stays out of the other pipelines

        return data.make_loader(dataset, batch_size, workers, batch_reads=pipeline == "seed_batched")
    if pipeline == "grain":
        from jaxmlp.pipelines import grain_input

        return grain_input.make_loader(*as_arrays(dataset), batch_size, workers)
    if pipeline == "hf":
        from jaxmlp.pipelines import hf_input

        return hf_input.make_loader(*as_arrays(dataset), batch_size)
    if pipeline == "batched":
        return ArraySlices(*as_arrays(dataset), batch_size)
    raise ValueError(f"pipeline {pipeline!r} has no loader: choose one of {', '.join(LOADER_PIPELINES)}")


class _LoaderEpoch(Epoch):
    """The tutorial's epoch: host batches from a loader (`make_loader`), one-hot per batch, one step each."""

    def __init__(self, pipeline, dataset, batch_size, step_size, workers):
        super().__init__(pipeline, len(dataset), batch_size, step_size)
        self.loader = make_loader(pipeline, dataset, batch_size, workers)

    def __call__(self, params, progress=None):
        return seed_epoch(params, _wrap(progress, self.loader, self.n_steps), self.step)


class _ArrayEpoch(Epoch):
    def __init__(self, pipeline, images, labels, batch_size, step_size, device):
        super().__init__(pipeline, len(images), batch_size, step_size)
        self.device = device
        self.images = np.ascontiguousarray(images, dtype=np.float32)
        self.targets = np.asarray(one_hot(np.asarray(labels), N_TARGETS))
        self.batches = slices(self.n_samples, batch_size)


class _BatchedEpoch(_ArrayEpoch):
    def __call__(self, params, progress=None):
        batches = ((self.images[s], self.targets[s]) for s in self.batches)
        return run_steps(params, _wrap(progress, batches, self.n_steps), self.step)


class _PrefetchEpoch(_ArrayEpoch):
    depth = 2

    def __call__(self, params, progress=None):
        batches = _device_batches(self.images, self.targets, self.batches, self.device, self.depth)
        return run_steps(params, _wrap(progress, batches, self.n_steps), self.step)


class _ScanEpoch(_ArrayEpoch):
    def __init__(self, *args):
        super().__init__(*args)
        n_full = self.n_samples // self.batch_size
        cut = n_full * self.batch_size
        shape = (n_full, self.batch_size)
        self.xs = self._batches(self.images[:cut].reshape(*shape, -1))
        self.ys = self._batches(self.targets[:cut].reshape(*shape, -1))
        self.remainder = None
        if cut < self.n_samples:
            self.remainder = (self._whole(self.images[cut:]), self._whole(self.targets[cut:]))
        self.scan = None
        self.last_step: Callable | None = None  # the smaller last batch's step, where not `step`

    def _batches(self, array: np.ndarray):
        """The epoch's full batches ``(S, B, ...)`` on the device(s)."""
        return jax.device_put(array, self.device)

    def _whole(self, array: np.ndarray):
        return jax.device_put(array, self.device)

    def _compile_scan(self, params):
        return scan_steps.lower(params, self.xs, self.ys, self.step_size).compile()

    def compile(self, params):
        seconds = super().compile(params)
        start = time.perf_counter()
        self.scan = self._compile_scan(params)
        return seconds + time.perf_counter() - start

    def __call__(self, params, progress=None):
        if self.scan is None:
            self.compile(params)
        return scan_epoch(params, self.xs, self.ys, self.remainder, self._run_scan, self.last_step or self.step)

    def facts(self):
        scan = {} if self.scan is None else compiled_facts(self.scan)
        return {**super().facts(), **{key.replace("xla_", "xla_scan_", 1): v for key, v in scan.items()}}

    def _run_scan(self, params, xs, ys):
        return self.scan(params, xs, ys, self.step_size)


def missing_package(pipeline: str) -> str | None:
    """Why ``pipeline`` cannot run here (its optional package is not installed, `registry.OPTIONAL`), or None."""
    import importlib.util

    if pipeline not in OPTIONAL:
        return None
    module, extra = OPTIONAL[pipeline]
    if importlib.util.find_spec(module) is not None:
        return None
    return f"the {pipeline} pipeline needs the {module} package: pip install 'jaxmlp[{extra}]'"


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

    def __init__(self, pipeline, images, labels, batch_size, step_size, device):
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        self.devices = jax.devices(device.platform)  # every process's, in a distributed run
        check_divides(batch_size, len(self.devices))
        self.mesh = Mesh(np.array(self.devices), (MESH_AXIS,))
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self.by_batch = NamedSharding(self.mesh, PartitionSpec(None, MESH_AXIS))
        super().__init__(pipeline, images, labels, batch_size, step_size, device)

    @staticmethod
    def _placed(array: np.ndarray, sharding):
        return jax.make_array_from_callback(array.shape, sharding, lambda index: array[index])

    def _batches(self, array):
        return self._placed(array, self.by_batch)

    def _whole(self, array):
        return self._placed(array, self.replicated)

    def place(self, params: Params) -> Params:
        """``params`` replicated over the mesh (those from the previous epoch already are)."""
        if all(getattr(leaf, "sharding", None) == self.replicated for leaf in jax.tree_util.tree_leaves(params)):
            return params
        return jax.tree_util.tree_map(lambda leaf: self._placed(np.asarray(leaf), self.replicated), params)

    def local(self, params: Params) -> Params:
        """This process's copy of replicated ``params`` (host arrays), for evaluating and saving."""
        return jax.tree_util.tree_map(lambda leaf: np.asarray(leaf.addressable_data(0)), params)

    def sharded_step(self, params: Params) -> tuple[Callable, tuple]:
        """One full batch's data-parallel SGD step: (the step jitted with its shardings, its arguments: params
        replicated, the first batch split along its rows)."""
        from jax.sharding import NamedSharding, PartitionSpec

        rows = NamedSharding(self.mesh, PartitionSpec(MESH_AXIS))
        x, y = (self._placed(a[: self.batch_size], rows) for a in (self.images, self.targets))
        rep = self.replicated
        step = jax.jit(sgd_update, in_shardings=(rep, rows, rows, rep), out_shardings=rep)
        return step, (self.place(params), x, y, self.step_size)

    def _compile_scan(self, params):
        params = self.place(params)
        rep, batches = self.replicated, self.by_batch
        scan = jax.jit(_scan_steps, in_shardings=(rep, batches, batches, rep), out_shardings=rep)
        if self.remainder is not None:
            last = jax.jit(sgd_update, in_shardings=rep, out_shardings=rep)
            tail = last.lower(params, *self.remainder, self.step_size).compile()
            self.last_step = lambda p, x, y: tail(p, x, y, self.step_size)
        return scan.lower(params, self.xs, self.ys, self.step_size).compile()

    def compile(self, params):
        """The sharded programs' compile time. The one-device step is compiled too, untimed: its cost analysis
        gives the epoch's FLOPs (the sharded epoch never runs it)."""
        self.step.compile(self.local(params), self.sizes)  # on one device, whatever the params' placement
        start = time.perf_counter()
        self.scan = self._compile_scan(params)
        return time.perf_counter() - start

    def __call__(self, params, progress=None):
        return super().__call__(self.place(params), progress)


def make_epoch(
    pipeline: str,
    dataset,
    *,
    batch_size: int = 128,
    step_size: float = STEP_SIZE,
    workers: int = 0,
    device=None,
) -> Epoch:
    """The epoch of ``pipeline`` over ``dataset`` (a split like torchvision's `MNIST`).

    ``workers`` applies to the `WORKER_PIPELINES` only (their loaders' worker processes); ``device`` to the
    array pipelines (where their batches go; JAX's default device if None).
    """
    if pipeline in LOADER_PIPELINES and pipeline != "batched":  # batched: its own epoch, one-hot once
        return _LoaderEpoch(pipeline, dataset, batch_size, step_size, workers)
    images, labels = as_arrays(dataset)
    device = device or jax.local_devices()[0]
    kinds = {"batched": _BatchedEpoch, "prefetch": _PrefetchEpoch, "scan": _ScanEpoch, "sharded": _ShardedEpoch}
    if pipeline not in kinds:
        raise ValueError(f"unknown pipeline {pipeline!r}: choose one of {', '.join(PIPELINES)}")
    return kinds[pipeline](pipeline, images, labels, batch_size, step_size, device)

"""Training epochs: one definition of each input pipeline (`make_epoch`; docs/questions/loaders.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jax

from jaxmlp.errors import JaxmlpError
from jaxmlp.model import STEP_SIZE, Params
from jaxmlp.pipelines.array_epochs import BatchedEpoch, PallasEpoch, PallasGpuEpoch, PrefetchEpoch, ScanEpoch
from jaxmlp.pipelines.epoch_base import ArrayEpoch, Epoch, Progress, check_backend, check_precision, wrap
from jaxmlp.pipelines.loaders import as_arrays, make_loader, missing_package
from jaxmlp.pipelines.sharded_epoch import ShardedEpoch
from jaxmlp.pipelines.steps import seed_epoch
from jaxmlp.pipelines.torch_epochs import TorchCompileEpoch, TorchEpoch, TorchGraphEpoch
from jaxmlp.registry import LOADER_PIPELINES, PIPELINES


class LoaderEpoch(Epoch):
    """The tutorial's epoch: host batches from ``loader``, one-hot per batch, one step each."""

    def __init__(self, loader: Iterable[Any], *args: Any):
        super().__init__(*args)
        self.loader = loader

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        return seed_epoch(params, wrap(progress, self.loader, self.n_steps), self.step)


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
    """The epoch of ``pipeline`` over ``dataset`` on ``device`` (None: JAX's default) in ``precision``."""
    if why := missing_package(pipeline):
        raise JaxmlpError(why)
    device = device or jax.local_devices()[0]
    check_precision(precision, device.platform)
    check_backend(pipeline, device.platform)
    if pipeline in LOADER_PIPELINES and pipeline != "batched":  # batched: its own epoch, one-hot once
        loader = make_loader(pipeline, dataset, batch_size, workers)
        return LoaderEpoch(loader, pipeline, len(dataset), batch_size, step_size, precision, device.platform)
    images, labels = as_arrays(dataset)
    kinds: dict[str, type[ArrayEpoch]] = {
        "batched": BatchedEpoch,
        "prefetch": PrefetchEpoch,
        "scan": ScanEpoch,
        "scan_cb_off": ScanEpoch,
        "scan_cb_loops": ScanEpoch,
        "sharded": ShardedEpoch,
        "pallas": PallasGpuEpoch if device.platform == "gpu" else PallasEpoch,
        "torch": TorchEpoch,
        "torch_compile": TorchCompileEpoch,
        "torch_graph": TorchGraphEpoch,
    }
    if pipeline not in kinds:
        raise ValueError(f"unknown pipeline {pipeline!r}: choose one of {', '.join(PIPELINES)}")
    return kinds[pipeline](pipeline, images, labels, batch_size, step_size, device, precision)

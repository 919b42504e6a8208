"""The loaders of the loader pipelines: an iterable, once per epoch, of the tutorial's in-order batches
``(images (B, 784) float32, labels (B,))`` on the host; and a split as arrays, converted once."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from typing import Any, cast

import numpy as np

from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines.steps import slices
from jaxmlp.registry import LOADER_PIPELINES, OPTIONAL


def as_arrays(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
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


def make_loader(pipeline: str, dataset: Any, batch_size: int, workers: int = 0) -> Iterable[Any]:
    """The loader of a `LOADER_PIPELINES` pipeline over ``dataset``: an iterable, once per epoch, of the
    tutorial's batches ``(images (B, 784) float32, labels (B,))`` on the host. ``workers`` applies to the
    `WORKER_PIPELINES` (torch's or Grain's worker processes, spawned)."""
    if pipeline in ("seed", "seed_batched"):
        from jaxmlp.pipelines import data  # torch stays out of the other pipelines

        loader = data.make_loader(dataset, batch_size, workers, batch_reads=pipeline == "seed_batched")
        return cast(Iterable[Any], loader)  # a torch DataLoader (Any where torch is untyped)
    if pipeline == "grain":
        from jaxmlp.pipelines import grain_input

        return grain_input.make_loader(*as_arrays(dataset), batch_size, workers)
    if pipeline == "hf":
        if why := missing_package("hf"):
            raise JaxmlpError(why)
        from jaxmlp.pipelines import hf_input

        return hf_input.make_loader(*as_arrays(dataset), batch_size)
    if pipeline == "batched":
        return ArraySlices(*as_arrays(dataset), batch_size)
    raise ValueError(f"pipeline {pipeline!r} has no loader: choose one of {', '.join(LOADER_PIPELINES)}")


def missing_package(pipeline: str) -> str | None:
    """Why ``pipeline`` cannot run here (its optional package is not installed, `registry.OPTIONAL`), or None."""
    if pipeline not in OPTIONAL:
        return None
    module, extra = OPTIONAL[pipeline]
    if importlib.util.find_spec(module) is not None:
        return None
    return f"the {pipeline} pipeline needs the {module} package: pip install 'jaxmlp[{extra}]'"

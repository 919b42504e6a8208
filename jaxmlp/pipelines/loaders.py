"""The loaders of the loader pipelines (the tutorial's in-order host batches), and a split as arrays."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast

import numpy as np

from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines.mnist import (
    Datasets,
    Split,
    existing_data_folder,
    load_arrays,
    resolve_data_dir,
    synthetic_arrays,
)
from jaxmlp.pipelines.steps import slices
from jaxmlp.registry import DATASETS, LOADER_PIPELINES, OPTIONAL, PIP_NAMES, PIPELINE_NEEDS, SYNTHETIC


def as_arrays(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
    """A whole split as arrays: images ``(N, 784)`` float32 (unscaled) and labels ``(N,)`` int32."""
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
    """The loader of a `LOADER_PIPELINES` pipeline over ``dataset``: the tutorial's host batches, once per epoch."""
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
    """Why ``pipeline`` cannot run here (a package it needs is not installed), or None."""
    needs = (*PIPELINE_NEEDS.get(pipeline, ()), *(OPTIONAL[pipeline][:1] if pipeline in OPTIONAL else ()))
    if broken := [m for m in needs if import_failure(m) not in (None, "not installed")]:
        said = "; ".join(f"{m}: {import_failure(m)}" for m in broken)
        return f"the {pipeline} pipeline needs {' and '.join(broken)}, installed but not importing here ({said})"
    if absent := missing_modules(PIPELINE_NEEDS.get(pipeline, ())):
        return (
            f"the {pipeline} pipeline needs {' and '.join(absent)}, which this Python lacks (a JAX-only machine, "
            f"such as a TPU host, may): pip install {_install_line(absent)}"
        )
    if pipeline not in OPTIONAL:
        return None
    module, extra = OPTIONAL[pipeline]
    if not missing_modules((module,)):
        return None
    return f"the {pipeline} pipeline needs the {module} package: pip install 'jaxmlp[{extra}]'"


def _install_line(modules: Sequence[str]) -> str:
    """What installs ``modules``: jaxmlp's tutorial extra where it has them all, else their pip packages."""
    from jaxmlp.installs import TUTORIAL, TUTORIAL_MODULES

    if set(modules) <= TUTORIAL_MODULES:
        return f"'jaxmlp[{TUTORIAL}]'"
    return " ".join(PIP_NAMES.get(m, m) for m in modules)


def missing_modules(modules: Sequence[str]) -> list[str]:
    """Those of ``modules`` that do not import here (not installed, or failing), each tried once a process."""
    return [m for m in modules if import_failure(m)]


@functools.cache
def import_failure(module: str) -> str | None:
    """Why ``module`` does not import here, in a line, else None; an absent one costs no import."""
    if importlib.util.find_spec(module) is None:
        return "not installed"
    try:
        importlib.import_module(module)
    except Exception as e:  # any failure: the module cannot serve its pipeline here
        return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}"
    return None


def load_splits(
    name: str = "mnist",
    data_dir: str | os.PathLike[str] | None = None,
    download: bool = False,
    synthetic_sizes: Sequence[int] = (60000, 10000),
    limit: int | None = None,
    pipelines: Sequence[str] | None = None,
) -> Datasets:
    """The train and test splits: the tutorial's datasets where needed and installed, else `Split` arrays."""
    torch_free = (
        pipelines is not None and not download and not any("torch" in PIPELINE_NEEDS.get(p, ()) for p in pipelines)
    )
    if name == "mnist" and not download and not torch_free:
        existing_data_folder(resolve_data_dir(data_dir))  # said at once, not after importing torch to read it
    if not torch_free and not missing_modules(("torch", "PIL")):
        from jaxmlp.pipelines import data  # torch stays out of a process that has none

        return data.load_datasets(name, data_dir, download, synthetic_sizes, limit)
    if download:
        raise JaxmlpError(
            "--download needs torch and torchvision, which this Python lacks: pass --data-dir DIR holding the four "
            "IDX files, or use --dataset synthetic"
        )
    if name == SYNTHETIC:
        train_size, test_size = synthetic_sizes
        train, test = Split(*synthetic_arrays(True, train_size)), Split(*synthetic_arrays(False, test_size))
        source = "generated"
    elif name not in DATASETS:
        raise JaxmlpError(f"unknown dataset {name!r}: choose one of {', '.join(DATASETS)}")
    else:
        train, test = load_arrays(name, data_dir)
        source = str(resolve_data_dir(data_dir))
    source += ", read as arrays" if torch_free else ", read as arrays (no torch here)"
    if limit is not None and limit < len(train):
        train, source = Split(train.data[:limit], train.targets[:limit]), f"{source}, first {limit} training images"
    return Datasets(name, source, train, test)

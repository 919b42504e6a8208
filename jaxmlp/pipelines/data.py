"""MNIST through torchvision (or `IdxMNIST`) and the tutorial's numpy DataLoader shim: the only module that imports
torch, and none imports JAX."""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing.context
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch.utils import data

from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines.mnist import (  # noqa: F401  (re-exported: the data module's public names)
    MNIST_FILES,
    Datasets,
    check_idx,
    find_idx_files,
    load_arrays,
    not_a_folder,
    prepare_mnist,
    resolve_data_dir,
    synthetic_arrays,
)
from jaxmlp.registry import DATASETS
from jaxmlp.stops import deaf_to_ctrl_c, resource_tracker_started

# --- the tutorial's shim --------------------------------------------------------


def _to_numpy(tree: Any) -> Any:
    if isinstance(tree, torch.Tensor):
        return tree.numpy()
    if isinstance(tree, (list, tuple)):
        return type(tree)(_to_numpy(t) for t in tree)
    return {k: _to_numpy(v) for k, v in tree.items()} if isinstance(tree, dict) else np.asarray(tree)


def numpy_collate(batch: Any) -> Any:
    """torch's default collate, with every leaf turned into a numpy array."""
    return _to_numpy(data.default_collate(batch))


class NumpyLoader(data.DataLoader):  # type: ignore[misc]  # torch is untyped in the lint environment
    """A `DataLoader` whose batches are numpy arrays (the tutorial's shim); other keyword arguments go to it."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = False,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            dataset,
            batch_size=batch_size,
            shuffle=shuffle,
            sampler=sampler,
            batch_sampler=batch_sampler,
            num_workers=num_workers,
            collate_fn=numpy_collate,
            pin_memory=pin_memory,
            drop_last=drop_last,
            timeout=timeout,
            worker_init_fn=worker_init_fn,
            **kwargs,
        )


class FlattenAndCast:
    """Image -> flat ``(784,)`` float32 vector. Pixels stay 0-255, as in the tutorial."""

    def __call__(self, pic: Any) -> np.ndarray:
        return np.ravel(np.array(pic, dtype=np.float32))


class BatchReads(data.Dataset):  # type: ignore[misc]  # torch is untyped in the lint environment
    """A split read a batch at a time: `__getitems__` returns a batch's images and labels."""

    def __init__(self, dataset: Any):
        self.data = dataset.data
        self.targets = dataset.targets

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        images, labels = self.__getitems__([index])
        return images[0], labels[0]

    def __getitems__(self, indices: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        index = torch.as_tensor(indices)
        return self.data[index].reshape(len(index), -1).numpy().astype(np.float32), self.targets[index].numpy()


def whole_batch(batch: Any) -> Any:
    """The collate of `BatchReads`: its batch is already made."""
    return batch


class QuietProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker that never sees Ctrl-C (`stops.deaf_to_ctrl_c`): the command stops it."""

    def start(self) -> None:
        resource_tracker_started()
        with deaf_to_ctrl_c():
            super().start()


class QuietSpawn(multiprocessing.context.SpawnContext):
    """The ``spawn`` context, its processes `QuietProcess`."""

    Process = QuietProcess


def make_loader(dataset: Any, batch_size: int, workers: int = 0, *, batch_reads: bool = False) -> data.DataLoader:
    """The tutorial's loader (`NumpyLoader`): in order, the last batch kept; ``batch_reads``: a batch at a time."""
    kwargs: dict[str, Any] = {}
    if workers:
        kwargs.update(num_workers=workers, multiprocessing_context=QuietSpawn(), persistent_workers=True)
    if batch_reads:
        return data.DataLoader(BatchReads(dataset), batch_size=batch_size, collate_fn=whole_batch, **kwargs)
    return NumpyLoader(dataset, batch_size=batch_size, **kwargs)


# --- synthetic data ------------------------------------------------------------


class ArrayMNIST(data.Dataset):  # type: ignore[misc]  # torch is untyped in the lint environment
    """A split held as arrays that reads like torchvision's `MNIST`."""

    def __init__(self, images: np.ndarray, targets: np.ndarray, transform: Callable[[Any], Any] | None = None):
        self.data = torch.from_numpy(np.require(images, requirements=["C", "W"]))  # torch wants a writable array
        self.targets = torch.from_numpy(np.asarray(targets, np.int64))
        self.transform = transform

    def __getitem__(self, index: int) -> tuple[Any, int]:
        img = Image.fromarray(self.data[index].numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        return img, int(self.targets[index])

    def __len__(self) -> int:
        return len(self.data)


class SyntheticMNIST(ArrayMNIST):
    """MNIST-shaped, deterministic, learnable digits that are NOT MNIST (`jaxmlp.pipelines.mnist.synthetic_arrays`)."""

    def __init__(
        self, train: bool = True, size: int | None = None, transform: Callable[[Any], Any] | None = None, seed: int = 0
    ):
        super().__init__(*synthetic_arrays(train, size, seed), transform)
        self.train = train


class IdxMNIST(ArrayMNIST):
    """MNIST from its IDX files by jaxmlp's own reader, for a machine without torchvision: the same as its `MNIST`."""

    def __init__(self, split: Any, transform: Callable[[Any], Any] | None = None):
        super().__init__(split.data, split.targets, transform)


def load_datasets(
    name: str = "mnist",
    data_dir: str | os.PathLike[str] | None = None,
    download: bool = False,
    synthetic_sizes: Sequence[int] = (60000, 10000),
    limit: int | None = None,
) -> Datasets:
    """The train and test splits with `FlattenAndCast`; ``limit``: the first ``limit`` training images only."""
    if name == "synthetic":
        train_size, test_size = synthetic_sizes
        datasets = Datasets(
            "synthetic",
            "generated",
            SyntheticMNIST(True, train_size if limit is None else min(limit, train_size), FlattenAndCast()),
            SyntheticMNIST(False, test_size, FlattenAndCast()),
        )
    elif name != "mnist":
        raise JaxmlpError(f"unknown dataset {name!r}: choose one of {', '.join(DATASETS)}")
    else:
        datasets = _mnist(data_dir, download)
    full = synthetic_sizes[0] if name == "synthetic" else len(datasets.train)  # (synthetic: made only as far as limit)
    if limit is None or limit >= full:
        return datasets
    train = datasets.train
    train.data, train.targets = train.data[:limit], train.targets[:limit]  # what __getitem__ and __len__ read
    return dataclasses.replace(datasets, source=f"{datasets.source}, first {limit} training images")


def download_failure(error: BaseException) -> str:
    """What a failed download said, in one line: torchvision's first line and the last reason it gives."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    said = lines[0] if len(lines) == 1 else f"{lines[0].rstrip(':')}: {lines[-1]}"
    return f"{type(error).__name__}: {said}"


def _mnist(data_dir: str | os.PathLike[str] | None, download: bool) -> Datasets:
    import importlib.util

    folder = resolve_data_dir(data_dir)
    if importlib.util.find_spec("torchvision") is None:
        if download:
            raise JaxmlpError(
                "--download needs torchvision, which this Python lacks: pass --data-dir DIR holding the "
                "four IDX files, or use --dataset synthetic"
            )
        train, test = load_arrays("mnist", folder)
        return Datasets(
            "mnist",
            f"{folder}, read by jaxmlp's IDX reader (no torchvision here)",
            IdxMNIST(train, FlattenAndCast()),
            IdxMNIST(test, FlattenAndCast()),
        )
    from torchvision.datasets import MNIST

    if download:
        not_a_folder(folder)
        raw = (folder / "MNIST" / "raw").absolute()
        made = [f for f in (raw, *raw.parents) if not f.exists()]  # the folders the download would make
        try:
            MNIST(str(folder), train=True, download=True)
            MNIST(str(folder), train=False, download=True)
        except Exception as e:  # torchvision raises several kinds when offline
            for empty in made:  # the folders it made and left empty, innermost first
                with contextlib.suppress(OSError):
                    empty.rmdir()
            raise JaxmlpError(
                f"downloading MNIST into {folder} failed ({download_failure(e)}); without a network, put the "
                f"four MNIST IDX files in {folder} (or set JAXMLP_DATA_DIR to a folder holding them), or use "
                "--dataset synthetic"
            ) from None
    root = prepare_mnist(folder)
    return Datasets(
        "mnist",
        str(folder),
        MNIST(str(root), train=True, transform=FlattenAndCast()),
        MNIST(str(root), train=False, transform=FlattenAndCast()),
    )

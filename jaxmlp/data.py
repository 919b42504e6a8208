"""MNIST through torchvision and the tutorial's numpy DataLoader shim.

The only module that imports torch. Nothing here imports JAX: DataLoader workers
import this module in fresh (spawned) processes, which must stay JAX-free.

Where the data comes from (`resolve_data_dir`): ``--data-dir``, else
``$JAXMLP_DATA_DIR``, else a user cache folder. A folder that holds the four IDX
files (gzipped or not) is validated and prepared into torchvision's
``MNIST/raw`` layout under the cache folder, with no network at all.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from PIL import Image
from torch.utils import data

from jaxmlp.errors import JaxmlpError

DATASETS = ("mnist", "synthetic")
IMAGE_SHAPE = (28, 28)
N_PIXELS = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]


# --- the tutorial's shim --------------------------------------------------------


def _to_numpy(tree):
    if isinstance(tree, torch.Tensor):
        return tree.numpy()
    if isinstance(tree, (list, tuple)):
        return type(tree)(_to_numpy(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _to_numpy(v) for k, v in tree.items()}
    return np.asarray(tree)


def numpy_collate(batch):
    """torch's default collate, with every leaf turned into a numpy array."""
    return _to_numpy(data.default_collate(batch))


class NumpyLoader(data.DataLoader):
    """A `DataLoader` whose batches are numpy arrays (the tutorial's shim).

    Extra keyword arguments (``multiprocessing_context``, ``persistent_workers``,
    ...) go to `DataLoader` unchanged.
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        **kwargs,
    ):
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

    def __call__(self, pic):
        return np.ravel(np.array(pic, dtype=np.float32))


def make_loader(dataset, batch_size: int, workers: int = 0) -> NumpyLoader:
    """The tutorial's loader: in order, no shuffling, the last batch kept even if smaller.

    With workers, they are spawned (forking a process that runs JAX can deadlock)
    and persistent, so their start-up is paid once rather than every epoch.
    """
    if workers == 0:
        return NumpyLoader(dataset, batch_size=batch_size)
    return NumpyLoader(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        multiprocessing_context="spawn",
        persistent_workers=True,
    )


# --- synthetic data ------------------------------------------------------------


class SyntheticMNIST(data.Dataset):
    """MNIST-shaped, deterministic and learnable digits that are NOT MNIST.

    Each class has a fixed random stroke pattern; a sample keeps a quarter of
    its class's strokes and gains random ones, at MNIST-like intensities
    (mostly 0, strokes 160-255). The tutorial's MLP reaches about 97% on it in
    one epoch, about as on MNIST. Like torchvision's `MNIST`, it has
    ``data`` (uint8, N x 28 x 28), ``targets`` (int64) and returns PIL images.
    """

    def __init__(self, train: bool = True, size: int | None = None, transform=None, seed: int = 0):
        n = size if size is not None else (60000 if train else 10000)
        rng = np.random.default_rng(seed)
        prototypes = rng.random((10, N_PIXELS)) < 0.12  # the same for both splits
        rng = np.random.default_rng([seed, 1 if train else 2])
        targets = rng.integers(0, 10, n)
        keep = rng.integers(0, 256, (n, N_PIXELS), dtype=np.uint8) < 64  # a quarter of the class's strokes
        extra = rng.integers(0, 256, (n, N_PIXELS), dtype=np.uint8) < 38  # ~15% random pixels
        on = (prototypes[targets] & keep) | extra
        intensity = rng.integers(160, 256, (n, N_PIXELS), dtype=np.uint8)
        self.data = torch.from_numpy((on * intensity).reshape(n, *IMAGE_SHAPE))
        self.targets = torch.from_numpy(targets.astype(np.int64))
        self.train = train
        self.transform = transform

    def __getitem__(self, index: int):
        img = Image.fromarray(self.data[index].numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        return img, int(self.targets[index])

    def __len__(self) -> int:
        return len(self.data)


# --- MNIST files ----------------------------------------------------------------


class IdxSpec(NamedTuple):
    name: str  # torchvision's name for the uncompressed file
    magic: int
    count: int
    item_shape: tuple[int, ...]


MNIST_FILES = (
    IdxSpec("train-images-idx3-ubyte", 2051, 60000, IMAGE_SHAPE),
    IdxSpec("train-labels-idx1-ubyte", 2049, 60000, ()),
    IdxSpec("t10k-images-idx3-ubyte", 2051, 10000, IMAGE_SHAPE),
    IdxSpec("t10k-labels-idx1-ubyte", 2049, 10000, ()),
)

_FIX = "replace it with a fresh copy of the MNIST IDX files"


def check_idx(raw: bytes, spec: IdxSpec, path: Path) -> None:
    """Raise `JaxmlpError` naming ``path`` unless ``raw`` is the IDX file ``spec`` describes."""
    header_len = 4 * (2 + len(spec.item_shape))
    if len(raw) < header_len:
        raise JaxmlpError(f"{path}: truncated ({len(raw)} bytes, shorter than its header); {_FIX}")
    magic, count, *dims = np.frombuffer(raw[:header_len], dtype=">u4").tolist()
    if magic != spec.magic:
        raise JaxmlpError(f"{path}: wrong magic number {magic} (expected {spec.magic}): not an MNIST IDX file; {_FIX}")
    if count != spec.count or tuple(dims) != spec.item_shape:
        found = "x".join(map(str, (count, *dims)))
        wanted = "x".join(map(str, (spec.count, *spec.item_shape)))
        raise JaxmlpError(f"{path}: holds {found} items, expected {wanted}; {_FIX}")
    expected = header_len + spec.count * int(np.prod(spec.item_shape, dtype=np.int64))
    if len(raw) != expected:
        state = "truncated" if len(raw) < expected else "too long"
        raise JaxmlpError(f"{path}: {state} ({len(raw)} bytes, expected {expected}); {_FIX}")
    if not spec.item_shape and int(np.frombuffer(raw, np.uint8, offset=header_len).max()) > 9:
        raise JaxmlpError(f"{path}: holds labels outside 0-9; {_FIX}")


def _read(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as e:
        raise JaxmlpError(f"{path}: cannot be read ({e}); {_FIX}") from None


def find_idx_files(folder: Path) -> dict[str, Path] | None:
    """The four IDX files in ``folder`` (uncompressed preferred, else ``.gz``); None if any is missing."""
    found = {}
    for spec in MNIST_FILES:
        for candidate in (folder / spec.name, folder / f"{spec.name}.gz"):
            if candidate.is_file():
                found[spec.name] = candidate
                break
        else:
            return None
    return found


def default_cache_dir() -> Path:
    env = os.environ.get("JAXMLP_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("jaxmlp"))


def resolve_data_dir(data_dir: str | os.PathLike | None) -> Path:
    """``--data-dir``, else ``$JAXMLP_DATA_DIR``, else the user cache folder."""
    chosen = data_dir if data_dir is not None else os.environ.get("JAXMLP_DATA_DIR") or default_cache_dir()
    return Path(chosen).expanduser()


def _prepared_root(sources: dict[str, Path], cache_dir: Path) -> Path:
    """A cache folder keyed by the source files' paths, sizes and modification times."""
    key = hashlib.sha256()
    for name, path in sorted(sources.items()):
        st = path.stat()
        key.update(f"{name}:{path.resolve()}:{st.st_size}:{st.st_mtime_ns};".encode())
    return cache_dir / "prepared" / key.hexdigest()[:16]


def prepare_mnist(folder: Path, cache_dir: Path | None = None) -> Path:
    """Validate the IDX files under ``folder`` and return a torchvision ``MNIST`` root for them.

    ``folder`` may hold the four files directly or in torchvision's ``MNIST/raw``.
    Uncompressed files already in torchvision's layout are used in place;
    otherwise the files are validated, decompressed and written, atomically, to
    a prepared copy in the cache folder. No network is used.
    """
    if not folder.is_dir():
        raise JaxmlpError(
            f"MNIST data folder {folder} does not exist: pass --data-dir DIR (or set JAXMLP_DATA_DIR) "
            "to a folder holding the four MNIST IDX files, add --download where a network exists, "
            "or use --dataset synthetic"
        )
    for candidate in (folder / "MNIST" / "raw", folder):
        sources = find_idx_files(candidate)
        if sources is not None:
            break
    else:
        raise JaxmlpError(
            f"no MNIST IDX files in {folder} (looked for train-images-idx3-ubyte[.gz] and the other three, "
            "also in MNIST/raw): point --data-dir or JAXMLP_DATA_DIR at a folder holding them, "
            "add --download where a network exists, or use --dataset synthetic"
        )
    in_place = candidate == folder / "MNIST" / "raw" and all(p.suffix != ".gz" for p in sources.values())
    if in_place:
        for spec in MNIST_FILES:
            check_idx(_read(sources[spec.name]), spec, sources[spec.name])
        return folder

    root = _prepared_root(sources, cache_dir or default_cache_dir())
    raw_dir = root / "MNIST" / "raw"
    prepared = find_idx_files(raw_dir)
    if prepared is not None:
        for spec in MNIST_FILES:
            check_idx(_read(prepared[spec.name]), spec, prepared[spec.name])
        return root
    contents = {}
    for spec in MNIST_FILES:
        raw = _read(sources[spec.name])
        check_idx(raw, spec, sources[spec.name])
        contents[spec.name] = raw
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root.parent))
    try:
        (staging / "MNIST" / "raw").mkdir(parents=True)
        for name, raw in contents.items():
            (staging / "MNIST" / "raw" / name).write_bytes(raw)
        try:
            staging.rename(root)
        except OSError:  # prepared concurrently by another process: use theirs
            if find_idx_files(raw_dir) is None:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


@dataclass(frozen=True)
class Datasets:
    """The train and test splits (torch datasets yielding ``(784,)`` float32 images) and their origin."""

    name: str  # "mnist" or "synthetic"
    source: str  # where the data came from, for humans and metadata
    train: data.Dataset
    test: data.Dataset

    @property
    def label(self) -> str:
        if self.name == "synthetic":
            return "synthetic (generated, NOT MNIST)"
        return f"mnist ({self.source})"


def load_datasets(
    name: str = "mnist",
    data_dir: str | os.PathLike | None = None,
    download: bool = False,
    synthetic_sizes: Sequence[int] = (60000, 10000),
) -> Datasets:
    """The train and test splits, with the tutorial's `FlattenAndCast` transform."""
    if name == "synthetic":
        train_size, test_size = synthetic_sizes
        return Datasets(
            "synthetic",
            "generated",
            SyntheticMNIST(True, train_size, FlattenAndCast()),
            SyntheticMNIST(False, test_size, FlattenAndCast()),
        )
    if name != "mnist":
        raise JaxmlpError(f"unknown dataset {name!r}: choose one of {', '.join(DATASETS)}")
    from torchvision.datasets import MNIST

    folder = resolve_data_dir(data_dir)
    if download:
        try:
            MNIST(str(folder), train=True, download=True)
            MNIST(str(folder), train=False, download=True)
        except Exception as e:  # torchvision raises several kinds when offline
            raise JaxmlpError(
                f"downloading MNIST into {folder} failed ({type(e).__name__}: {e}); without a network, "
                "pass --data-dir DIR holding the four IDX files, or use --dataset synthetic"
            ) from None
    root = prepare_mnist(folder)
    return Datasets(
        "mnist",
        str(folder),
        MNIST(str(root), train=True, transform=FlattenAndCast()),
        MNIST(str(root), train=False, transform=FlattenAndCast()),
    )

"""The MNIST IDX files and the synthetic set as numpy arrays (no torch, no JAX), validated and prepared."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError, unusable_folder
from jaxmlp.registry import DATASETS, SYNTHETIC, SYNTHETIC_LABEL

IMAGE_SHAPE = (28, 28)
N_PIXELS = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]


SYNTHETIC_BLOCK = 1024
"""Synthetic digits are made in blocks of this many, each from its own seed: the first ``size`` of a split are the
same whatever ``size`` is asked, so a limited set is the full set's start, made without the rest."""


def synthetic_arrays(train: bool = True, size: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic digits, each class a fixed random stroke pattern: the first ``size`` images and labels of the split."""
    n = size if size is not None else (60000 if train else 10000)
    prototypes = np.random.default_rng(seed).random((10, N_PIXELS)) < 0.12  # the same for both splits
    blocks = range(-(-n // SYNTHETIC_BLOCK))
    made = [_synthetic_block(prototypes, np.random.default_rng([seed, 1 if train else 2, b])) for b in blocks]
    if not made:
        return np.zeros((0, *IMAGE_SHAPE), np.uint8), np.zeros(0, np.int64)
    return np.concatenate([m[0] for m in made])[:n], np.concatenate([m[1] for m in made])[:n]


def _synthetic_block(prototypes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = SYNTHETIC_BLOCK
    targets = rng.integers(0, 10, n)
    keep = rng.integers(0, 256, (n, N_PIXELS), dtype=np.uint8) < 64  # a quarter of the class's strokes
    extra = rng.integers(0, 256, (n, N_PIXELS), dtype=np.uint8) < 38  # ~15% random pixels
    on = (prototypes[targets] & keep) | extra
    intensity = rng.integers(160, 256, (n, N_PIXELS), dtype=np.uint8)
    return (on * intensity).reshape(n, *IMAGE_SHAPE), targets.astype(np.int64)


class IdxSpec(NamedTuple):
    name: str  # torchvision's name for the uncompressed file
    magic: int
    count: int  # type: ignore[assignment]  # mypy: the field shadows tuple.count (fine at runtime)
    item_shape: tuple[int, ...]

    @property
    def header_len(self) -> int:
        return 4 * (2 + len(self.item_shape))


MNIST_FILES = (
    IdxSpec("train-images-idx3-ubyte", 2051, 60000, IMAGE_SHAPE),
    IdxSpec("train-labels-idx1-ubyte", 2049, 60000, ()),
    IdxSpec("t10k-images-idx3-ubyte", 2051, 10000, IMAGE_SHAPE),
    IdxSpec("t10k-labels-idx1-ubyte", 2049, 10000, ()),
)

_FIX = "replace it with a fresh copy of the MNIST IDX files"


def check_idx(raw: bytes, spec: IdxSpec, path: Path) -> None:
    """Raise `JaxmlpError` naming ``path`` unless ``raw`` is the IDX file ``spec`` describes."""
    header_len = spec.header_len
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


def read_idx(path: Path, spec: IdxSpec) -> bytes:
    """The bytes of the IDX file at ``path``, checked against ``spec`` (a `JaxmlpError` naming it otherwise)."""
    raw = _read(path)
    check_idx(raw, spec, path)
    return raw


def _missing(folder: Path) -> str:
    """What of the four files ``folder`` lacks, for an error: all of them, or by name."""
    found = {spec.name for spec in MNIST_FILES for c in (spec.name, f"{spec.name}.gz") if (folder / c).is_file()}
    if not found:
        return f"no MNIST IDX files in {folder} (looked for train-images-idx3-ubyte[.gz] and the other three)"
    missing = [f"{spec.name}[.gz]" for spec in MNIST_FILES if spec.name not in found]
    return f"{folder} lacks {', '.join(missing)} (has the other {len(found)})"


def _where(folder: Path) -> Path:
    """The folder an error should name: torchvision's MNIST/raw inside ``folder`` where that holds any file."""
    raw = folder / "MNIST" / "raw"
    return raw if raw.is_dir() and any(raw.iterdir()) else folder


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


CACHE_VARIABLE = "JAXMLP_CACHE_DIR"


def default_cache_dir() -> Path:
    if env := os.environ.get(CACHE_VARIABLE):
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("jaxmlp"))


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    """``--data-dir``, else ``$JAXMLP_DATA_DIR``, else the user cache folder."""
    chosen = data_dir if data_dir is not None else os.environ.get("JAXMLP_DATA_DIR") or default_cache_dir()
    return Path(chosen).expanduser()


def not_a_folder(folder: Path) -> None:
    """A data folder given as a file: one line saying so, before it is read as a folder."""
    errors.file_not_folder(
        "MNIST data folder",
        folder,
        "pass --data-dir DIR (or set JAXMLP_DATA_DIR) to the folder holding the four MNIST IDX files, or use "
        "--dataset synthetic",
    )


def _prepared_root(sources: dict[str, Path], cache_dir: Path) -> Path:
    """A cache folder keyed by the source files' paths, sizes and modification times."""
    key = hashlib.sha256()
    for name, path in sorted(sources.items()):
        st = path.stat()
        key.update(f"{name}:{path.resolve()}:{st.st_size}:{st.st_mtime_ns};".encode())
    return cache_dir / "prepared" / key.hexdigest()[:16]


def existing_data_folder(folder: Path) -> None:
    """A data folder that is a file or does not exist: one line saying so (before torch is imported to read it)."""
    not_a_folder(folder)
    if not folder.is_dir():
        raise JaxmlpError(
            f"MNIST data folder {folder} does not exist: pass --data-dir DIR (or set JAXMLP_DATA_DIR) "
            "to a folder holding the four MNIST IDX files, add --download where a network exists, "
            "or use --dataset synthetic"
        )


def prepare_mnist(folder: Path, cache_dir: Path | None = None) -> Path:
    """Validate the IDX files under ``folder`` and return a torchvision ``MNIST`` root for them."""
    existing_data_folder(folder)
    for candidate in (folder / "MNIST" / "raw", folder):
        sources = find_idx_files(candidate)
        if sources is not None:
            break
    else:
        raise JaxmlpError(
            f"{_missing(_where(folder))}: point --data-dir or JAXMLP_DATA_DIR at a folder holding all four, "
            "add --download where a network exists, or use --dataset synthetic"
        )
    in_place = candidate == folder / "MNIST" / "raw" and all(p.suffix != ".gz" for p in sources.values())
    if in_place:
        for spec in MNIST_FILES:
            read_idx(sources[spec.name], spec)
        return folder

    source = (
        "the cache folder"
        if cache_dir
        else (
            CACHE_VARIABLE
            if os.environ.get(CACHE_VARIABLE)
            else f"the cache folder (set {CACHE_VARIABLE} to choose another)"
        )
    )
    try:
        return _prepare(sources, cache_dir or default_cache_dir())
    except OSError as e:
        raise unusable_folder(cache_dir or default_cache_dir(), source, e) from None


def _prepare(sources: dict[str, Path], cache_dir: Path) -> Path:
    """A validated, decompressed copy of ``sources`` in torchvision's layout under ``cache_dir``, made once."""
    root = _prepared_root(sources, cache_dir)
    raw_dir = root / "MNIST" / "raw"
    if (prepared := find_idx_files(raw_dir)) is not None:
        for spec in MNIST_FILES:
            read_idx(prepared[spec.name], spec)
        return root
    contents = {spec.name: read_idx(sources[spec.name], spec) for spec in MNIST_FILES}
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
class Split:
    """A split as arrays, shaped like torchvision's `MNIST`: ``data`` (N, 28, 28) uint8, ``targets`` (N,)."""

    data: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.data)


def load_arrays(
    name: str = "mnist", data_dir: str | os.PathLike[str] | None = None, limit: int | None = None
) -> tuple[Split, Split]:
    """The train and test splits as arrays (the first ``limit`` training images if given), without torch."""
    if name == "synthetic":
        train, test = Split(*synthetic_arrays(True, limit)), Split(*synthetic_arrays(False))
        return train, test
    if name != "mnist":
        raise JaxmlpError(f"unknown dataset {name!r}: choose one of {', '.join(DATASETS)}")
    folder = resolve_data_dir(data_dir)
    not_a_folder(folder)
    sources = (find_idx_files(folder / "MNIST" / "raw") or find_idx_files(folder)) if folder.is_dir() else None
    if sources is None:
        where = _where(folder) if folder.is_dir() else folder
        what = _missing(where) if folder.is_dir() else f"no MNIST IDX files in {folder} (no such folder)"
        raise JaxmlpError(
            f"{what}: point --data-dir or JAXMLP_DATA_DIR at a folder holding all four, or use --dataset synthetic"
        )
    arrays = {}
    for spec in MNIST_FILES:
        raw = read_idx(sources[spec.name], spec)
        arrays[spec.name] = np.frombuffer(raw, np.uint8, offset=spec.header_len).reshape(spec.count, *spec.item_shape)
    train = Split(arrays["train-images-idx3-ubyte"][:limit], arrays["train-labels-idx1-ubyte"][:limit].astype(np.int64))
    test = Split(arrays["t10k-images-idx3-ubyte"], arrays["t10k-labels-idx1-ubyte"].astype(np.int64))
    return train, test


@dataclass(frozen=True)
class Datasets:
    """The train and test splits and their origin: torchvision's datasets, or `Split` arrays where torch is missing."""

    name: str  # "mnist" or "synthetic"
    source: str  # where the data came from, for humans and metadata
    train: Any
    test: Any

    @property
    def label(self) -> str:
        return f"{SYNTHETIC} ({self.source}; {SYNTHETIC_LABEL})" if self.name == SYNTHETIC else f"mnist ({self.source})"

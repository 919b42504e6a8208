"""Grain (the JAX ecosystem's data loader) over the same MNIST arrays, in the tutorial's order.

`make_loader` gives Grain's ``MapDataset`` over a random-access source of the split: records are
``(image (784,) float32 unscaled, label)`` exactly as the tutorial's ``FlattenAndCast`` makes them, batched
in order (no shuffling, the last batch smaller), so an epoch over it computes the same parameters as the
``seed`` pipeline. Its workers (``worker_count``) are processes that Grain starts with ``spawn``: none is a
fork of the process that runs JAX. No torch here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np


class ArraySource:
    """Grain's random-access source over a split's arrays (picklable, for its worker processes)."""

    def __init__(self, images: np.ndarray, labels: np.ndarray):
        self.images = np.ascontiguousarray(images, dtype=np.float32).reshape(len(images), -1)
        self.labels = np.asarray(labels)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        return self.images[index], self.labels[index]


def _flags_parsed() -> None:
    """Grain reads absl flags when it starts workers; a program that never parsed them (any but an absl app)
    would fail there, so mark them parsed with their defaults."""
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


class PersistentWorkers:
    """Grain's worker processes kept across epochs (as torch's ``persistent_workers``): one ``mp_prefetch`` iterator
    over the batches repeated without end, read ``n_batches`` at a time; an epoch stopped early is finished (its
    remaining batches skipped) when the next one starts, so every epoch begins at batch 0."""

    def __init__(self, batches: Any, workers: int):  # batches: a grain MapDataset
        import grain.python as gp

        self.n_batches = len(batches)
        self._dataset = (
            batches.repeat(None).to_iter_dataset().mp_prefetch(gp.MultiprocessingOptions(num_workers=workers))
        )
        self._iterator: Iterator[tuple[np.ndarray, np.ndarray]] | None = None
        self._position = 0  # batches read so far, over all epochs

    def __len__(self) -> int:
        return self.n_batches

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if self._iterator is None:
            self._iterator = iter(self._dataset)  # starts the workers: once
        for _ in range(-self._position % self.n_batches):
            next(self._iterator)
            self._position += 1
        for _ in range(self.n_batches):
            batch = next(self._iterator)
            self._position += 1
            yield batch


def make_loader(
    images: np.ndarray, labels: np.ndarray, batch_size: int, workers: int = 0
) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """In-order batches ``(x (B, 784) float32, y (B,))`` of the split, the last one smaller: a ``MapDataset``
    batched at the source (batch j is records j*B .. j*B+B-1, whichever worker makes it), read in order;
    with ``workers``, that many spawned worker processes, started once and kept (`PersistentWorkers`)."""
    import grain.python as gp

    _flags_parsed()
    batches = gp.MapDataset.source(ArraySource(images, labels)).batch(batch_size, drop_remainder=False)
    return PersistentWorkers(batches, workers) if workers else batches.to_iter_dataset()

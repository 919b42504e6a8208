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

from jaxmlp.stops import STOPPING, deaf_to_ctrl_c, resource_tracker_started


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
        self.workers = workers
        self._dataset = (
            batches.repeat(None).to_iter_dataset().mp_prefetch(gp.MultiprocessingOptions(num_workers=workers))
        )
        self._iterator: Iterator[tuple[np.ndarray, np.ndarray]] | None = None
        self._ahead: list[tuple[np.ndarray, np.ndarray]] = []  # batches read while the workers started
        self._position = 0  # batches read so far, over all epochs

    def __len__(self) -> int:
        return self.n_batches

    def _start(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Grain's iterator, its workers deaf to stopping signals (`stops.deaf_to_ctrl_c`): Grain starts them from
        threads of its own, made here and so keeping the signals blocked, as the workers do (the command stops
        them). The first batch of each worker is read here too, so that a stopping signal waits until every worker
        has started: none is left with its start data (the dataset's arrays) half written, and none starts later."""
        resource_tracker_started()
        with deaf_to_ctrl_c(STOPPING):
            iterator: Iterator[tuple[np.ndarray, np.ndarray]] = iter(self._dataset)
            self._ahead = [next(iterator) for _ in range(self.workers)]  # batch j comes from worker j % workers
        return iterator

    def _next(self) -> tuple[np.ndarray, np.ndarray]:
        assert self._iterator is not None
        batch = self._ahead.pop(0) if self._ahead else next(self._iterator)
        self._position += 1
        return batch

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if self._iterator is None:
            self._iterator = self._start()  # once
        for _ in range(-self._position % self.n_batches):
            self._next()
        for _ in range(self.n_batches):
            yield self._next()


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

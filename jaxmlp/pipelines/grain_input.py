"""Grain over the same MNIST arrays in the tutorial's order, its workers spawned, never forked. No torch here."""

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
    """Grain's worker processes kept across epochs (torch's ``persistent_workers``); every epoch begins at batch 0."""

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
        """Grain's iterator, its workers deaf to stopping signals and each one's first batch read."""
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
    """In-order batches of the split, the last one smaller; ``workers`` spawned once and kept."""
    import grain.python as gp

    _flags_parsed()
    batches = gp.MapDataset.source(ArraySource(images, labels)).batch(batch_size, drop_remainder=False)
    return PersistentWorkers(batches, workers) if workers else batches.to_iter_dataset()

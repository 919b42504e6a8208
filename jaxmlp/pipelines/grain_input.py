"""Grain (the JAX ecosystem's data loader) over the same MNIST arrays, in the tutorial's order.

`make_loader` gives Grain's ``MapDataset`` over a random-access source of the split: records are
``(image (784,) float32 unscaled, label)`` exactly as the tutorial's ``FlattenAndCast`` makes them, batched
in order (no shuffling, the last batch smaller), so an epoch over it computes the same parameters as the
``seed`` pipeline. Its workers (``worker_count``) are processes that Grain starts with ``spawn``: none is a
fork of the process that runs JAX. No torch here.
"""

from __future__ import annotations

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


def make_loader(images: np.ndarray, labels: np.ndarray, batch_size: int, workers: int = 0):
    """In-order batches ``(x (B, 784) float32, y (B,))`` of the split, the last one smaller: a ``MapDataset``
    batched at the source (batch j is records j*B .. j*B+B-1, whichever worker makes it), read in order;
    with ``workers``, ``mp_prefetch`` spawns that many worker processes each epoch (0: in this process)."""
    import grain.python as gp

    _flags_parsed()
    batches = gp.MapDataset.source(ArraySource(images, labels)).batch(batch_size, drop_remainder=False)
    loader = batches.to_iter_dataset()
    if workers:
        loader = loader.mp_prefetch(gp.MultiprocessingOptions(num_workers=workers))
    return loader

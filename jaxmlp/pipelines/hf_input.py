"""Hugging Face ``datasets`` over the same MNIST arrays in the tutorial's order (``pip install 'jaxmlp[hf]'``)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


class ArrowBatches:
    """In-order batches ``(images (B, 784) float32, labels (B,))`` read from a ``datasets.Dataset``."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, batch_size: int):
        import datasets

        table = datasets.Dataset.from_dict({"image": np.asarray(images, np.float32), "label": np.asarray(labels)})
        self.table = table.with_format("numpy")
        self.batch_size = batch_size

    def __len__(self) -> int:
        return -(-len(self.table) // self.batch_size)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start in range(0, len(self.table), self.batch_size):
            batch = self.table[start : start + self.batch_size]
            yield batch["image"], batch["label"]


def make_loader(images: np.ndarray, labels: np.ndarray, batch_size: int) -> ArrowBatches:
    return ArrowBatches(images, labels, batch_size)
